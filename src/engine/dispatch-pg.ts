import { log } from '../observability/log.ts';
import { EventEmitter } from 'node:events';
import { run, type Runner, type WorkerEvents } from 'graphile-worker';
import { sql } from 'kysely';
import type { Storage } from '../storage/db.ts';
import { dispatchLogger, dispatchSchema } from '../storage/dispatch.ts';
import type { RunWorker } from './worker.ts';
import { sweepJobs } from '../queue/jobs.ts';

/**
 * Dispatch on Postgres through graphile-worker. A trigger on `jobs` adds graphile job "advance run
 * X" (keyed by the run, due at the job's `available_at`) in the same transaction that queues,
 * wakes or lets go of a run; graphile-worker hands it out (SKIP LOCKED claims, LISTEN/NOTIFY
 * wake-ups) and the worker then takes the run's own lease. The run tables stay the truth: a
 * graphile job for a run another worker holds does nothing, and one lost to a worker that died is
 * replaced when that worker's lease runs out (`sweep`), so nothing waits for graphile-worker's own
 * four-hour lock timeout.
 */

export interface Dispatcher {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Frees runs whose worker died (their lease ran out) and re-sends due runs nobody took. */
  sweep(): Promise<void>;
  /** Whether graphile-worker is handing out runs (if it stopped, the engine finds them itself). */
  running(): boolean;
}

export function pgDispatcher(
  storage: Storage,
  { concurrency, leaseMs, worker }: { concurrency: number; leaseMs: number; worker: RunWorker },
): Dispatcher {
  const { db } = storage;
  const gw = dispatchSchema(storage.schema);
  let runner: Runner | undefined;
  let live = false;
  return {
    running: () => live,
    async start() {
      if (!storage.pool) throw new Error('graphile dispatch needs a Postgres pool');
      const events: WorkerEvents = new EventEmitter();
      events.on('localQueue:init', ({ localQueue }) => givesBackOnRelease(localQueue));
      runner = await run({
        pgPool: storage.pool,
        events,
        schema: gw,
        concurrency,
        noHandleSignals: true,
        pollInterval: 1_000,
        preset: {
          worker: {
            // Completions of jobs that end together are sent in one statement: a graphile job only
            // says "look at run X", so one that runs again after a crash finds nothing to do.
            completeJobBatchDelay: 0,
            // Jobs are fetched for the whole process, up to one per slot in one statement. After
            // a fetch that finds nothing, the process waits about 20 ms before asking again (a
            // run queued meanwhile is fetched when the wait ends): every process hears of every
            // new job, and without the wait each would ask for each one, so adding workers that
            // have little to do would add statements for Postgres instead of capacity. A job
            // fetched while every slot is busy (slow steps) goes back after a second, for an
            // idle process to take on its next poll or on the next new job.
            localQueue: { size: concurrency, ttl: 1_000, refetchDelay: { durationMs: 20 } },
          },
        },
        logger: dispatchLogger,
        taskList: {
          advance: async (payload) => {
            const runId = (payload as { run_id?: unknown }).run_id;
            if (typeof runId !== 'string') return;
            const claimed = await worker.claimWithRun(runId);
            if (claimed) await worker.work(claimed);
          },
        },
      });
      live = true;
      const started = runner;
      started.promise
        .catch((error: unknown) =>
          log.error({ err: error }, 'run dispatch stopped; this engine finds due runs itself'),
        )
        .finally(() => {
          if (runner === started) live = false;
        });
    },
    async stop() {
      const stopping = runner;
      runner = undefined;
      live = false;
      // A runner that already stopped on its own has nothing left to stop.
      if (stopping) await stopping.stop().catch(() => {});
    },
    async sweep() {
      const now = Date.now();
      // Letting go of a dead worker's run makes the trigger add its job again. A due run nobody
      // took for a while (its graphile job found it held, and the holder died) is sent again —
      // only one with no graphile job still to run: a backlog waiting its turn is not sent again
      // and again (each time rewriting every row of it, and holding it from workers).
      const waiting = sql<boolean>`exists (select 1 from ${sql.id(gw, '_private_jobs')} as g
        where g.key = jobs.run_id and g.is_available)`;
      await sweepJobs(db, now, Math.max(2_000, leaseMs / 10), waiting);
    },
  };
}

/** The parts of graphile-worker's local queue that releasing it touches. */
interface Releasable {
  backgroundCount: number;
  setModeReleased(): void;
  decreaseBackgroundCount(): void;
}

/**
 * graphile-worker (0.18) releases a local queue that still holds fetched jobs by handing their
 * return to its background work after marking itself released, which it refuses when nothing else
 * is in the background: the jobs are not given back (the run waits for the sweep) and stopping
 * logs errors. Counting the release itself as background work while it runs lets the return go
 * ahead, and the queue finishes once the jobs are back.
 */
function givesBackOnRelease(queue: unknown): void {
  const q = queue as Partial<Releasable>;
  if (
    typeof q.backgroundCount !== 'number' ||
    typeof q.setModeReleased !== 'function' ||
    typeof q.decreaseBackgroundCount !== 'function'
  )
    return;
  const release = q.setModeReleased.bind(q);
  const done = q.decreaseBackgroundCount;
  q.setModeReleased = () => {
    q.backgroundCount! += 1;
    try {
      release();
    } finally {
      done();
    }
  };
}
