import assert from 'node:assert/strict';
import { after, before, describe, it, mock } from 'node:test';
import { log } from '../src/observability/log.ts';
import { queueRuns } from '../src/domains/automations/runs.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import type { Advancer } from '../src/engine/advance.ts';
import { runWorker } from '../src/engine/worker.ts';
import { DATABASES } from './support/databases.ts';
import { until } from './support/instances.ts';
import { setup, type Harness, type ToolCaller } from './support/harness.ts';
import {
  approval,
  automationHelpers,
  capability,
  chain,
  lit,
  plan,
  STAND_IN_ISSUE,
  transform,
} from './support/automations.ts';

const BACKLOG = 300;

for (const db of DATABASES.filter((d) => d.name === 'postgres')) {
  describe('graphile-worker dispatch on postgres', () => {
    let h: Harness;
    let engine: Engine | undefined;
    let ada: ToolCaller;
    const t = automationHelpers(
      () => h,
      () => engine as Engine,
    );

    before(async () => {
      h = await setup(db);
      ada = await h.as('ada@acme.test');
    });
    after(async () => {
      await engine?.stop();
      await h.close();
    });

    const finished = async (ids: string[]) =>
      (
        await h.services.deps.db
          .selectFrom('runs')
          .select('id')
          .where('id', 'in', ids)
          .where('status', '=', 'succeeded')
          .execute()
      ).length;

    /** An engine of `concurrency` slots whose GitHub steps wait until `release` is called. */
    function stalledEngine(concurrency: number): { busy: Engine; release: () => void } {
      let release = () => {};
      const stalled = new Promise<void>((resolve) => (release = resolve));
      const busy = createEngine(h.services, {
        concurrency,
        pollMs: 50,
        connectorCalls: {
          'github.get_issue': async () => {
            await stalled;
            return STAND_IN_ISSUE;
          },
        },
      });
      return { busy, release: () => release() };
    }

    it('keeps dispatching while another schema in the database installs its tables', async () => {
      engine = createEngine(h.services, { concurrency: 1, pollMs: 50 });
      await engine.start();
      // A fresh schema's install applies graphile-worker's breaking migrations; its notices reach
      // every worker listening on this database, which would stop and set the exit code.
      const other = await setup(db);
      await other.close();
      const quick = await t.publish(ada, plan('Quick', [transform('a', 'coalesce', { v: lit(1) })]));
      const runId = await t.run(ada, quick);
      await until(async () => (await t.runRow(runId)).status === 'succeeded', 'the run has ended', 10_000);
      assert.equal((await t.runRow(runId)).status, 'succeeded');
      assert.notEqual(process.exitCode, 57, 'a worker stopped for another schema’s install');
      await engine.stop();
    });

    it('hands a woken run out before a backlog of runs still to start', async () => {
      // A run waits for a decision while a backlog of new runs piles up behind no worker.
      const waiting = await t.publish(
        ada,
        plan(
          'Ask',
          [approval('ok'), transform('after', 'coalesce', { v: lit('done') })],
          chain('ok', 'after'),
        ),
      );
      engine = createEngine(h.services, { concurrency: 1, pollMs: 50 });
      await engine.start();
      const runId = await t.run(ada, waiting);
      await until(async () => (await t.runRow(runId)).status === 'waiting', 'the run waits', 5_000);
      assert.equal((await t.runRow(runId)).status, 'waiting');
      await engine.stop();

      const chainPlan = await t.publish(
        ada,
        plan(
          'Backlog',
          [transform('a', 'coalesce', { v: lit(1) }), transform('b', 'coalesce', { v: lit(2) })],
          chain('a', 'b'),
        ),
      );
      const automation = await t.automationRow(chainPlan.automation_id);
      const backlog = await h.services.deps.db.transaction().execute((trx) =>
        queueRuns(
          trx,
          Array.from({ length: BACKLOG }, () => ({
            automation,
            versionId: automation.live_version_id,
            cause: 'manual' as const,
            dryRun: false,
            payload: {},
          })),
        ),
      );
      const card = await t.pendingCard(waiting.session_id);
      await h.services.automations.decideApproval(h.actor('ada@acme.test'), card.approval_id, {
        decision: 'approve',
      });

      // One run at a time: the woken run goes first, not after the three hundred queued before it.
      engine = createEngine(h.services, { concurrency: 1, pollMs: 50 });
      await engine.start();
      await until(async () => (await t.runRow(runId)).status === 'succeeded', 'the run has ended', 10_000);
      assert.equal((await t.runRow(runId)).status, 'succeeded');
      const before = await finished(backlog);
      assert.ok(before < BACKLOG / 10, `${before} of the backlog ran before the woken run`);
      await until(async () => (await finished(backlog)) === BACKLOG, 'the backlog has run', 50_000);
      assert.equal(await finished(backlog), BACKLOG, 'the backlog runs afterwards');
    });

    it('hands a run to an idle worker, not one whose every slot is busy with a slow step', async () => {
      await engine?.stop();
      engine = undefined;
      const { busy, release } = stalledEngine(1);
      let idle: Engine | undefined;
      try {
        await busy.start();
        const slow = await t.publish(
          ada,
          plan('Slow', [capability('call', 'github.get_issue', { repo: lit('acme/app'), number: lit(7) })]),
        );
        const slowRun = await t.run(ada, slow);
        await until(
          async () => (await t.runRow(slowRun)).started_at != null,
          'the slow run has started',
          5_000,
        );
        // Queued while the only worker's one slot is taken; a second worker starts afterwards.
        const quick = await t.publish(ada, plan('Quick', [transform('a', 'coalesce', { v: lit(1) })]));
        const quickRun = await t.run(ada, quick);
        idle = createEngine(h.services, { concurrency: 1, pollMs: 50 });
        await idle.start();
        await until(
          async () => (await t.runRow(quickRun)).status === 'succeeded',
          'the quick run has ended',
          // A run held by the busy worker would wait for the sweep (6 s with the default lease).
          5_000,
        );
        assert.equal((await t.runRow(quickRun)).status, 'succeeded');
        const slowRow = await t.runRow(slowRun);
        assert.equal(slowRow.status, 'running', `the slow step is still under way: ${slowRow.error}`);
      } finally {
        release();
        await idle?.stop();
        await busy.stop();
      }
    });

    it('claims runs handed out together in one go, each once, and none another worker holds', async () => {
      await engine?.stop();
      engine = undefined;
      const quick = await t.publish(ada, plan('Claimed', [transform('a', 'coalesce', { v: lit(1) })]));
      const automation = await t.automationRow(quick.automation_id);
      const [free, alsoFree, held] = await h.services.deps.db.transaction().execute((trx) =>
        queueRuns(
          trx,
          Array.from({ length: 3 }, () => ({
            automation,
            versionId: automation.live_version_id,
            cause: 'manual' as const,
            dryRun: false,
            payload: {},
          })),
        ),
      );
      await h.services.deps.db
        .updateTable('jobs')
        .set({ locked_by: 'wrk_other', locked_until: Date.now() + 60_000 })
        .where('run_id', '=', held!)
        .execute();
      const worker = runWorker({
        db: h.services.deps.db,
        dialect: 'postgres',
        workerId: 'wrk_test',
        leaseMs: 60_000,
        crashes: 3,
        advancer: {} as Advancer,
      });
      const claims = await Promise.all([free!, alsoFree!, held!, free!].map((id) => worker.claimWithRun(id)));
      assert.deepEqual(
        claims.map((c) => c?.runId),
        [free, alsoFree, undefined, undefined],
        'each free run once, in the order asked; the held run and the second ask get nothing',
      );
      assert.equal(claims[0]!.live?.run.id, free, 'the claim carries the run it read');
      const locks = await h.services.deps.db
        .selectFrom('jobs')
        .select(['run_id', 'locked_by'])
        .where('run_id', 'in', [free!, alsoFree!, held!])
        .execute();
      assert.deepEqual(Object.fromEntries(locks.map((l) => [l.run_id, l.locked_by])), {
        [free!]: 'wrk_test',
        [alsoFree!]: 'wrk_test',
        [held!]: 'wrk_other',
      });
      await h.services.deps.db.deleteFrom('jobs').where('run_id', 'in', [free!, alsoFree!, held!]).execute();
    });

    it('gives back the runs it fetched but had not begun when it stops, for the next worker at once', async () => {
      await engine?.stop();
      engine = undefined;
      const { busy, release } = stalledEngine(2);
      const errors = mock.method(log, 'error');
      let next: Engine | undefined;
      try {
        await busy.start();
        const slow = await t.publish(
          ada,
          plan('Slow twice', [
            capability('call', 'github.get_issue', { repo: lit('acme/app'), number: lit(7) }),
          ]),
        );
        const slowRuns = [await t.run(ada, slow), await t.run(ada, slow)];
        await until(
          async () =>
            (await Promise.all(slowRuns.map((r) => t.runRow(r)))).every((r) => r.started_at != null),
          'both slots are busy',
          5_000,
        );
        // Fetched by the busy worker (its slots are taken) and held there when it stops.
        const quick = await t.publish(ada, plan('Quick', [transform('a', 'coalesce', { v: lit(1) })]));
        const quickRuns = [await t.run(ada, quick), await t.run(ada, quick)];
        const stopping = busy.stop();
        release();
        await stopping;
        next = createEngine(h.services, { concurrency: 2, pollMs: 50 });
        await next.start();
        await until(
          async () =>
            (await Promise.all(quickRuns.map((r) => t.runRow(r)))).every((r) => r.status === 'succeeded'),
          'the held runs have ended',
          // Runs not given back wait for the sweep (6 s with the default lease).
          4_000,
        );
        assert.deepEqual(
          errors.mock.calls.map((c) => String(c.arguments[1] ?? c.arguments[0])),
          [],
          'stopping logs no error',
        );
      } finally {
        errors.mock.restore();
        release();
        await next?.stop();
        await busy.stop().catch(() => {});
      }
    });
  });
}
