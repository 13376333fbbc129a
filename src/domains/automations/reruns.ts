import { stepsRunAgain } from '../../flowplan/rerun.ts';
import { DomainError, invalid } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import { automationFor, requireControl } from '../policies/automations.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { personName } from '../workspace/artifacts.ts';
import type { StoredSummary } from './automations.ts';
import type { FlowPlan, PlanNode } from '../../flowplan/plan.ts';
import { queueRun, TERMINAL_RUN } from './runs.ts';

/**
 * Running a finished run again, from the automation page. A **retry** repeats a failed run on the
 * version it ran, keeping the steps that finished (their writes do not happen again) and running
 * the failed step and everything after it. A **replay** starts a new run of the live version with
 * the same input. Before either, the page says which version will run and which steps' writes
 * would happen again.
 */

export type RerunMode = 'retry' | 'replay';

/** A step that would write again: a write capability, or a subflow whose automation writes. */
export interface WriteAgain {
  node_id: string;
  capability?: string;
  subflow?: string;
}

export interface RerunChoice {
  available: boolean;
  /** Why it is not available, in one sentence. */
  reason?: string;
  /** The plan version that would run, and the automation's live version. */
  version: number;
  live_version: number;
  /** The steps that would run (again), by id, in plan order. */
  steps: string[];
  writes_again: WriteAgain[];
}

export interface RerunPreview {
  run_id: string;
  dry_run: boolean;
  retry: RerunChoice;
  replay: RerunChoice;
}

/** How a finished run ended, as the refusal to retry it says. */
const RAN: Record<string, string> = { succeeded: 'succeeded', cancelled: 'was cancelled' };

const runNotFound = () => new DomainError('not_found', 'Run not found');

type Loaded = Awaited<ReturnType<typeof load>>;

async function versionOf(on: Db, id: string) {
  const row = await on
    .selectFrom('flow_versions')
    .select(['id', 'version', 'plan_json', 'summary_json'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  return {
    id: row.id,
    version: row.version,
    plan: JSON.parse(row.plan_json) as FlowPlan,
    summary: JSON.parse(row.summary_json) as StoredSummary,
  };
}

/** The run of this automation (or not found, exactly like a made-up id) with what a rerun needs. */
async function load(on: Db, actor: Actor, automationId: unknown, runId: unknown) {
  const access = await automationFor(on, actor, automationId);
  if (typeof runId !== 'string' || runId === '') throw runNotFound();
  const run = await on
    .selectFrom('runs')
    .selectAll()
    .where('id', '=', runId)
    .where('automation_id', '=', access.row.id)
    .executeTakeFirst();
  if (!run) throw runNotFound();
  const [ran, live] = await Promise.all([
    versionOf(on, run.flow_version_id),
    run.flow_version_id === access.row.live_version_id
      ? undefined
      : versionOf(on, access.row.live_version_id),
  ]);
  return { access, run, ran, live: live ?? ran };
}

/** Which of `nodes` write: write capabilities, and subflows whose automation's live plan writes. */
async function writesOf(on: Db, nodes: PlanNode[], summary: StoredSummary): Promise<WriteAgain[]> {
  const writes = new Set(summary.writes);
  const children = [...new Set(nodes.flatMap((n) => (n.kind === 'subflow' ? [n.automation_id] : [])))];
  const writingChildren = new Set<string>();
  if (children.length > 0) {
    const rows = await on
      .selectFrom('automations')
      .innerJoin('flow_versions', 'flow_versions.id', 'automations.live_version_id')
      .select(['automations.id', 'flow_versions.summary_json'])
      .where('automations.id', 'in', children)
      .execute();
    for (const row of rows) {
      const child = JSON.parse(row.summary_json) as StoredSummary;
      if (child.writes_transitively ?? child.writes.length > 0) writingChildren.add(row.id);
    }
  }
  return nodes.flatMap((n): WriteAgain[] => {
    if (n.kind === 'capability' && writes.has(n.capability))
      return [{ node_id: n.id, capability: n.capability }];
    if (n.kind === 'subflow' && writingChildren.has(n.automation_id))
      return [{ node_id: n.id, subflow: n.automation_id }];
    return [];
  });
}

/** Every step of a plan, map bodies included, in plan order. */
function allSteps(nodes: PlanNode[]): PlanNode[] {
  return nodes.flatMap((n) => [n, ...(n.kind === 'map' ? allSteps(n.body.nodes) : [])]);
}

/** Why a real (not dry) rerun cannot start now; the same refusal as running the automation. */
function pausedReason(loaded: Loaded): string | undefined {
  return loaded.run.dry_run === 0 && loaded.access.row.enabled !== 1
    ? 'Enable the automation before running it'
    : undefined;
}

async function choices(on: Db, loaded: Loaded): Promise<RerunPreview> {
  const { run, ran, live } = loaded;
  const rows = await on.selectFrom('run_nodes').selectAll().where('run_id', '=', run.id).execute();
  const again = stepsRunAgain(ran.plan, rows);
  const paused = pausedReason(loaded);
  const retryReason =
    run.status !== 'failed'
      ? `Only a failed run can be retried; this one ${RAN[run.status] ?? `is still ${run.status}`}`
      : run.parent_run_id
        ? `This run was started by run ${run.parent_run_id}; retry that run instead`
        : paused;
  const replaySteps = allSteps(live.plan.nodes);
  const replayReason = !TERMINAL_RUN.has(run.status)
    ? `The run is still ${run.status}; replay it once it has ended`
    : paused;
  return {
    run_id: run.id,
    dry_run: run.dry_run === 1,
    retry: {
      available: retryReason === undefined,
      ...(retryReason ? { reason: retryReason } : {}),
      version: ran.version,
      live_version: live.version,
      steps: again.map((n) => n.id),
      writes_again: await writesOf(on, again, ran.summary),
    },
    replay: {
      available: replayReason === undefined,
      ...(replayReason ? { reason: replayReason } : {}),
      version: live.version,
      live_version: live.version,
      steps: replaySteps.map((n) => n.id),
      writes_again: await writesOf(on, replaySteps, live.summary),
    },
  };
}

export function rerunsService(deps: Deps, options: { queued?: () => void } = {}) {
  const { db } = deps;

  return {
    /** What a retry and a replay of a run would do: the version that runs and the writes repeated. */
    async preview(actor: Actor, args: { automation_id?: unknown; run_id?: unknown }): Promise<RerunPreview> {
      return choices(db, await load(db, actor, args.automation_id, args.run_id));
    },

    /** Starts a retry or a replay of a run (controllers only); returns the new run. */
    async rerun(actor: Actor, args: { automation_id?: unknown; run_id?: unknown; mode?: unknown }) {
      if (args.mode !== 'retry' && args.mode !== 'replay') throw invalid('mode must be "retry" or "replay"');
      const mode: RerunMode = args.mode;
      const outcome = await db.transaction().execute(async (trx) => {
        const loaded = await load(trx, actor, args.automation_id, args.run_id);
        requireControl(loaded.access);
        const { run, ran, live } = loaded;
        if (deps.dialect === 'postgres') {
          // Two retries of one run at once would repeat its writes twice: they take turns.
          await trx.selectFrom('runs').select('id').where('id', '=', run.id).forUpdate().execute();
        }
        const choice = (await choices(trx, loaded))[mode];
        if (!choice.available) throw new DomainError('not_rerunnable', choice.reason as string);
        if (mode === 'retry') {
          const under = await trx
            .selectFrom('runs')
            .select('id')
            .where('rerun_of', '=', run.id)
            .where('cause', '=', 'retry')
            .where('status', 'not in', [...TERMINAL_RUN])
            .executeTakeFirst();
          if (under)
            throw new DomainError(
              'not_rerunnable',
              `A retry of this run is already under way: run ${under.id}`,
            );
        }
        const runId = await queueRun(trx, {
          automation: loaded.access.row,
          versionId: mode === 'retry' ? ran.id : live.id,
          cause: mode,
          dryRun: run.dry_run === 1,
          payload:
            mode === 'retry'
              ? (JSON.parse(run.trigger_json) as unknown)
              : replayPayload(JSON.parse(run.trigger_json), await personName(trx, actor.personId)),
          requestedBy: actor.personId,
          eventDepth: run.event_depth,
          rerunOf: run.id,
        });
        return { runId, version: choice.version, session: loaded.access.row.session_id };
      });
      options.queued?.();
      return {
        action: mode,
        run_id: outcome.runId,
        rerun_of: args.run_id as string,
        version: outcome.version,
        session_id: outcome.session,
      };
    },
  };
}

/**
 * A replay's input is the run's own. A manual run's input names who asked, so its replay names
 * the person replaying it; any other input (an event's, a schedule's, a hook's) is kept as it was.
 */
function replayPayload(payload: unknown, by: string): unknown {
  if (typeof payload === 'object' && payload !== null && (payload as { manual?: unknown }).manual === true)
    return { ...payload, by };
  return payload;
}

export type RerunsService = ReturnType<typeof rerunsService>;
