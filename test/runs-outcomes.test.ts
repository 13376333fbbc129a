import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices, type Services } from '../src/services.ts';
import { createEngine, type Engine, type EngineOptions } from '../src/engine/engine.ts';
import { StepError } from '../src/errors.ts';
import { DATABASES } from './support/databases.ts';
import { testFixture } from './support/fixture.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok } from './support/results.ts';
import {
  approval,
  automationHelpers,
  capability,
  chain,
  lit,
  plan,
  ref,
  transform,
  type Json,
  type ConnectorCall,
  STAND_IN_ISSUE,
} from './support/automations.ts';

const ROOT = resolve(import.meta.dirname, '..');

const getIssue = (id: string, extra: Json = {}) =>
  capability(id, 'github.get_issue', { repo: lit('acme/app'), number: lit(7) }, extra);

for (const db of DATABASES) {
  describe(`how runs end on ${db.name}`, () => {
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    /** What the stand-ins of the GitHub connector do in the current test. */
    const github: { get_issue?: ConnectorCall; create_issue?: ConnectorCall } = {};
    const engines: Engine[] = [];

    const t = automationHelpers(
      () => h,
      () => engine,
    );
    const { publish, run, readRun, runToEnd, statuses, nodeOf, nodeRows, runRow, jobRow, runsOf } = t;
    const database = () => h.services.deps.db;

    /** An engine of its own (stopped after the suite), with the GitHub stand-ins. */
    function engineWith(options: EngineOptions = {}): Engine {
      const made = createEngine(h.services, {
        leaseMs: 5000,
        connectorCalls: {
          'github.get_issue': (input, ctx) => (github.get_issue ?? (async () => STAND_IN_ISSUE))(input, ctx),
          'github.create_issue': (input, ctx) =>
            (github.create_issue ?? (async () => ({ number: 8, url: 'https://example.test/8' })))(input, ctx),
        },
        ...options,
      });
      engines.push(made);
      return made;
    }

    before(async () => {
      h = await setup(db);
      engine = engineWith();
      ada = await h.as('ada@acme.test');
    });

    after(async () => {
      for (const e of engines) await e.stop();
      await h.close();
    });

    describe('pausing', () => {
      it('holds every next step of a running run, reads and transforms too, until enabled', async () => {
        const a = await publish(
          ada,
          plan(
            'Pause mid-run',
            [
              getIssue('gate'),
              capability('read', 'documents.read_document', { document_id: lit(acme(h).artifacts.roadmap) }),
              transform('shape', 'template', { t: ref('read', 'title') }, { template: 'Read {{t}}' }),
            ],
            chain('gate', 'read', 'shape'),
          ),
        );
        github.get_issue = async () => {
          await t.setEnabled(ada, a, false);
          return STAND_IN_ISSUE;
        };
        try {
          const runId = await run(ada, a);
          await engine.drain();
          let r = await readRun(ada, a, runId);
          assert.equal(r.status, 'waiting');
          assert.deepEqual(statuses(r), { gate: 'succeeded' });
          assert.equal(await jobRow(runId), undefined, 'nothing wakes it but enabling');
          github.get_issue = undefined;
          await t.setEnabled(ada, a, true);
          await engine.drain();
          r = await readRun(ada, a, runId);
          assert.equal(r.status, 'succeeded');
          assert.deepEqual(r.output, { shape: { text: 'Read Roadmap' } });
        } finally {
          github.get_issue = undefined;
        }
      });

      it('ends a queued or running dry run as cancelled, and a recreated job never starts it again', async () => {
        const p = plan(
          'Dry pause',
          [getIssue('gate'), transform('after', 'coalesce', { v: ref('gate', 'title') })],
          chain('gate', 'after'),
        );
        const a = await publish(ada, p);
        const queued = await run(ada, a, true);
        await t.setEnabled(ada, a, false);
        let row = await runRow(queued);
        assert.deepEqual([row.status, row.error], ['cancelled', 'cancelled: the automation was paused']);
        assert.equal(await jobRow(queued), undefined);

        await t.setEnabled(ada, a, true);
        github.get_issue = async () => {
          await t.setEnabled(ada, a, false);
          return STAND_IN_ISSUE;
        };
        let running: string;
        try {
          running = await run(ada, a, true);
          await engine.drain();
        } finally {
          github.get_issue = undefined;
        }
        row = await runRow(running);
        assert.equal(row.status, 'cancelled');
        assert.equal(await jobRow(running), undefined);
        const r = await readRun(ada, a, running);
        assert.equal(
          r.nodes.some((n) => n.node_id === 'after'),
          false,
        );

        // Whatever makes the job again, a cancelled run stays as it ended.
        const before = await nodeRows(running);
        const now = Date.now();
        await database()
          .insertInto('jobs')
          .values({
            run_id: running,
            available_at: now,
            locked_by: null,
            locked_until: null,
            created_at: now,
            claims: 0,
          })
          .execute();
        await database()
          .insertInto('jobs')
          .values({
            run_id: queued,
            available_at: now,
            locked_by: null,
            locked_until: null,
            created_at: now,
            claims: 0,
          })
          .execute();
        await t.setEnabled(ada, a, true);
        await engine.drain();
        for (const id of [running, queued]) {
          assert.equal((await runRow(id)).status, 'cancelled');
          assert.equal(await jobRow(id), undefined);
        }
        assert.deepEqual(await nodeRows(running), before);
        assert.deepEqual(await nodeRows(queued), []);
      });
    });

    it('stores nothing from a worker that lost its run to another', async () => {
      const a = await publish(
        ada,
        plan(
          'Lost lease',
          [getIssue('call'), transform('after', 'coalesce', { v: ref('call', 'title') })],
          chain('call', 'after'),
        ),
      );
      let calls = 0;
      github.get_issue = async () => {
        calls += 1;
        if (calls === 1) {
          // Another worker took the run over while this call was out.
          await database()
            .updateTable('jobs')
            .set({ locked_by: 'wrk_other', locked_until: Date.now() + 60_000 })
            .where('locked_by', '=', engine.workerId)
            .execute();
        }
        return STAND_IN_ISSUE;
      };
      try {
        const runId = await run(ada, a);
        await engine.drain();
        const rows = await nodeRows(runId);
        assert.deepEqual(
          rows.map((r) => [r.node_key, r.status, r.output_json]),
          [['call', 'running', null]],
          'the step’s result was not stored, and the step after it did not run',
        );
        assert.equal((await jobRow(runId))?.locked_by, 'wrk_other');
        assert.equal((await runRow(runId)).status, 'running');

        // The other worker's lease runs out: a worker takes the run over and finishes it.
        await database()
          .updateTable('jobs')
          .set({ locked_until: Date.now() - 1 })
          .where('run_id', '=', runId)
          .execute();
        await engine.drain();
        const r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded');
        assert.deepEqual(r.output, { after: { value: 'Flaky' } });
        assert.equal(calls, 2);
      } finally {
        github.get_issue = undefined;
      }
    });

    describe('typed outcomes', () => {
      it('fails, not cancels, a run whose step error merely starts with “rejected”', async () => {
        github.get_issue = async () => {
          throw new StepError('rejected by the issue tracker: token expired');
        };
        try {
          const a = await publish(ada, plan('Rejected text', [getIssue('call')]));
          const r = await runToEnd(ada, a);
          assert.equal(r.status, 'failed');
          assert.equal(r.error, 'call: rejected by the issue tracker: token expired');
          assert.equal((await t.automationRow(a.automation_id)).consecutive_failures, 1);
        } finally {
          github.get_issue = undefined;
        }
      });

      it('cancels a run whose approval is rejected', async () => {
        const a = await publish(
          ada,
          plan('Ask first', [approval('ok'), transform('after', 'now', {})], chain('ok', 'after')),
        );
        const runId = await run(ada, a);
        await engine.drain();
        const card = await t.pendingCard(a.session_id);
        await h.services.automations.decideApproval(h.actor('ada@acme.test'), card.approval_id, {
          decision: 'reject',
          note: 'not now',
        });
        await engine.drain();
        const r = await readRun(ada, a, runId);
        assert.equal(r.status, 'cancelled');
        assert.equal(r.error, 'rejected by Ada Lovelace: not now');
        assert.equal((await t.automationRow(a.automation_id)).consecutive_failures, 0);
      });

      it('retries a connector error that only reads like “outcome unknown”', async () => {
        let calls = 0;
        github.get_issue = async () => {
          calls += 1;
          if (calls < 3)
            throw new StepError('outcome unknown: the tracker answered 502', { retryable: true });
          return STAND_IN_ISSUE;
        };
        try {
          const a = await publish(
            ada,
            plan('Flaky tracker', [getIssue('call', { retry: { max_attempts: 3, backoff_s: 0 } })]),
          );
          const r = await runToEnd(ada, a);
          assert.equal(r.status, 'succeeded');
          assert.deepEqual(nodeOf(r, 'call'), { node_id: 'call', status: 'succeeded', attempt: 3 });
          assert.equal(calls, 3);
        } finally {
          github.get_issue = undefined;
        }
      });

      it('does not repeat an outside write that was cut off, whatever its retry policy', async () => {
        const quick = engineWith({ limits: { nodeWallMs: 300 } });
        let calls = 0;
        github.create_issue = (_input, ctx) => {
          calls += 1;
          // The call goes out and never comes back: its outcome is unknown.
          return new Promise((_resolve, reject) =>
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))),
          );
        };
        try {
          const a = await publish(
            ada,
            plan('File once', [
              capability(
                'file',
                'github.create_issue',
                { repo: lit('acme/app'), title: lit('Once') },
                { retry: { max_attempts: 3, backoff_s: 0 } },
              ),
            ]),
            { write_approval: 'automatic' },
          );
          const runId = await run(ada, a);
          await quick.drain();
          const r = await readRun(ada, a, runId);
          assert.equal(r.status, 'failed');
          assert.match(
            nodeOf(r, 'file').error ?? '',
            /^outcome unknown: the call to github.create_issue was interrupted/,
          );
          assert.equal(calls, 1, 'the write went out once');
        } finally {
          github.create_issue = undefined;
        }
      });
    });

    it('counts every failed run in consecutive_failures when several end together', async () => {
      const a = await publish(
        ada,
        plan('Always fails', [
          capability('read', 'documents.read_document', { document_id: lit('doc_gone') }),
        ]),
      );
      const second = engineWith();
      for (let i = 0; i < 6; i++) await run(ada, a);
      await Promise.all([engine.drain(), second.drain()]);
      const runs = await runsOf(a.automation_id);
      assert.deepEqual(
        runs.map((r) => r.status),
        Array(6).fill('failed'),
      );
      const read = ok(await ada.call('read_automation', { automation_id: a.automation_id }));
      assert.equal(read.consecutive_failures, 6);
    });
  });
}

describe('a run whose worker keeps dying', () => {
  let dir: string;
  let services: Services;
  let server: Server;
  let host: string;
  const requests: string[] = [];
  const children = new Set<ChildProcess>();

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-crashes-'));
    // Takes every request and never answers it: the step holding the run never ends.
    server = createServer((req) => requests.push(req.url ?? ''));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
  });

  after(async () => {
    for (const child of children) child.kill('SIGKILL');
    await services?.close();
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  const worker = () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'tandem.js'), 'worker'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        TANDEM_DATA: dir,
        TANDEM_RUN_LEASE_S: '2',
        TANDEM_HTTP_ALLOW: host,
      },
      stdio: 'ignore',
    });
    children.add(child);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    return {
      async kill() {
        child.kill('SIGKILL');
        await exited;
        children.delete(child);
      },
    };
  };

  async function until<T>(what: string, probe: () => Promise<T | undefined | false>): Promise<T> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = await probe();
      if (found) return found;
      assert.ok(Date.now() < deadline, `timed out waiting until ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('fails it as crashed repeatedly after three deaths, and no worker takes it up again', async () => {
    const { workspaces } = await importFixture(services.deps, testFixture);
    const acmeIds = workspaces.Acme!;
    const ada = {
      personId: acmeIds.users['ada@acme.test']!,
      workspaceId: acmeIds.id,
      scopes: new Set(SCOPES),
    };
    const draft = await services.automations.draft(ada, {
      plan_json: plan(
        'Hangs',
        [
          capability('hang', 'http.get', { url: lit(`http://${host}/hang`) }),
          transform('after', 'coalesce', { v: ref('hang', 'status') }),
        ],
        chain('hang', 'after'),
      ),
      ask: 'Fetch a page that never answers.',
    });
    const published = await services.automations.publish(ada, {
      flow_version_id: draft.flow_version_id,
      name: 'Hangs',
      trigger: { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' },
    });
    const { run_id: runId } = await services.automations.run(ada, { automation_id: published.automation_id });
    const db = services.deps.db;
    const job = () => db.selectFrom('jobs').selectAll().where('run_id', '=', runId).executeTakeFirst();

    for (let death = 1; death <= 3; death++) {
      const w = worker();
      // A worker claimed the run (again) and is inside the step that never ends.
      await until(`worker ${death} holds the run in its step`, async () => {
        const row = await job();
        return row?.claims === death && row.locked_by !== null && requests.length === death;
      });
      await w.kill();
    }
    const last = worker();
    try {
      const run = await until('the run ended', async () => {
        const row = await db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
        return row.status === 'failed' && row;
      });
      assert.match(run.error ?? '', /^crashed repeatedly: /);
      assert.equal(await job(), undefined, 'the run has no job left');
      assert.equal(requests.length, 3, 'the step was not started a fourth time');
      const nodes = await db.selectFrom('run_nodes').select('node_key').where('run_id', '=', runId).execute();
      assert.deepEqual(
        nodes.map((n) => n.node_key),
        ['hang'],
      );
    } finally {
      await last.kill();
    }
  });
});
