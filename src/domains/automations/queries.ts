import type { Selectable } from 'kysely';
import { invalid } from '../../errors.ts';
import type { AutomationTable } from '../../storage/schema.ts';
import { automationFor, isAdmin } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';
import { hasWorkspaceModel } from '../agents/model-settings.ts';
import { personName } from '../workspace/artifacts.ts';
import { optionalBoolean } from './args.ts';
import type { StoredSummary } from './checks.ts';
import type { AutomationsContext, Notify, Scope } from './context.ts';
import { describeCapabilities, type DescribeArgs } from './describe.ts';
import type { FlowPlan, WriteApproval } from '../../flowplan/plan.ts';
import type { Trigger } from '../../flowplan/triggers.ts';
import { iso, latestRuns, runDetail } from './runs.ts';
import { subflowTargetsFor } from './subflows.ts';

type AutomationRow = Selectable<AutomationTable>;

export type DegradedReason =
  | 'connector_disconnected'
  | 'personal_connector_unavailable'
  | 'subflow_unavailable'
  | 'model_unavailable'
  | 'repeated_failures';

export const REPEATED_FAILURES = 5;

/** What the tools read: the automations a person can see, one in full, and what a plan may use. */
export function automationQueries(ctx: AutomationsContext) {
  const { db, urlOf, catalogueFor } = ctx;

  /** Why an automation cannot run as published right now, if it cannot. */
  async function degradedReason(
    row: AutomationRow,
    summary: StoredSummary,
    trigger: Trigger,
  ): Promise<DegradedReason | undefined> {
    const acting = { workspaceId: row.workspace_id, personId: row.acting_id };
    const catalogue = await catalogueFor(acting);
    const providers = catalogue.eventProviders();
    for (const ns of summary.namespaces) {
      const state = catalogue.namespaces.get(ns);
      if (state?.connected) continue;
      const personal = catalogue.connectors.some((c) => c.namespace === ns && c.personal);
      return summary.personal_connectors.length > 0 && personal
        ? 'personal_connector_unavailable'
        : 'connector_disconnected';
    }
    if (trigger.kind === 'connector_event' && !providers.get(trigger.provider)?.connected) {
      return 'connector_disconnected';
    }
    if (trigger.kind === 'github_event' && !providers.get('github')?.connected)
      return 'connector_disconnected';
    if (summary.subflows.length) {
      const targets = await subflowTargetsFor(db, acting, summary.subflows);
      if (summary.subflows.some((id) => !targets.has(id) || targets.get(id)?.onlyRunBy))
        return 'subflow_unavailable';
    }
    if (
      summary.uses_model &&
      !ctx.options.modelConfigured &&
      !(await hasWorkspaceModel(db, row.workspace_id))
    )
      return 'model_unavailable';
    if (row.consecutive_failures >= REPEATED_FAILURES) return 'repeated_failures';
    return undefined;
  }

  return {
    async describe(actor: Actor, args: DescribeArgs) {
      return describeCapabilities(await catalogueFor(actor), args);
    },

    async list(actor: Actor, args: { limit?: unknown }) {
      let limit = 50;
      if (args.limit !== undefined) {
        if (typeof args.limit !== 'number' || !Number.isFinite(args.limit))
          throw invalid('limit must be a number from 1 to 200');
        limit = Math.min(200, Math.max(1, Math.floor(args.limit)));
      }
      const admin = await isAdmin(db, actor);
      let query = db
        .selectFrom('automations')
        .innerJoin('flow_versions', 'flow_versions.id', 'automations.live_version_id')
        .selectAll('automations')
        .select(['flow_versions.version as live_version', 'flow_versions.summary_json'])
        .where('automations.workspace_id', '=', actor.workspaceId);
      if (!admin) {
        query = query.where((eb) =>
          eb.or([
            eb('automations.scope', '=', 'workspace'),
            eb('automations.created_by', '=', actor.personId),
          ]),
        );
      }
      const rows = await query
        .orderBy('automations.created_at', 'desc')
        .orderBy('automations.id', 'desc')
        .limit(limit + 1)
        .execute();
      const shown = rows.slice(0, limit);
      const automations = [];
      for (const row of shown) {
        const summary = JSON.parse(row.summary_json) as StoredSummary;
        const trigger = JSON.parse(row.trigger_json) as Trigger;
        const degraded = await degradedReason(row, summary, trigger);
        automations.push({
          automation_id: row.id,
          name: row.name,
          enabled: row.enabled === 1,
          ...(degraded ? { degraded_reason: degraded } : {}),
          trigger,
          scope: row.scope as Scope,
          can_control: row.scope === 'personal' ? row.created_by === actor.personId : admin,
          version: row.live_version,
          step_count: summary.steps.length,
          namespaces: summary.namespaces,
          session_id: row.session_id,
          ...(row.next_fire_at !== null ? { next_fire_at: iso(row.next_fire_at) } : {}),
          ...(row.last_fired_at !== null ? { last_fired_at: iso(row.last_fired_at) } : {}),
          consecutive_failures: row.consecutive_failures,
          created_at: iso(row.created_at) as string,
          url: urlOf(row.id),
        });
      }
      return { automations, truncated: rows.length > limit };
    },

    async read(
      actor: Actor,
      args: { automation_id?: unknown; include_plan?: unknown; include_runs?: unknown; run_id?: unknown },
    ) {
      const includePlan = optionalBoolean(args.include_plan, 'include_plan') ?? false;
      const includeRuns = optionalBoolean(args.include_runs, 'include_runs') ?? false;
      if (args.run_id !== undefined && typeof args.run_id !== 'string')
        throw invalid('run_id must be a string');
      const access = await automationFor(db, actor, args.automation_id);
      const row = access.row;
      const version = await db
        .selectFrom('flow_versions')
        .selectAll()
        .where('id', '=', row.live_version_id)
        .executeTakeFirstOrThrow();
      const summary = JSON.parse(version.summary_json) as StoredSummary;
      const trigger = JSON.parse(row.trigger_json) as Trigger;
      const degraded = await degradedReason(row, summary, trigger);
      return {
        automation_id: row.id,
        name: row.name,
        description: row.description,
        tags: JSON.parse(row.tags_json) as string[],
        ask: version.ask,
        steps: summary.steps,
        writes: summary.writes,
        namespaces: summary.namespaces,
        connectors: summary.connectors,
        personal_connectors: summary.personal_connectors,
        trigger,
        scope: row.scope as Scope,
        enabled: row.enabled === 1,
        ...(degraded ? { degraded_reason: degraded } : {}),
        can_control: access.canControl,
        created_by: await personName(db, row.created_by),
        version: version.version,
        flow_version_id: version.id,
        write_approval: version.write_approval as WriteApproval,
        notify: row.notify as Notify,
        cooldown_s: row.cooldown_s,
        session_id: row.session_id,
        url: urlOf(row.id),
        ...(row.next_fire_at !== null ? { next_fire_at: iso(row.next_fire_at) } : {}),
        ...(row.last_fired_at !== null ? { last_fired_at: iso(row.last_fired_at) } : {}),
        consecutive_failures: row.consecutive_failures,
        created_at: iso(row.created_at) as string,
        ...(includePlan ? { plan_json: JSON.parse(version.plan_json) as FlowPlan } : {}),
        ...(includeRuns ? await latestRuns(db, row.id) : {}),
        ...(args.run_id !== undefined ? { run: await runDetail(db, row.id, args.run_id as string) } : {}),
      };
    },
  };
}
