import { pickupSeconds } from '../observability/metrics.ts';
import type { FlowPlan } from '../flowplan/plan.ts';
import { TERMINAL_RUN } from '../domains/automations/runs.ts';
import type { Dialect } from '../storage/db.ts';
import { SCOPES, type Actor } from '../domains/workspace/actor.ts';
import { runFinisher, type RunEnd } from './finish.ts';
import { runWithAutomation, type LiveRun } from './live-run.ts';
import { retryRows } from '../flowplan/rerun.ts';
import type { AutomationRow, RunRow, RunState } from './run-state.ts';
import { nodeKind } from './steps/index.ts';
import type { StepEnv } from './steps/context.ts';
import { doTasks } from './tasks.ts';
import { walk, type Walk } from './walker.ts';
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

type FinishRun = ReturnType<typeof runFinisher>;

/**
 * Works on runs until nothing more can happen now: `advance` returns when the run waits or ends.
 * The functions below take the worker's environment and the run finisher.
 */
export function advancer(env: AdvanceEnv) {
  const finishRun = runFinisher(env);
  return {
    advance: (claim: Claim) => advance(env, finishRun, claim),
    release: (claim: Claim, at: number | null) => release(env, claim, at),
    finishRun,
    failCrashed: (runId: string, crashes: number) => failCrashed(env, finishRun, runId, crashes),
  };
}

export type Advancer = ReturnType<typeof advancer>;

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

/**
 * Works on one run until nothing more can happen now; returns when it waits or ends. Each round
 * walks the plan against the node states it holds and does what the walk says; pure steps change
 * only memory and are stored together with the next write, so a chain of transforms costs one
 * round trip. The run's and automation's rows are read again after any round that waited on the
 * database or the world, so a pause or a cancel is seen before the next step.
 */
async function advance(env: AdvanceEnv, finishRun: FinishRun, claim: Claim): Promise<void> {
  const runId = claim.runId;
  let state: RunState | undefined;
  let plan: FlowPlan | undefined;
  let previous: Walk | undefined;
  let changes = -1;
  let fresh = false;
  for (let round = 0; round < 100_000; round++) {
    await env.breathe();
    if (!fresh || !state) {
      const live = await liveRun(env, runId, round === 0 ? claim.live : undefined);
      if (!live) return;
      const { run, automation } = live;
      if (!state || !plan) {
        if (run.started_at === null) pickupSeconds.observe(Math.max(0, Date.now() - run.queued_at) / 1000);
        plan = await planOf(env, run.flow_version_id);
        state = await firstState(env, run, automation, plan);
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
      await release(env, claim, null);
      return;
    }
    if (previous && state.changes === changes) {
      // Nothing moved in the last round: wait for a time, a decision, a child run or the automation.
      await park(env, claim, state, previous);
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
    const end = endOf(env, state, walked);
    if (end) {
      await finishRun(state, plan, end.status, end.error);
      return;
    }
    // A run that only works things out in memory is marked running only if it must wait.
    if (
      run.status === 'queued' &&
      walked.tasks.some((t) => t.type !== 'skip' && !(t.type === 'start' && nodeKind(t.node).pure))
    ) {
      await markRunning(env, run);
    }
    fresh = await doTasks(env, state, walked.tasks, now);
  }
}

/**
 * The run's state as a worker takes it up. A queued run has stored no step yet (its first write
 * marks it running), so there is nothing to read; a retry starts from the finished steps of the
 * run it repeats.
 */
async function firstState(
  env: AdvanceEnv,
  run: RunRow,
  automation: AutomationRow,
  plan: FlowPlan,
): Promise<RunState> {
  let rows =
    run.status === 'queued' && run.cause !== 'retry'
      ? []
      : await env.db.selectFrom('run_nodes').selectAll().where('run_id', '=', run.id).execute();
  if (rows.length === 0 && run.cause === 'retry' && run.rerun_of) {
    rows = await retried(env, run, plan);
  }
  return {
    run,
    automation,
    actor: actorFor(run),
    rows: new Map(rows.map((r) => [r.node_key, r])),
    staged: new Map(),
    changes: 0,
    bytes: rows.reduce((sum, r) => sum + (r.output_json?.length ?? 0), 0),
    nodes: rows.length,
  };
}

/** How the run ends after this walk, if it does: a rejection, a failed step, done, or too many steps. */
function endOf(
  env: AdvanceEnv,
  state: RunState,
  walked: Walk,
): { status: RunEnd; error?: string } | undefined {
  const rejected = [...state.rows.values()].find((r) => r.status === 'failed' && r.error_code === 'rejected');
  if (rejected) return { status: 'cancelled', error: rejected.error ?? 'rejected' };
  if (walked.failed) return { status: 'failed', error: `${walked.failed.nodeId}: ${walked.failed.error}` };
  if (walked.done) return { status: 'succeeded' };
  // Steps that would add rows past the cap never start.
  const adding = walked.tasks.filter((t) => t.type === 'start' && !t.row).length;
  if (state.rows.size + adding > env.limits.nodeExecutions) {
    return {
      status: 'failed',
      error: `the run would pass ${env.limits.nodeExecutions} step executions, the most one run may take`,
    };
  }
  return undefined;
}

/** A retry's first rows: the finished steps of the run it repeats, stored under its own id. */
async function retried(env: AdvanceEnv, run: RunRow, plan: FlowPlan) {
  const { db, store } = env;
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
async function liveRun(env: AdvanceEnv, runId: string, read?: LiveRun) {
  const live = read ?? (await runWithAutomation(env.db, runId));
  if (!live || TERMINAL_RUN.has(live.run.status)) {
    await dropJobs(env.db, [runId]);
    return null;
  }
  return live;
}

/** A run whose workers kept dying while running it is failed, not taken up again. */
async function failCrashed(
  env: AdvanceEnv,
  finishRun: FinishRun,
  runId: string,
  crashes: number,
): Promise<void> {
  const live = await liveRun(env, runId);
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

async function markRunning(env: AdvanceEnv, run: RunRow): Promise<void> {
  const now = Date.now();
  await env.db
    .updateTable('runs')
    .set({ status: 'running', started_at: now, updated_at: now })
    .where('id', '=', run.id)
    .where('status', '=', 'queued')
    .execute();
  run.status = 'running';
  run.started_at = now;
}

/** Nothing more can happen now: the run waits for a time, a decision, a child run or enabling. */
async function park(env: AdvanceEnv, claim: Claim, state: RunState, walked: Walk): Promise<void> {
  await env.store.flush(env.db, state);
  const now = Date.now();
  await env.db
    .updateTable('runs')
    .set({ status: 'waiting', updated_at: now, started_at: state.run.started_at ?? now })
    .where('id', '=', claim.runId)
    .where('status', 'in', ['queued', 'running', 'waiting'])
    .execute();
  if (walked.held > 0 && walked.wakeAt === null) await release(env, claim, null);
  else await release(env, claim, walked.wakeAt ?? Date.now() + 3_600_000);
}

/**
 * Lets the run go: its job is due at `at`, or removed (null) until something wakes the run. A
 * wake while the worker held it (a decision, a child run ending) moved the job's due time: then
 * the job stays due as the wake set it.
 */
async function release(env: AdvanceEnv, claim: Claim, at: number | null): Promise<void> {
  await letGo(env.db, claim.runId, env.workerId, claim.availableAt, at);
}
