import { invalid } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import type { ActedBy, Actor } from '../workspace/actor.ts';
import { automationFor } from '../policies/automations.ts';
import { decider, mayDecide, parseApprovers } from '../policies/approvals.ts';
import type { Db } from '../../storage/schema.ts';
import { planDiff, type PlanDiff } from '../../flowplan/plan-diff.ts';
import type { FlowPlan, PlanNode, WriteApproval } from '../../flowplan/plan.ts';
import type { Trigger } from '../../flowplan/triggers.ts';
import { iso, runDetail, type RunOwner } from './runs.ts';
import { schedulePreview } from '../../flowplan/schedule-preview.ts';
import type { StoredSummary } from './checks.ts';
import { approvalCards, approvalsOfRun, capabilityLookup } from './approval-cards.ts';
import { allPlugins } from '../../capabilities/catalogue.ts';
import type { Capability, ConnectorPlugin } from '../../capabilities/capability.ts';
import { maskSecretKeys as maskSecrets } from './mask.ts';

/** Versions of a plan shown at once, newest first. */
export const VERSIONS_SHOWN = 50;

function* planNodes(nodes: PlanNode[], prefix = ''): Generator<[string, PlanNode]> {
  for (const n of nodes) {
    yield [`${prefix}${n.id}`, n];
    if (n.kind === 'map') yield* planNodes(n.body.nodes, `${prefix}${n.id}.`);
  }
}

/** A run node's key (`map[3].node` inside map items) as the plan node it runs. */
function planNodeId(key: string): string {
  return key.replace(/\[\d+\]/g, '');
}

/** Approvals waiting on this person, oldest first (at most 50), as their cards. */
async function approvalsAwaiting(
  on: Db,
  actor: Actor,
  capabilityOf: (key: string) => Capability | undefined,
) {
  const rows = await on
    .selectFrom('approvals')
    .innerJoin('automations', 'automations.id', 'approvals.automation_id')
    .select(['approvals.id', 'approvals.approvers_json', 'automations.created_by'])
    .where('approvals.workspace_id', '=', actor.workspaceId)
    .where('approvals.status', '=', 'pending')
    .orderBy('approvals.id', 'asc')
    .limit(500)
    .execute();
  const me = await decider(on, actor);
  const ids = rows
    .filter((r) => mayDecide(parseApprovers(r.approvers_json), r.created_by, me))
    .slice(0, 50)
    .map((r) => r.id);
  const cards = await approvalCards(on, actor, ids, capabilityOf);
  return ids.flatMap((id) => {
    const card = cards.get(id);
    return card ? [card] : [];
  });
}

/** What the automation pages show beyond what the tools return: versions, runs in full, waiting approvals. */
export function automationViews(deps: Deps, options: { plugins?: ConnectorPlugin[] } = {}) {
  const { db } = deps;
  const capabilityOf = capabilityLookup(allPlugins(options));

  /**
   * The versions of an automation's plan, newest first, each with who made it (the person, or an
   * agent for them) and what changed from the one before.
   */
  async function versions(actor: Actor, args: { automation_id?: unknown }) {
    const { row } = await automationFor(db, actor, args.automation_id);
    const rows = await db
      .selectFrom('flow_versions')
      .innerJoin('people', 'people.id', 'flow_versions.created_by')
      .select([
        'flow_versions.id',
        'flow_versions.version',
        'flow_versions.ask',
        'flow_versions.write_approval',
        'flow_versions.created_at',
        'flow_versions.summary_json',
        'flow_versions.plan_json',
        'flow_versions.made_by',
        'people.name as author',
      ])
      .where('flow_versions.flow_id', '=', row.flow_id)
      .orderBy('flow_versions.version', 'desc')
      .limit(VERSIONS_SHOWN + 1)
      .execute();
    const shape = (r: (typeof rows)[number]) => ({
      plan: JSON.parse(r.plan_json) as FlowPlan,
      ask: r.ask,
      write_approval: r.write_approval,
    });
    return {
      automation_id: row.id,
      live_version_id: row.live_version_id,
      truncated: rows.length > VERSIONS_SHOWN,
      versions: rows.slice(0, VERSIONS_SHOWN).map((r, i) => {
        const before = rows[i + 1];
        const summary = JSON.parse(r.summary_json) as StoredSummary;
        const changes: PlanDiff | undefined = before ? planDiff(shape(before), shape(r)) : undefined;
        return {
          flow_version_id: r.id,
          version: r.version,
          live: r.id === row.live_version_id,
          author: r.author,
          // Whether the author made it or an agent did for them (unknown for older versions).
          ...(r.made_by ? { made_by: r.made_by as ActedBy } : {}),
          created_at: iso(r.created_at) as string,
          ask: r.ask,
          write_approval: r.write_approval as WriteApproval,
          steps: summary.steps,
          plan_json: JSON.parse(r.plan_json) as FlowPlan,
          ...(changes ? { changes } : {}),
        };
      }),
    };
  }

  /** One run in full, for the person inspecting it (see `runInFull`). */
  async function inspectRun(actor: Actor, args: { automation_id?: unknown; run_id?: unknown }) {
    const { row } = await automationFor(db, actor, args.automation_id);
    if (typeof args.run_id !== 'string') throw invalid('run_id must be a string');
    return runInFull(db, row.id, args.run_id);
  }

  /** When an automation runs, in words and as its next firings in its zone. */
  async function schedule(actor: Actor, args: { automation_id?: unknown }, now = new Date()) {
    const { row } = await automationFor(db, actor, args.automation_id);
    return schedulePreview(JSON.parse(row.trigger_json) as Trigger, now);
  }

  /**
   * The latest run of each of these automations (ones `list` showed the person): what the
   * automations table shows as the last run, whatever started it.
   */
  async function lastRuns(actor: Actor, automationIds: string[]) {
    const last = new Map<string, { run_id: string; status: string; queued_at: string }>();
    if (automationIds.length === 0) return last;
    const latest = db
      .selectFrom('runs')
      .select((eb) => ['automation_id', eb.fn.max('id').as('id')])
      .where('workspace_id', '=', actor.workspaceId)
      .where('automation_id', 'in', automationIds)
      .groupBy('automation_id');
    const rows = await db
      .selectFrom('runs')
      .innerJoin(latest.as('latest'), 'latest.id', 'runs.id')
      .select(['runs.automation_id', 'runs.id', 'runs.status', 'runs.queued_at'])
      .execute();
    for (const r of rows) {
      if (r.automation_id === null) continue;
      last.set(r.automation_id, { run_id: r.id, status: r.status, queued_at: iso(r.queued_at) as string });
    }
    return last;
  }

  /** Approvals the person may decide that are still waiting. */
  const awaiting = (actor: Actor) => approvalsAwaiting(db, actor, capabilityOf);

  /** The approvals of one run of an automation the person can open, as their cards. */
  async function runApprovals(actor: Actor, args: { automation_id?: unknown; run_id?: unknown }) {
    const { row } = await automationFor(db, actor, args.automation_id);
    if (typeof args.run_id !== 'string') throw invalid('run_id must be a string');
    const run = await db
      .selectFrom('runs')
      .select('id')
      .where('id', '=', args.run_id)
      .where('automation_id', '=', row.id)
      .executeTakeFirst();
    return run ? approvalsOfRun(db, actor, run.id, capabilityOf) : null;
  }

  return { versions, inspectRun, schedule, lastRuns, awaiting, runApprovals };
}

export type AutomationViews = ReturnType<typeof automationViews>;

/**
 * One run in full, for the person inspecting it: per step its kind, status, attempts, timing,
 * error and output, with the input the run started from. Secret-looking values are masked. The
 * caller has checked that the person may open the automation (or the draft) it belongs to.
 */
export async function runInFull(db: Db, owner: RunOwner, runId: string) {
  const run = await runDetail(db, owner, runId, { full: true });
  if (!run) return null;
  const version = await db
    .selectFrom('flow_versions')
    .select(['version', 'plan_json'])
    .where('id', '=', run.flow_version_id as string)
    .executeTakeFirstOrThrow();
  const flowPlan = JSON.parse(version.plan_json) as FlowPlan;
  const plan = new Map(planNodes(flowPlan.nodes));
  return {
    ...run,
    // The steps as planned, so the page can show those that have not started and draw the plan.
    plan: { nodes: flowPlan.nodes, edges: flowPlan.edges ?? [] },
    flow_version_id: run.flow_version_id as string,
    version: version.version,
    trigger_payload: maskSecrets(run.trigger_payload),
    ...('output' in run ? { output: maskSecrets(run.output) } : {}),
    nodes: run.nodes.map((n) => {
      const step = plan.get(planNodeId(n.node_id));
      return {
        ...n,
        ...(step ? { kind: step.kind, ...(step.title ? { title: step.title } : {}) } : {}),
        ...(step?.kind === 'agent' ? { instructions: step.instructions } : {}),
        ...('input' in n ? { input: maskSecrets(n.input) } : {}),
        ...('output' in n ? { output: maskSecrets(n.output) } : {}),
      };
    }),
  };
}
