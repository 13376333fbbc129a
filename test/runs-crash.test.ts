import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { queueRun } from '../src/domains/automations/runs.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices, type Services } from '../src/services.ts';
import { testFixture } from './support/fixture.ts';
import { startWorker } from './support/worker-processes.ts';

const RUNS = 6;
const ITEMS = 3;

/** Each run posts four messages in a chain, one per map item, and one outside call. */
function plan(hookUrl: string) {
  const post = (id: string, text: string) => ({
    id,
    kind: 'capability',
    capability: 'conversations.post_message',
    input: { text: { kind: 'literal', value: text } },
  });
  const text = (id: string, template: string) => ({
    id,
    kind: 'transform',
    op: 'template',
    input: { n: { kind: 'trigger', path: 'n' } },
    args: { template },
  });
  const posted = (id: string, from: string) => ({
    id,
    kind: 'capability',
    capability: 'conversations.post_message',
    input: { text: { kind: 'ref', node: from, path: 'text' } },
  });
  return {
    planVersion: 1,
    name: 'Crash course',
    description: 'Writes that must happen once each, even when the worker is killed.',
    nodes: [
      text('t1', 'run {{n}} step 1'),
      posted('p1', 't1'),
      text('t2', 'run {{n}} step 2'),
      posted('p2', 't2'),
      text('t3', 'run {{n}} step 3'),
      posted('p3', 't3'),
      {
        id: 'each',
        kind: 'map',
        items: { kind: 'literal', value: Array.from({ length: ITEMS }, (_, i) => i) },
        concurrency: 2,
        result: 'pi',
        body: {
          nodes: [
            {
              id: 'ti',
              kind: 'transform',
              op: 'template',
              input: { i: { kind: 'trigger', path: 'item' } },
              args: { template: 'item {{i}}' },
            },
            posted('pi', 'ti'),
          ],
          edges: [{ from: 'ti', to: 'pi' }],
        },
      },
      {
        id: 'call',
        kind: 'capability',
        capability: 'http.post',
        input: { url: { kind: 'literal', value: hookUrl }, json: { kind: 'trigger', path: '' } },
      },
      post('done', 'finished'),
    ],
    edges: [
      { from: 't1', to: 'p1' },
      { from: 'p1', to: 't2' },
      { from: 't2', to: 'p2' },
      { from: 'p2', to: 't3' },
      { from: 't3', to: 'p3' },
      { from: 'p3', to: 'each' },
      { from: 'each', to: 'call' },
      { from: 'call', to: 'done' },
    ],
  };
}

describe('runs survive a worker killed with SIGKILL at any point', () => {
  let dir: string;
  let services: Services;
  let hook: Server;
  let hookUrl: string;
  const calls: string[] = [];
  const runIds: string[] = [];
  let sessionId: string;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-crash-'));
    hook = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString()));
      req.on('end', () => {
        calls.push(body);
        // A slow answer widens the window in which a kill lands mid-call.
        setTimeout(() => res.end('ok'), 60);
      });
    });
    await new Promise<void>((done) => hook.listen(0, '127.0.0.1', done));
    const { port } = hook.address() as { port: number };
    hookUrl = `http://127.0.0.1:${port}/hook`;

    services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
    const { workspaces } = await importFixture(services.deps, testFixture);
    const acme = workspaces.Acme!;
    const ada = { personId: acme.users['ada@acme.test']!, workspaceId: acme.id, scopes: new Set<never>() };
    const draft = await services.automations.draft(ada, {
      plan_json: plan(hookUrl),
      ask: 'Post a few messages and call a hook.',
      write_approval: 'automatic',
    });
    const published = await services.automations.publish(ada, {
      flow_version_id: draft.flow_version_id,
      name: 'Crash course',
      trigger: { kind: 'connector_event', provider: 'workspace', event: 'page.written' },
    });
    sessionId = published.session_id;
    const automation = await services.deps.db
      .selectFrom('automations')
      .selectAll()
      .where('id', '=', published.automation_id)
      .executeTakeFirstOrThrow();
    await services.deps.db.transaction().execute(async (trx) => {
      for (let n = 0; n < RUNS; n++) {
        runIds.push(
          await queueRun(trx, {
            automation,
            versionId: automation.live_version_id,
            cause: 'manual',
            dryRun: false,
            payload: { n },
          }),
        );
      }
    });
  });

  after(async () => {
    await services?.close();
    await new Promise((done) => hook?.close(done));
    rmSync(dir, { recursive: true, force: true });
  });

  const worker = () =>
    startWorker(undefined, dir, {
      // Everything it logs, as a worker started without LOG_LEVEL would.
      LOG_LEVEL: 'info',
      TANDEM_RUN_LEASE_S: '2',
      TANDEM_RUN_CRASHES: '20',
      TANDEM_HTTP_ALLOW: new URL(hookUrl).host,
    });

  const statuses = async () =>
    services.deps.db.selectFrom('runs').select(['id', 'status', 'error']).where('id', 'in', runIds).execute();

  it('finishes every run with each built-in write done once and the outside call at most once', async () => {
    const progress: number[] = [];
    const stored = async () =>
      (
        await services.deps.db
          .selectFrom('run_nodes')
          .select('node_key')
          .where('run_id', 'in', runIds)
          .execute()
      ).length;
    // Kill the worker several times at moments spread over the work, then let one finish it. Each
    // worker first gets some work done. On a busy machine one run can still be held by several of
    // the killed workers before any of its steps ends; the crash guard would fail it, which is not
    // what this test is about, so the workers here allow more deaths (TANDEM_RUN_CRASHES).
    for (const delay of [40, 90, 15, 140, 60, 110, 25, 80]) {
      const { child, kill } = await worker();
      const before = await stored();
      const started = Date.now();
      while ((await stored()) === before && Date.now() - started < 5_000 && child.exitCode === null)
        await new Promise((done) => setTimeout(done, 5));
      await new Promise((done) => setTimeout(done, delay));
      await kill();
      progress.push(await stored());
    }
    const last = await worker();
    try {
      const deadline = Date.now() + 60_000;
      for (;;) {
        const rows = await statuses();
        if (rows.every((r) => ['succeeded', 'failed', 'cancelled'].includes(r.status))) break;
        assert.ok(
          Date.now() < deadline,
          `runs still not finished: ${JSON.stringify(rows)}\n${last.stderr()}`,
        );
        await new Promise((done) => setTimeout(done, 200));
      }
    } finally {
      await last.kill();
    }

    // The kills landed while the work was under way: some was done at a kill, but not all of it.
    const total = (
      await services.deps.db
        .selectFrom('run_nodes')
        .select('node_key')
        .where('run_id', 'in', runIds)
        .execute()
    ).length;
    assert.ok(
      progress.filter((n) => n > 0 && n < total).length >= 2,
      `the kills missed the work: ${JSON.stringify(progress)} of ${total}`,
    );
    const rows = await statuses();
    for (const row of rows) {
      // The only failure allowed is an outside call cut off mid-way, which must not be repeated.
      if (row.status !== 'succeeded') {
        assert.equal(row.status, 'failed', JSON.stringify(row));
        assert.match(row.error ?? '', /^call: outcome unknown/, JSON.stringify(row));
      }
    }
    const messages = await services.deps.db
      .selectFrom('messages')
      .select('body')
      .where('conversation_id', '=', sessionId)
      .execute();
    const count = (body: string) => messages.filter((m) => m.body === body).length;
    for (let n = 0; n < RUNS; n++) {
      for (const step of [1, 2, 3]) assert.equal(count(`run ${n} step ${step}`), 1, `run ${n} step ${step}`);
      const payloads = calls.filter((c) => JSON.parse(c).n === n);
      assert.ok(payloads.length <= 1, `run ${n} called the outside service ${payloads.length} times`);
      const run = rows.find((r) => r.id === runIds[n]);
      if (run?.status === 'succeeded')
        assert.equal(payloads.length, 1, `run ${n} succeeded without its call`);
    }
    for (let i = 0; i < ITEMS; i++) assert.equal(count(`item ${i}`), RUNS, `item ${i} posted once per run`);
    assert.equal(count('finished'), rows.filter((r) => r.status === 'succeeded').length);
    const leftover = await services.deps.db
      .selectFrom('jobs')
      .select('run_id')
      .where('run_id', 'in', runIds)
      .execute();
    assert.deepEqual(leftover, [], 'no finished run keeps a job');
  });
});
