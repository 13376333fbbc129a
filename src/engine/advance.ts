import { log } from '../observability/log.ts';
import { maskSecrets } from '../observability/secrets.ts';
import { pickupSeconds } from '../observability/metrics.ts';
import type { FlowPlan } from '../flowplan/plan.ts';
import { TERMINAL_RUN } from '../domains/automations/runs.ts';
import type { Dialect } from '../storage/db.ts';
import { SCOPES, type Actor } from '../domains/workspace/actor.ts';
import { DomainError, LimitError, StepError } from '../errors.ts';
import { runFinisher } from './finish.ts';
import { storedInput } from './inputs.ts';
import { runWithAutomation, type LiveRun } from './live-run.ts';
import { retryRows } from '../flowplan/rerun.ts';
import { retryWait } from '../flowplan/retry.ts';
import { LeaseLost, type ErrorCode, type RunRow, type RunState } from './run-state.ts';
import { nodeKind } from './steps/index.ts';
import type { StepEnv, StartTask } from './steps/context.ts';
import { walk, type Task, type Walk } from './walker.ts';
import { dropJobs, letGo } from '../queue/jobs.ts';

/** How a worker took a run: the job's due time when it was claimed (a later wake changes it). */
export interface Claim {
  runId: string;
  availableAt: number;
  /** The run and its automation, when they were read with the claim. */
  live?: LiveRun | undefined;
}

export interface AdvanceEnv extends StepEnv {
  workerId: string;
  dialect: Dialect;
  /** Gives the event loop back now and then (SQLite answers synchronously). */
  breathe(): Promise<void>;
}

/** Plans by version: versions never change, so a worker reads and parses each once. */
const plans = new Map<string, FlowPlan>();
async function planOf(env: AdvanceEnv, versionId: string): Promise<FlowPlan> {
  let plan = plans.get(versionId);
  if (!plan) {
    const version = await env.db
      .selectFrom('flow_versions')
      .select('plan_json')
      .where('id', '=', versionId)
      .executeTakeFirstOrThrow();
    plan = JSON.parse(version.plan_json) as FlowPlan;
    if (plans.size >= 500) plans.delete(plans.keys().next().value as string);
    plans.set(versionId, plan);
  }
  return plan;
}

const actorFor = (run: RunRow): Actor => ({
  personId: run.acting_id,
  workspaceId: run.workspace_id,
  scopes: new Set(SCOPES),
});

function errorCodeOf(error: unknown): ErrorCode | null {
  if (error instanceof LimitError) return 'limit';
  if (error instanceof StepError) return (error.code as ErrorCode | undefined) ?? null;
  return null;
}

/**
 * Works on one run until nothing more can happen now; returns when it waits or ends. Each round
 * walks the plan against the node states it holds and does what the walk says; pure steps change
 * only memory and are stored together with the next write, so a chain of transforms costs one
 * round trip. The run's and automation's rows are read again after any round that waited on the
 * database or the world, so a pause or a cancel is seen before the next step.
 */
export function advancer(env: AdvanceEnv) {
  const { db, store } = env;
  const finishRun = runFinisher(env);

  async function advance(claim: Claim): Promise<void> {
    const runId = claim.runId;
    let state: RunState | undefined;
    let plan: FlowPlan | undefined;
    let previous: Walk | undefined;
    let changes = -1;
    let fresh = false;
    for (let round = 0; round < 100_000; round++) {
      await env.breathe();
      if (!fresh || !state) {
        const live = await liveRun(runId, round === 0 ? claim.live : undefined);
        if (!live) return;
        const { run, automation } = live;
        if (!state || !plan) {
          if (run.started_at === null) pickupSeconds.observe(Math.max(0, Date.now() - run.queued_at) / 1000);
          plan = await planOf(env, run.flow_version_id);
          // A queued run has stored no step yet (its first write marks it running), so there is
          // nothing to read; a retry starts from the finished steps of the run it repeats.
          let rows =
            run.status === 'queued' && run.cause !== 'retry'
              ? []
              : await db.selectFrom('run_nodes').selectAll().where('run_id', '=', runId).execute();
          if (rows.length === 0 && run.cause === 'retry' && run.rerun_of) {
            rows = await retried(run, plan);
          }
          state = {
            run,
            automation,
            actor: actorFor(run),
            rows: new Map(rows.map((r) => [r.node_key, r])),
            staged: new Map(),
            changes: 0,
            bytes: rows.reduce((sum, r) => sum + (r.output_json?.length ?? 0), 0),
            nodes: rows.length,
          };
        } else {
          state.run = run;
          state.automation = automation;
        }
      }
      if (!plan) throw new Error(`run ${runId} has no plan loaded`);
      const { run, automation } = state;
      const paused = automation.enabled === 0 && run.dry_run === 0;
      if (paused && run.status === 'queued') {
        // Queued runs of a paused automation do not start; enabling it wakes them.
        await release(claim, null);
        return;
      }
      if (previous && state.changes === changes) {
        // Nothing moved in the last round: wait for a time, a decision, a child run or the automation.
        await park(claim, state, previous);
        return;
      }
      changes = state.changes;
      if (state.rows.size > env.limits.nodeExecutions) {
        await finishRun(
          state,
          plan,
          'failed',
          `the run passed ${env.limits.nodeExecutions} step executions, the most one run may take`,
        );
        return;
      }
      const now = Date.now();
      const walked = walk({ plan, rows: state.rows, trigger: JSON.parse(run.trigger_json), paused, now });
      previous = walked;
      const rejected = [...state.rows.values()].find(
        (r) => r.status === 'failed' && r.error_code === 'rejected',
      );
      if (rejected) {
        await finishRun(state, plan, 'cancelled', rejected.error ?? 'rejected');
        return;
      }
      if (walked.failed) {
        await finishRun(state, plan, 'failed', `${walked.failed.nodeId}: ${walked.failed.error}`);
        return;
      }
      if (walked.done) {
        await finishRun(state, plan, 'succeeded');
        return;
      }
      // Steps that would add rows past the cap never start.
      const adding = walked.tasks.filter((t) => t.type === 'start' && !t.row).length;
      if (state.rows.size + adding > env.limits.nodeExecutions) {
        await finishRun(
          state,
          plan,
          'failed',
          `the run would pass ${env.limits.nodeExecutions} step executions, the most one run may take`,
        );
        return;
      }
      // A run that only works things out in memory is marked running only if it must wait.
      if (
        run.status === 'queued' &&
        walked.tasks.some((t) => t.type !== 'skip' && !(t.type === 'start' && nodeKind(t.node).pure))
      ) {
        await markRunning(run);
      }
      fresh = await doTasks(state, walked.tasks, now);
    }
  }

  /** A retry's first rows: the finished steps of the run it repeats, stored under its own id. */
  async function retried(run: RunRow, plan: FlowPlan) {
    const before = await db
      .selectFrom('run_nodes')
      .selectAll()
      .where('run_id', '=', run.rerun_of as string)
      .execute();
    const rows = retryRows(plan, before, run.id);
    if (rows.length > 0) await store.seed(db, run.id, rows);
    return rows;
  }

  /** A run still to finish and its automation; a run that ended loses its job and is null. */
  async function liveRun(runId: string, read?: LiveRun) {
    const live = read ?? (await runWithAutomation(db, runId));
    if (!live || TERMINAL_RUN.has(live.run.status)) {
      await dropJobs(db, [runId]);
      return null;
    }
    return live;
  }

  /** A run whose workers kept dying while running it is failed, not taken up again. */
  async function failCrashed(runId: string, crashes: number): Promise<void> {
    const live = await liveRun(runId);
    if (!live) return;
    const state: RunState = {
      ...live,
      actor: actorFor(live.run),
      rows: new Map(),
      staged: new Map(),
      changes: 0,
      bytes: 0,
      nodes: 0,
    };
    await finishRun(
      state,
      await planOf(env, live.run.flow_version_id),
      'failed',
      `crashed repeatedly: the process running it stopped ${crashes} times, so it is not resumed again`,
    );
  }

  async function markRunning(run: RunRow): Promise<void> {
    const now = Date.now();
    await db
      .updateTable('runs')
      .set({ status: 'running', started_at: now, updated_at: now })
      .where('id', '=', run.id)
      .where('status', '=', 'queued')
      .execute();
    run.status = 'running';
    run.started_at = now;
  }

  /** Does a round's tasks; says whether they were all worked out in memory (nothing to read again). */
  async function doTasks(state: RunState, tasks: Task[], now: number): Promise<boolean> {
    let inMemory = true;
    const outside: Promise<void>[] = [];
    for (const task of tasks) {
      if (task.type === 'skip') {
        await store.finish('staged', state, task.key, task.node.id, { status: 'skipped' });
      } else if (task.type === 'map-finish') {
        await store.finish(
          'staged',
          state,
          task.key,
          task.node.id,
          task.failed
            ? { status: 'failed', error: task.failed, keepOutput: true }
            : { status: 'succeeded', output: { results: task.results } },
        );
      } else if (task.type === 'check') {
        const kind = nodeKind(task.node);
        const due = task.row.wait_until === null || task.row.wait_until <= now;
        if (!kind.check || (!due && task.node.kind !== 'subflow' && task.node.kind !== 'approval')) continue;
        inMemory = false;
        await env.breathe();
        await kind.check(env, state, task as never);
      } else {
        const kind = nodeKind(task.node);
        if (!kind.pure) {
          inMemory = false;
          await env.breathe();
        }
        const step = start(state, task);
        if (kind.outside) outside.push(step);
        else await step;
      }
    }
    const settled = await Promise.allSettled(outside);
    const failure = settled.find((r) => r.status === 'rejected');
    if (failure) throw failure.reason;
    return inMemory;
  }

  /** Starts one step; a failure becomes the step's state (retried when its policy says so). */
  async function start(state: RunState, task: Extract<Task, { type: 'start' }>): Promise<void> {
    const { key, node } = task;
    const kind = nodeKind(node);
    const attempt = (task.row?.attempt ?? 0) + 1;
    if (!task.row) state.nodes += 1;
    const begun = { attempt, started_at: Date.now(), input_json: storedInput(node, task.scope) };
    if (!kind.pure)
      await store.write(db, state, key, node.id, { status: 'running', ...begun, wait_until: null });
    try {
      await kind.start(env, state, { ...task, begun } as StartTask as never);
    } catch (error) {
      if (error instanceof LeaseLost) throw error;
      const known = error instanceof StepError || error instanceof DomainError;
      const message = maskSecrets(known ? error.message : `unexpected error: ${(error as Error).message}`);
      if (!known) log.error({ err: error, node: key }, 'a step failed unexpectedly');
      const code = errorCodeOf(error);
      // A step error says whether trying again can help; one that says it cannot is not retried.
      const wait = retryWait(node.kind === 'capability' ? node.retry : undefined, attempt, {
        final: error instanceof StepError && error.retryable === false,
        code,
        retryAfterMs: (error as { retryAfterMs?: unknown }).retryAfterMs,
      });
      if (wait !== undefined) {
        await store.write(db, state, key, node.id, {
          status: 'pending',
          error: message,
          wait_until: Date.now() + wait,
        });
        return;
      }
      await store.finish(kind.pure ? 'staged' : db, state, key, node.id, {
        status: 'failed',
        error: message,
        code,
        begun: kind.pure ? begun : undefined,
      });
    }
  }

  /** Nothing more can happen now: the run waits for a time, a decision, a child run or enabling. */
  async function park(claim: Claim, state: RunState, walked: Walk): Promise<void> {
    await store.flush(db, state);
    const now = Date.now();
    await db
      .updateTable('runs')
      .set({ status: 'waiting', updated_at: now, started_at: state.run.started_at ?? now })
      .where('id', '=', claim.runId)
      .where('status', 'in', ['queued', 'running', 'waiting'])
      .execute();
    if (walked.held > 0 && walked.wakeAt === null) await release(claim, null);
    else await release(claim, walked.wakeAt ?? Date.now() + 3_600_000);
  }

  /**
   * Lets the run go: its job is due at `at`, or removed (null) until something wakes the run. A
   * wake while the worker held it (a decision, a child run ending) moved the job's due time: then
   * the job stays due as the wake set it.
   */
  async function release(claim: Claim, at: number | null): Promise<void> {
    await letGo(db, claim.runId, env.workerId, claim.availableAt, at);
  }

  return { advance, release, finishRun, failCrashed };
}

export type Advancer = ReturnType<typeof advancer>;
