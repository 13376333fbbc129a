import { log } from '../observability/log.ts';
import { engineRunning, engineStopped, engineTicked } from '../observability/health.ts';
import { watchRuns } from '../observability/metrics.ts';
import { createAgentWorker, type AgentWorkerOptions } from '../domains/agents/worker.ts';
import { pruneEvents, type IncomingEvent } from '../domains/automations/events.ts';
import { PRUNE_BATCH, pruneVersions } from '../domains/documents/prune.ts';
import { newId } from '../ids.ts';
import type { Services } from '../services.ts';
import { advancer } from './advance.ts';
import type { Impl } from '../capabilities/capability.ts';
import type { Resolver } from '../net/http-fetch.ts';
import { pgDispatcher, type Dispatcher } from './dispatch-pg.ts';
import { DEFAULT_LIMITS, pacer, type RunLimits } from './limits.ts';
import { ModelError, type ModelConfig } from '../model/model.ts';
import { deliverPending } from './outbox.ts';
import { nodeStore } from './run-state.ts';
import { fireSchedules, nextScheduleAt } from './schedules.ts';
import { StepError } from '../errors.ts';
import { runWorker, type Claimed } from './worker.ts';

export interface EngineOptions {
  /** Hosts the http capabilities may reach. */
  httpAllow?: readonly string[];
  model?: ModelConfig | undefined;
  /** How long a worker holds a run it advances before another may take it over. */
  leaseMs?: number;
  /** How often idle workers look for due work (and, on Postgres, for runs of dead workers). */
  pollMs?: number;
  /** Parallel runs per worker. */
  concurrency?: number;
  /**
   * How runs reach workers on Postgres: `graphile` (jobs added in the run's own transaction, woken
   * by LISTEN/NOTIFY, claimed with SKIP LOCKED) or `poll` (this engine's own loop over the run
   * tables, as on SQLite). Default `graphile`.
   */
  dispatch?: 'graphile' | 'poll';
  /** What one run may cost (see limits.ts); tests lower them. */
  limits?: Partial<RunLimits>;
  /** Agents answering mentions in comment threads (domains/agents/worker.ts). */
  agents?: AgentWorkerOptions;
  /** Outside connector calls, by capability key, in place of the shipped transports (tests, plugins). */
  connectorCalls?: Record<string, Impl>;
  /** How http and connector hosts become addresses (the system's resolver unless a test stands in). */
  resolve?: Resolver;
  /** Days every automatic document checkpoint is kept before pruning thins them (TANDEM_VERSIONS_KEEP_DAYS). */
  versionsKeepDays?: number;
  /** How often the housekeeping prunes document checkpoints (again at once while a pass fills its batch). */
  versionsPruneEveryMs?: number;
  /** The clock pruning reads (tests move it). */
  clock?: () => number;
}

/**
 * The run engine: delivers the event outbox, fires due schedules, and advances runs. The run tables
 * are the truth; each run's `jobs` row carries its due time and lease. On SQLite (and with
 * `dispatch: 'poll'`) this process finds due jobs itself; on Postgres graphile-worker tells it.
 */
export function createEngine(services: Services, options: EngineOptions = {}) {
  const { db, dialect } = services.deps;
  const workerId = newId('wrk');
  const leaseMs = options.leaseMs ?? 60_000;
  const pollMs = options.pollMs ?? 500;
  // Runs wait on the database most of the time; a Postgres server answers several at once.
  const concurrency = options.concurrency ?? (services.storage.dialect === 'postgres' ? 8 : 4);
  const limits: RunLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const breathe = pacer(5);
  const abort = new AbortController();
  const capabilities = new Map(
    services.automations.plugins.flatMap((p) => p.capabilities).map((c) => [c.key, c]),
  );

  /** A step's own work (a call out, a model's answer) may take at most `nodeWallMs`. */
  async function withinWallTime<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const deadline = new AbortController();
    const signal = AbortSignal.any([abort.signal, deadline.signal]);
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        deadline.abort();
        const seconds = Math.round(limits.nodeWallMs / 1000);
        reject(new StepError(`the step ran for more than ${seconds} s and was stopped`, { code: 'timeout' }));
      }, limits.nodeWallMs);
    });
    try {
      return await Promise.race([work(signal), expired]);
    } finally {
      clearTimeout(timer);
    }
  }

  const store = nodeStore({ workerId, leaseMs, limits });
  const runs = advancer({
    db,
    services,
    store,
    limits,
    httpAllow: options.httpAllow ?? [],
    modelFor: (workspaceId) =>
      services.models.configFor(workspaceId, options.model).catch((error: unknown) => {
        throw error instanceof ModelError ? new StepError(`model_unavailable: ${error.message}`) : error;
      }),
    connectorCalls: options.connectorCalls,
    resolve: options.resolve,
    capabilityOf: (key) => capabilities.get(key),
    withinWallTime,
    workerId,
    dialect,
    breathe,
  });
  const worker = runWorker({ db, dialect, workerId, leaseMs, crashes: limits.crashes, advancer: runs });
  // Agent requests are answered by every engine, on the same loop and leases as runs.
  const agents = createAgentWorker(services, {
    model: options.model,
    leaseMs,
    workerId,
    ...options.agents,
    onDone: () => kick(),
  });
  const dispatcher: Dispatcher | undefined =
    dialect === 'postgres' && (options.dispatch ?? 'graphile') === 'graphile'
      ? pgDispatcher(services.storage, { concurrency, leaseMs, worker })
      : undefined;

  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  const active = new Set<Promise<void>>();

  let lastPrune = 0;
  let lastVersionsPrune = 0;
  const clock = options.clock ?? Date.now;
  const versionsPruneEveryMs = options.versionsPruneEveryMs ?? 60_000;
  /** Delivers what waits in the outbox (written by any process); returns the runs queued. */
  async function deliverEvents(): Promise<number> {
    const queued = await deliverPending(db, breathe);
    if (Date.now() - lastPrune > 3_600_000) {
      lastPrune = Date.now();
      await pruneEvents(db);
    }
    await pruneCheckpoints();
    return queued;
  }

  /** Thins old document checkpoints, a bounded batch a tick; a full batch leaves the next due at once. */
  async function pruneCheckpoints(): Promise<void> {
    const now = clock();
    if (now - lastVersionsPrune < versionsPruneEveryMs) return;
    lastVersionsPrune = now;
    const pruned = await pruneVersions(db, {
      now,
      ...(options.versionsKeepDays !== undefined ? { keepDays: options.versionsKeepDays } : {}),
    });
    if (pruned >= PRUNE_BATCH) lastVersionsPrune = 0;
  }

  const schedules = () => fireSchedules(db, dialect, breathe);

  function spawn(job: Claimed): void {
    const p = worker.work(job).finally(() => {
      active.delete(p);
      kickRuns();
    });
    active.add(p);
  }

  /**
   * A schedule due before the next poll gets a timer of its own, so it fires on its instant rather
   * than up to a poll later.
   */
  let scheduleTimer: NodeJS.Timeout | undefined;
  async function wakeForSchedule(): Promise<void> {
    const next = await nextScheduleAt(db);
    const wait = next === null ? Infinity : next - Date.now();
    if (wait >= pollMs || stopped) return;
    clearTimeout(scheduleTimer);
    scheduleTimer = setTimeout(() => kick(), Math.max(0, wait));
  }

  /** Takes due runs while there is room (unless graphile-worker hands them out). */
  async function claimRuns(): Promise<void> {
    if (dispatcher?.running()) return;
    while (!stopped && active.size < concurrency) {
      const claimed = await worker.claimDue(concurrency - active.size);
      if (claimed.length === 0) break;
      for (const job of claimed) spawn(job);
    }
  }

  /**
   * One look for work. A full look (the timer, an event) delivers events, fires schedules, answers
   * agents and frees runs whose worker died; a look for runs alone (a run was queued or ended here)
   * only claims runs, and costs nothing when graphile-worker hands them out.
   */
  async function tick(full = true): Promise<void> {
    engineTicked();
    if (full) {
      await deliverEvents();
      await schedules();
      await wakeForSchedule();
      await agents.tick();
      if (dispatcher?.running()) await dispatcher.sweep();
    }
    await claimRuns();
  }

  // Looks never overlap; one asked for while another is under way follows it.
  let ticking = false;
  let wanted: 'none' | 'runs' | 'full' = 'none';
  async function look(): Promise<void> {
    if (ticking || stopped || wanted === 'none') return;
    ticking = true;
    try {
      while (!stopped && wanted !== 'none') {
        const full = wanted === 'full';
        wanted = 'none';
        await tick(full).catch((error: unknown) => {
          if (!stopped) log.error({ err: error }, 'the run engine could not look for work');
        });
      }
    } finally {
      ticking = false;
    }
  }

  let kicked = false;
  /** Asks for a look soon (`full`, or for runs alone). */
  function kick(full = true): void {
    if (stopped) return;
    if (full) wanted = 'full';
    else if (wanted === 'none') wanted = 'runs';
    if (kicked || ticking) return;
    kicked = true;
    setImmediate(() => {
      kicked = false;
      void look();
    });
  }
  const kickRuns = () => {
    if (!dispatcher?.running()) kick(false);
  };

  let unsubscribe: (() => void) | undefined;

  return {
    workerId,
    async start() {
      if (!stopped) return;
      stopped = false;
      const offEvents = services.onEvent(() => kick());
      const offQueued = services.automations.onQueued(kickRuns);
      unsubscribe = () => {
        offEvents();
        offQueued();
      };
      timer = setInterval(() => kick(), pollMs);
      engineRunning(pollMs);
      watchRuns(db);
      await dispatcher?.start();
      kick();
    },
    async stop() {
      stopped = true;
      engineStopped();
      if (timer) clearInterval(timer);
      clearTimeout(scheduleTimer);
      unsubscribe?.();
      abort.abort();
      await dispatcher?.stop();
      await agents.stop();
      await Promise.allSettled([...active]);
    },
    kick: () => kick(),
    advance: worker.advanceNow,
    fireSchedules: schedules,
    receiveEvent: (workspaceId: string, event: IncomingEvent) =>
      services.automations.receiveEvent(workspaceId, event),
    deliverEvents,
    /** Runs everything due now, in this process, until nothing is left (tests and the CLI use it). */
    async drain(limitMs = 10_000): Promise<void> {
      const until = Date.now() + limitMs;
      while (Date.now() < until) {
        await deliverEvents();
        await schedules();
        const answered = await agents.drain();
        const claimed = await worker.claimDue(concurrency);
        if (claimed.length === 0 && active.size === 0 && answered === 0) return;
        await Promise.all(claimed.map((job) => worker.work(job)));
        if (claimed.length === 0) await Promise.allSettled([...active]);
      }
    },
  };
}

export type Engine = ReturnType<typeof createEngine>;
