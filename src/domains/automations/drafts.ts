import type { Selectable } from 'kysely';
import { DomainError, invalid } from '../../errors.ts';
import type { FlowTable, Db } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';
import { automationFor, type AutomationAccess } from '../policies/automations.ts';
import type { ActedBy, Actor } from '../workspace/actor.ts';
import type { StoredSummary } from './checks.ts';
import type { Trigger } from '../../flowplan/triggers.ts';

/*
 * Drafts as they are read: the person's unpublished drafts (`draftsService`) and where a draft may
 * be published (`checkDraftTarget`). Storing one is draft-version.ts. Every version starts as a draft.
 */

/** Where the app opens a draft to review it, set its trigger and publish it. */
export function draftUrl(publicUrl: string, flowVersionId: string): string {
  return `${publicUrl.replace(/\/$/, '')}/automations/drafts/${flowVersionId}`;
}

/**
 * Drafts that were never published (their flow has no automation yet) belong to the person who
 * drafted them: only they see them listed or can open one. Published automations are read with
 * read_automation instead.
 */
export function draftsService(deps: Deps, options: { publicUrl?: string | undefined } = {}) {
  const { db } = deps;
  const publicUrl = options.publicUrl ?? 'http://127.0.0.1:8787';

  const shape = (r: {
    id: string;
    flow_id: string;
    version: number;
    ask: string;
    write_approval: string;
    created_at: number;
    summary_json: string;
    made_by: string | null;
    agent: string | null;
    author: string;
    name: string;
  }) => {
    const summary = JSON.parse(r.summary_json) as StoredSummary;
    return {
      flow_version_id: r.id,
      flow_id: r.flow_id,
      version: r.version,
      name: r.name,
      ask: r.ask,
      write_approval: r.write_approval as 'required' | 'automatic',
      steps: summary.steps,
      writes: summary.writes,
      author: r.author,
      /** The person themselves, an agent for them, or one of Tandem's agents (`agent` names it). */
      made_by: (r.made_by ?? 'person') as ActedBy,
      ...(r.agent ? { agent: r.agent } : {}),
      created_at: new Date(r.created_at).toISOString(),
      url: draftUrl(publicUrl, r.id),
    };
  };

  const mine = (actor: Actor) =>
    db
      .selectFrom('flow_versions')
      .innerJoin('flows', 'flows.id', 'flow_versions.flow_id')
      .innerJoin('people', 'people.id', 'flow_versions.created_by')
      .select([
        'flow_versions.id',
        'flow_versions.flow_id',
        'flow_versions.version',
        'flow_versions.ask',
        'flow_versions.write_approval',
        'flow_versions.created_at',
        'flow_versions.summary_json',
        'flow_versions.made_by',
        'flow_versions.agent',
        'people.name as author',
      ])
      .where('flow_versions.workspace_id', '=', actor.workspaceId)
      .where('flow_versions.created_by', '=', actor.personId);

  const named = <T extends { plan_json: string }>(r: T) => {
    const plan = JSON.parse(r.plan_json) as Record<string, unknown>;
    return { ...r, name: typeof plan.name === 'string' ? plan.name : 'Untitled', plan };
  };

  return {
    /** The caller's unpublished drafts, newest first: the latest version of each unpublished flow. */
    async list(actor: Actor, limit = 50) {
      const latest = db
        .selectFrom('flow_versions')
        .select((eb) => ['flow_id', eb.fn.max('version').as('version')])
        .where('workspace_id', '=', actor.workspaceId)
        .where('created_by', '=', actor.personId)
        .groupBy('flow_id');
      const rows = await mine(actor)
        .innerJoin(latest.as('latest'), (j) =>
          j
            .onRef('latest.flow_id', '=', 'flow_versions.flow_id')
            .onRef('latest.version', '=', 'flow_versions.version'),
        )
        .select('flow_versions.plan_json')
        .where('flows.automation_id', 'is', null)
        .orderBy('flow_versions.id', 'desc')
        .limit(Math.min(Math.max(1, limit), 200))
        .execute();
      return { drafts: rows.map((r) => shape(named(r))) };
    },
    /**
     * One of the caller's drafts with its plan and the trigger it proposes; anyone else's is not
     * found. A draft published since names its automation.
     */
    async read(actor: Actor, flowVersionId: unknown) {
      const missing = () => new DomainError('not_found', 'Draft not found');
      if (typeof flowVersionId !== 'string' || flowVersionId === '') throw missing();
      const row = await mine(actor)
        .select(['flow_versions.plan_json', 'flow_versions.trigger_json', 'flows.automation_id'])
        .where('flow_versions.id', '=', flowVersionId)
        .executeTakeFirst();
      if (!row) throw missing();
      let automation: { automation_id: string; enabled: boolean; live: boolean } | undefined;
      if (row.automation_id !== null) {
        const access = await automationFor(db, actor, row.automation_id).catch(() => undefined);
        if (!access?.canControl) throw missing();
        automation = {
          automation_id: access.row.id,
          enabled: access.row.enabled === 1,
          live: access.row.live_version_id === row.id,
        };
      }
      const { plan, ...rest } = named(row);
      return {
        ...shape(rest),
        plan_json: plan,
        ...(row.trigger_json ? { trigger: JSON.parse(row.trigger_json) as Trigger } : {}),
        ...(automation ? { automation } : {}),
      };
    },
  };
}

export type DraftsService = ReturnType<typeof draftsService>;

export const draftNotFound = () =>
  new DomainError('not_found', 'Draft not found: pass a flow_version_id returned by draft_automation');

/**
 * Whether the draft may be published where it is asked to be: into the automation whose flow it
 * belongs to, or as a new automation when its flow has none yet. A draft the caller cannot open is
 * not found, whichever automation it is published into.
 */
export async function checkDraftTarget(
  trx: Db,
  actor: Actor,
  flow: Selectable<FlowTable>,
  access: AutomationAccess | undefined,
  name: string | undefined,
): Promise<void> {
  if (access) {
    if (flow.id === access.row.flow_id) return;
    const visible =
      flow.automation_id === null
        ? flow.created_by === actor.personId
        : (await automationFor(trx, actor, flow.automation_id).catch(() => undefined)) !== undefined;
    if (!visible) throw draftNotFound();
    throw new DomainError('forbidden', 'That draft is not a version of this automation');
  }
  if (flow.created_by !== actor.personId && flow.automation_id === null) throw draftNotFound();
  if (flow.automation_id !== null) {
    const owner = await automationFor(trx, actor, flow.automation_id).catch(() => undefined);
    if (!owner) throw draftNotFound();
    throw invalid(
      `That draft is a version of automation ${flow.automation_id}; pass automation_id ${flow.automation_id} to publish it there`,
    );
  }
  if (name === undefined) throw invalid('name is required to publish a new automation');
}
