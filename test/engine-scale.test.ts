import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { queueRuns } from '../src/domains/automations/runs.ts';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { newId } from '../src/ids.ts';
import { openServices, type Services } from '../src/services.ts';
import { testFixture } from './support/fixture.ts';
import { scratchDatabase, startWorker, type WorkerProcess } from './support/worker-processes.ts';

/**
 * Four `tandem worker` processes on one PostgreSQL database run runs by the thousand (built-in
 * writes, approvals decided while they run, delays, subflows) and a thousand schedules due at one
 * instant: every run ends, every write and every scheduled instant happens once — and again with
 * one of the workers killed in the middle.
 *
 * Each phase queues TANDEM_SCALE_RUNS runs (default 1,000, so 2,000 over both) and fires
 * TANDEM_SCALE_SCHEDULES schedules (default 1,000 each time). With 2,000 runs a phase the test
 * takes well over 90 s on a busy two-core machine, so the default halves them.
 */

const RUNS = Number(process.env.TANDEM_SCALE_RUNS ?? 1000);
const SCHEDULES = Number(process.env.TANDEM_SCALE_SCHEDULES ?? 1000);
const WORKERS = 4;
/** Approval runs whose number ends in 3 or 7 are rejected (their runs end cancelled). */
const rejects = (n: number) => n % 10 === 3 || n % 10 === 7;

type Json = Record<string, unknown>;
const lit = (value: unknown) => ({ kind: 'literal', value });
const trig = (path: string) => ({ kind: 'trigger', path });
const ref = (node: string, path: string) => ({ kind: 'ref', node, path });
const text = (id: string, template: string) => ({
  id,
  kind: 'transform',
  op: 'template',
  input: { n: trig('n') },
  args: { template },
});
const post = (id: string, from: string) => ({
  id,
  kind: 'capability',
  capability: 'conversations.post_message',
  input: { text: ref(from, 'text') },
});
const chain = (...ids: string[]) => ids.slice(1).map((to, i) => ({ from: ids[i], to }));
const plan = (name: string, nodes: Json[], edges: Json[]) => ({
  planVersion: 1,
  name,
  description: `${name}.`,
  nodes,
  edges,
});

/** Writes: a message, a document, a delay, another message. */
const writesPlan = plan(
  'Scale writes',
  [
    text('t1', 'A {{n}} first'),
    post('p1', 't1'),
    text('title', 'A {{n}}'),
    {
      id: 'doc',
      kind: 'capability',
      capability: 'documents.create_document',
      input: { title: ref('title', 'text'), content_markdown: lit('Made by a run.\n') },
    },
    { id: 'wait', kind: 'delay', seconds: 1 },
    text('t2', 'A {{n}} second'),
    post('p2', 't2'),
  ],
  chain('t1', 'p1', 'title', 'doc', 'wait', 't2', 'p2'),
);

/** An approval, then a message once it is approved. */
const approvalPlan = plan(
  'Scale approvals',
  [
    text('ask', 'Approve {{n}}?'),
    { id: 'ok', kind: 'approval', message: ref('ask', 'text') },
    text('t', 'B {{n}} approved'),
    post('p', 't'),
  ],
  chain('ask', 'ok', 't', 'p'),
);

/** The subflow target: one message. */
const childPlan = plan('Scale child', [text('t', 'child {{n}}'), post('p', 't')], chain('t', 'p'));

/** A message, a subflow run of the child, a message. */
const subflowPlan = (childId: string) =>
  plan(
    'Scale subflows',
    [
      text('t1', 'C {{n}} before'),
      post('p1', 't1'),
      { id: 'sub', kind: 'subflow', automation_id: childId, input: { n: trig('n') } },
      text('t2', 'C {{n}} after'),
      post('p2', 't2'),
    ],
    chain('t1', 'p1', 'sub', 't2', 'p2'),
  );

/** What a schedule runs: one message naming the instant it was due. */
const tickPlan = plan(
  'Scale tick',
  [
    {
      id: 't',
      kind: 'transform',
      op: 'template',
      input: { at: trig('scheduled_for') },
      args: { template: 'tick {{at}}' },
    },
    post('p', 't'),
  ],
  chain('t', 'p'),
);

const skip = process.env.TANDEM_TEST_POSTGRES === 'skip' ? 'Postgres is skipped' : false;
const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));

describe('four workers on one Postgres run thousands of runs and schedules once each', { skip }, () => {
  let database: Awaited<ReturnType<typeof scratchDatabase>> | undefined;
  let dir: string;
  let services: Services;
  let ada: Actor;
  const workers: WorkerProcess[] = [];
  const automations = { writes: '', approvals: '', subflows: '', child: '' };
  const ticks: string[] = [];
  const kinds = ['writes', 'approvals', 'subflows'] as const;
  const kindOf = (n: number) => kinds[n % kinds.length]!;

  before(async () => {
    database = await scratchDatabase('tandem_scale');
    dir = mkdtempSync(join(tmpdir(), 'tandem-scale-'));
    services = await openServices({ databaseUrl: database.url, poolSize: 6 });
    const { workspaces } = await importFixture(services.deps, testFixture);
    const acme = workspaces.Acme!;
    ada = { personId: acme.users['ada@acme.test']!, workspaceId: acme.id, scopes: new Set(SCOPES) };
    const never = { kind: 'connector_event', provider: 'workspace', event: 'page.written' };
    const publish = async (planJson: Json, trigger: Json, writeApproval = 'automatic') => {
      const draft = await services.automations.draft(ada, {
        plan_json: planJson,
        ask: `Do ${String(planJson.name)}.`,
        // Plans write without asking ('automatic'); the one with an approval step is 'required'.
        write_approval: writeApproval,
      });
      return services.automations.publish(ada, {
        flow_version_id: draft.flow_version_id,
        name: String(planJson.name),
        trigger,
      });
    };
    automations.child = (await publish(childPlan, never)).automation_id;
    automations.writes = (await publish(writesPlan, never)).automation_id;
    automations.approvals = (await publish(approvalPlan, never, 'required')).automation_id;
    automations.subflows = (await publish(subflowPlan(automations.child), never)).automation_id;

    // One schedule published, the rest copies of it (each automation owns a flow of its own; they
    // share its session). It is weekly, four days from today, so after firing none comes due again.
    const weekday = ((new Date().getUTCDay() + 3) % 7) + 1;
    const tick = await publish(tickPlan, {
      kind: 'schedule',
      frequency: 'weekly',
      weekday,
      hour: 4,
      minute: 0,
      timezone: 'UTC',
    });
    const db = services.deps.db;
    const row = await db
      .selectFrom('automations')
      .selectAll()
      .where('id', '=', tick.automation_id)
      .executeTakeFirstOrThrow();
    const flow = await db
      .selectFrom('flows')
      .selectAll()
      .where('id', '=', row.flow_id)
      .executeTakeFirstOrThrow();
    ticks.push(row.id);
    const copies = Array.from({ length: SCHEDULES - 1 }, (_, i) => ({
      ...row,
      id: newId('aut'),
      flow_id: newId('flw'),
      name: `${row.name} ${i + 2}`,
    }));
    for (let i = 0; i < copies.length; i += 250) {
      const batch = copies.slice(i, i + 250);
      await db.transaction().execute(async (trx) => {
        await trx
          .insertInto('flows')
          .values(batch.map((a) => ({ ...flow, id: a.flow_id, automation_id: a.id })))
          .execute();
        await trx.insertInto('automations').values(batch).execute();
      });
      ticks.push(...batch.map((a) => a.id));
    }

    // A killed worker's runs are taken over once its 2 s lease has run out.
    const url = database.url;
    const started = await Promise.allSettled(
      Array.from({ length: WORKERS }, () => startWorker(url, dir, { TANDEM_RUN_LEASE_S: '2' })),
    );
    for (const s of started) if (s.status === 'fulfilled') workers.push(s.value);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
  });

  after(async () => {
    await Promise.all(workers.map((w) => w.kill()));
    await services?.close();
    await database?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /**
   * Queues runs numbered `from` … `from + count - 1`, spread over the three automations, by four
   * callers at once. Each run's payload carries its number, so every write it makes has a text of
   * its own (a manual run's payload is always the same).
   */
  async function queue(from: number, count: number): Promise<Map<number, string>> {
    const db = services.deps.db;
    const rows = new Map(
      await Promise.all(
        Object.entries(automations).map(
          async ([k, id]) =>
            [
              k,
              await db.selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
            ] as const,
        ),
      ),
    );
    const ids = new Map<number, string>();
    const numbers = Array.from({ length: count }, (_, i) => from + i);
    const batches: number[][] = [];
    for (let i = 0; i < numbers.length; i += 50) batches.push(numbers.slice(i, i + 50));
    const caller = async () => {
      for (let batch = batches.shift(); batch; batch = batches.shift()) {
        const queued = await db.transaction().execute((trx) =>
          queueRuns(
            trx,
            batch.map((n) => {
              const automation = rows.get(kindOf(n))!;
              return {
                automation,
                versionId: automation.live_version_id,
                cause: 'manual' as const,
                dryRun: false,
                payload: { n },
                requestedBy: ada.personId,
              };
            }),
          ),
        );
        batch.forEach((n, i) => ids.set(n, queued[i]!));
      }
    };
    await Promise.all([caller(), caller(), caller(), caller()]);
    return ids;
  }

  /** Decides waiting approvals as they appear (approving most) until `stop` is set. */
  async function decide(stop: { done: boolean }): Promise<number> {
    const db = services.deps.db;
    let decided = 0;
    while (!stop.done) {
      const pending = await db
        .selectFrom('approvals')
        .select(['id', 'message'])
        .where('status', '=', 'pending')
        .limit(200)
        .execute();
      if (pending.length === 0) {
        await sleep(100);
        continue;
      }
      const work = [...pending];
      const decider = async () => {
        for (let a = work.shift(); a; a = work.shift()) {
          const n = Number(/Approve (\d+)\?/.exec(a.message)![1]);
          await services.automations.decideApproval(ada, a.id, {
            decision: rejects(n) ? 'reject' : 'approve',
          });
          decided += 1;
        }
      };
      await Promise.all([decider(), decider(), decider()]);
    }
    return decided;
  }

  const unfinished = async () =>
    Number(
      (
        await services.deps.db
          .selectFrom('runs')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('status', 'not in', ['succeeded', 'failed', 'cancelled'])
          .executeTakeFirstOrThrow()
      ).n,
    );
  const total = async () =>
    Number(
      (
        await services.deps.db
          .selectFrom('runs')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  /**
   * One batch: the schedules made due together a moment ahead, runs queued, approvals decided as
   * they come, until every run has ended; then every figure checked. `during` runs meanwhile
   * (phase 2 kills a worker there), told how many of the batch's runs have ended.
   */
  async function phase(
    label: string,
    from: number,
    firings: number,
    during?: (ended: () => Promise<number>, stop: { done: boolean }) => Promise<void>,
  ) {
    const db = services.deps.db;
    const runsBefore = await total();
    const started = Date.now();
    const dueAt = started + 3_000;
    await db.updateTable('automations').set({ next_fire_at: dueAt }).where('id', 'in', ticks).execute();
    const stop = { done: false };
    const deciding = decide(stop);
    let watching: Promise<void> | undefined;
    let ids: Map<number, string>;
    let ran: number;
    try {
      ids = await queue(from, RUNS);
      const children = [...ids.keys()].filter((n) => kindOf(n) === 'subflows').length;
      ran = RUNS + children + SCHEDULES;
      const ended = async () => (await total()) - runsBefore - (await unfinished());
      watching = during?.(ended, stop);
      // The test's own time limit (120 s in CI) comes first; this one says what was left.
      const deadline = started + 115_000;
      while ((await unfinished()) > 0 || (await total()) < runsBefore + ran) {
        const dead = workers.find((w) => w.child.exitCode !== null && !w.child.killed);
        assert.ok(!dead, `a worker stopped: ${dead?.stderr()}`);
        assert.ok(
          Date.now() < deadline,
          `${await unfinished()} runs unfinished, ${(await total()) - runsBefore} of ${ran} queued\n${workers.map((w) => w.stderr()).join('\n')}`,
        );
        await sleep(200);
      }
      const seconds = (Date.now() - started) / 1000;
      stop.done = true;
      const decided = await deciding;
      await watching;
      console.log(
        `engine-scale ${label}: ${ran} runs (${RUNS} queued, ${children} subflow children, ${SCHEDULES} scheduled; ${decided} approvals decided) on ${WORKERS} workers in ${seconds.toFixed(1)} s = ${(ran / seconds).toFixed(0)} runs/s`,
      );
    } finally {
      stop.done = true;
      await Promise.allSettled([deciding, watching]);
    }
    await check(ids, dueAt, firings);
  }

  async function check(ids: Map<number, string>, dueAt: number, firings: number) {
    const db = services.deps.db;
    const runs = new Map(
      (await db.selectFrom('runs').select(['id', 'status', 'error', 'parent_run_id']).execute()).map((r) => [
        r.id,
        r,
      ]),
    );
    const byParent = new Map<string, string[]>();
    for (const r of runs.values())
      if (r.parent_run_id) byParent.set(r.parent_run_id, [...(byParent.get(r.parent_run_id) ?? []), r.id]);
    const failed = [...runs.values()].filter((r) => r.status === 'failed');
    assert.deepEqual(failed, [], 'no run failed');

    const messages = new Map<string, number>();
    for (const m of await db.selectFrom('messages').select('body').execute())
      messages.set(m.body, (messages.get(m.body) ?? 0) + 1);
    const documents = new Map<string, number>();
    for (const d of await db.selectFrom('artifacts').select('title').where('title', 'like', 'A %').execute())
      documents.set(d.title, (documents.get(d.title) ?? 0) + 1);
    const once = (body: string) => assert.equal(messages.get(body) ?? 0, 1, `"${body}" posted once`);
    const never = (body: string) => assert.equal(messages.get(body) ?? 0, 0, `"${body}" never posted`);

    for (const [n, runId] of ids) {
      const run = runs.get(runId)!;
      const kind = kindOf(n);
      if (kind === 'approvals' && rejects(n)) {
        assert.equal(run.status, 'cancelled', `run ${n} (rejected) ${JSON.stringify(run)}`);
        never(`B ${n} approved`);
        continue;
      }
      assert.equal(run.status, 'succeeded', `run ${n} ${JSON.stringify(run)}`);
      if (kind === 'writes') {
        once(`A ${n} first`);
        once(`A ${n} second`);
        assert.equal(documents.get(`A ${n}`) ?? 0, 1, `document "A ${n}" made once`);
      } else if (kind === 'approvals') once(`B ${n} approved`);
      else {
        once(`C ${n} before`);
        once(`C ${n} after`);
        once(`child ${n}`);
        const children = byParent.get(runId) ?? [];
        assert.equal(children.length, 1, `run ${n} started one subflow run`);
        assert.equal(runs.get(children[0]!)?.status, 'succeeded');
      }
    }
    const pending = await db.selectFrom('approvals').select('id').where('status', '=', 'pending').execute();
    assert.deepEqual(pending, [], 'every approval decided');
    const jobs = await db.selectFrom('jobs').selectAll().execute();
    assert.deepEqual(jobs, [], 'no jobs row left');

    const fired = new Map<string, number>();
    for (const r of await db
      .selectFrom('runs')
      .select(['automation_id', 'status'])
      .where('cause', '=', 'schedule')
      .execute()) {
      assert.equal(r.status, 'succeeded');
      assert.ok(r.automation_id);
      fired.set(r.automation_id, (fired.get(r.automation_id) ?? 0) + 1);
    }
    assert.equal(fired.size, SCHEDULES, 'every schedule fired');
    for (const id of ticks) assert.equal(fired.get(id), firings, `schedule ${id} fired ${firings} time(s)`);
    assert.equal(
      messages.get(`tick ${new Date(dueAt).toISOString()}`),
      SCHEDULES,
      'one tick message per schedule',
    );
  }

  it('runs every run, write and scheduled instant once with four workers', async () => {
    await phase('phase 1 (four workers)', 0, 1);
  });

  it('does the same when one of the four is killed in the middle', async () => {
    const victim = workers[0]!;
    await phase('phase 2 (one worker SIGKILLed)', RUNS, 2, async (ended, stop) => {
      // Once a third of the batch has ended, the first worker is killed while it holds runs.
      while (!stop.done && (await ended()) < (RUNS + SCHEDULES) / 3) await sleep(100);
      while (!stop.done) {
        const held = await services.deps.db
          .selectFrom('jobs')
          .select('run_id')
          .where('locked_by', '=', victim.id)
          .execute();
        if (held.length > 0) {
          await victim.kill();
          console.log(`engine-scale phase 2: killed worker ${victim.id} while it held ${held.length} run(s)`);
          return;
        }
        await sleep(10);
      }
      assert.fail('the batch ended before the worker could be killed');
    });
    assert.ok(victim.child.signalCode === 'SIGKILL', 'the worker was killed');
  });
});
