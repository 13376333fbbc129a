import { log, withLogContext } from '../observability/log.ts';
import type { Kysely } from 'kysely';
import { claimDue as claimJobsDue, claimJobs, renewLease, takeJob } from '../queue/jobs.ts';
import type { Dialect } from '../storage/db.ts';
import type { Database } from '../storage/schema.ts';
import type { Advancer, Claim } from './advance.ts';
import { automationColumns, splitLive } from './live-run.ts';
import { perTurn } from '../per-turn.ts';
import { LeaseLost } from './run-state.ts';

/** A run a worker took: its claim, and how many workers before it died running its steps. */
export interface Claimed extends Claim {
  crashes: number;
}

export interface WorkerOptions {
  db: Kysely<Database>;
  dialect: Dialect;
  workerId: string;
  leaseMs: number;
  /** Deaths in a row while holding a run before it fails as crashed repeatedly. */
  crashes: number;
  advancer: Advancer;
}

/**
 * Taking runs and working on them: the lease on a run's `jobs` row (claimed with a compare-and-set,
 * renewed while the worker works), the crash counter, and letting go. Both dispatchers (the
 * in-process one on SQLite, graphile-worker on Postgres) hand their runs to `work`.
 */
export function runWorker({ db, dialect, workerId, leaseMs, crashes: maxCrashes, advancer }: WorkerOptions) {
  /** Runs this worker is advancing now. */
  const working = new Set<string>();

  const holder = { workerId, leaseMs };

  /**
   * Claims due runs (at most `limit`) in one statement, counting the claim: a step that ends sets
   * the count back to zero, so a run claimed three times in a row without a step ending had three
   * workers die running it. On Postgres, rows other workers are claiming are skipped.
   */
  async function claimDue(limit: number, only?: string): Promise<Claimed[]> {
    // A run this worker is still working on is never taken again by it, even if a busy machine
    // let its lease run out: two advances of one run in one process would both hold the lease.
    const claimed = await claimJobsDue(db, holder, limit, only, [...working]);
    return claimed.map((r) => ({ runId: r.run_id, availableAt: r.available_at, crashes: r.claims - 1 }));
  }

  /**
   * Claims run `runId` if it is due and free, reading the run and its automation in the same
   * statement (Postgres: an update in a common table expression). Claims asked for in the same turn
   * of the event loop (graphile-worker hands out the jobs it fetched together) are one statement.
   */
  function claimWithRun(runId: string): Promise<Claimed | undefined> {
    if (dialect !== 'postgres' || working.has(runId)) return claimDue(1, runId).then((c) => c[0]);
    return claimTogether(runId);
  }

  const claimTogether = perTurn(async (runIds: string[]): Promise<(Claimed | undefined)[]> => {
    const now = Date.now();
    const rows = (await db
      .with('claimed', (qb) => claimJobs(qb, holder, runIds, now))
      .selectFrom('claimed')
      .innerJoin('runs', 'runs.id', 'claimed.run_id')
      .leftJoin('automations as a', 'a.id', 'runs.automation_id')
      .select(['claimed.claims', 'claimed.job_available_at'])
      .selectAll('runs')
      .select(automationColumns())
      .execute()) as (Record<string, unknown> & { id: string; claims: number; job_available_at: number })[];
    const byRun = new Map(rows.map((r) => [r.id, r]));
    return runIds.map((runId) => {
      const row = byRun.get(runId);
      // A run asked for twice in one turn is claimed once.
      byRun.delete(runId);
      if (!row) return undefined;
      const { claims, job_available_at: availableAt, ...rest } = row;
      return { runId, availableAt: Number(availableAt), crashes: claims - 1, live: splitLive(rest) };
    });
  });

  /** Works on a claimed run, renewing its lease meanwhile. */
  async function work(claimed: Claimed): Promise<void> {
    working.add(claimed.runId);
    const heartbeat = setInterval(
      () => {
        void renewLease(db, claimed.runId, holder).catch(() => {});
      },
      Math.max(250, Math.floor(leaseMs / 3)),
    );
    try {
      await withLogContext({ run: claimed.runId }, () =>
        claimed.crashes >= maxCrashes
          ? advancer.failCrashed(claimed.runId, claimed.crashes)
          : advancer.advance(claimed),
      );
    } catch (error) {
      if (error instanceof LeaseLost) return;
      log.error({ err: error }, 'the run could not advance; it is retried in 5 s');
      await advancer.release(claimed, Date.now() + 5_000).catch(() => {});
    } finally {
      working.delete(claimed.runId);
      clearInterval(heartbeat);
    }
  }

  /** Takes a run now, whatever its job says, and advances it (tests and tools use it). */
  async function advanceNow(runId: string): Promise<void> {
    const now = Date.now();
    await takeJob(db, runId, holder, now);
    await work({ runId, availableAt: now, crashes: 0 });
  }

  return { claimDue, claimWithRun, work, advanceNow };
}

export type RunWorker = ReturnType<typeof runWorker>;
