import type { Selectable } from 'kysely';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { FlowTable, FlowVersionTable, Db } from '../../storage/schema.ts';
import { automationFor, isAdmin, requireControl, type AutomationAccess } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';
import { personName } from '../workspace/artifacts.ts';
import { optionalBoolean, optionalString } from './args.ts';
import { failedPlan, personalConnectorProblems, validateFor } from './checks.ts';
import type { AutomationsContext, Notify, Scope } from './context.ts';
import { checkDraftTarget, draftNotFound } from './drafts.ts';
import type { FlowPlan, WriteApproval } from '../../flowplan/plan.ts';
import { type Trigger, checkTrigger, nextFireAt, triggerText } from '../../flowplan/triggers.ts';
import { postToSession } from './session.ts';
import type { PlanError } from '../../flowplan/validate.ts';

const MAX_COOLDOWN_S = 30 * 24 * 3600;

export interface PublishArgs {
  automation_id?: unknown;
  flow_version_id?: unknown;
  trigger?: unknown;
  name?: unknown;
  description?: unknown;
  tags?: unknown;
  scope?: unknown;
  notify?: unknown;
  cooldown_s?: unknown;
  enabled?: unknown;
}

/** Publish's arguments checked on their own, before anything is read. */
function checkArgs(args: PublishArgs) {
  if (typeof args.flow_version_id !== 'string' || args.flow_version_id === '') {
    throw invalid(
      'flow_version_id is required for publish: the draft from draft_automation, or the live version to change only its trigger',
    );
  }
  const name = optionalString(args.name, 'name', 200);
  if (name !== undefined && name.trim() === '') throw invalid('name must not be empty');
  const description = optionalString(args.description, 'description', 2000);
  let tags: string[] | undefined;
  if (args.tags !== undefined) {
    if (
      !Array.isArray(args.tags) ||
      args.tags.some((t) => typeof t !== 'string' || t.trim() === '' || t.length > 50)
    ) {
      throw invalid('tags must be a list of non-empty strings of at most 50 characters');
    }
    if (args.tags.length > 20) throw invalid('tags may list at most 20 tags');
    tags = [...new Set((args.tags as string[]).map((t) => t.trim()))];
  }
  if (args.scope !== undefined && args.scope !== 'personal' && args.scope !== 'workspace') {
    throw invalid('scope must be personal or workspace');
  }
  if (args.notify !== undefined && !['off', 'problems', 'everyRun'].includes(args.notify as string)) {
    throw invalid('notify must be off, problems or everyRun');
  }
  if (
    args.cooldown_s !== undefined &&
    (typeof args.cooldown_s !== 'number' ||
      !Number.isInteger(args.cooldown_s) ||
      args.cooldown_s < 0 ||
      args.cooldown_s > MAX_COOLDOWN_S)
  ) {
    throw invalid(`cooldown_s must be a whole number of seconds from 0 to ${MAX_COOLDOWN_S}`);
  }
  return {
    flowVersionId: args.flow_version_id,
    name,
    description,
    tags,
    enabled: optionalBoolean(args.enabled, 'enabled'),
  };
}

/** What publishing writes, settled: the settings given, or kept from the automation. */
interface Settled {
  actor: Actor;
  actorName: string;
  version: Selectable<FlowVersionTable>;
  flow: Selectable<FlowTable>;
  plan: FlowPlan;
  name: string | undefined;
  description: string | undefined;
  tags: string[] | undefined;
  scope: Scope;
  actingId: string;
  trigger: Trigger;
  notify: Notify;
  cooldown: number;
  enabled: boolean;
  next: Date | null;
  now: number;
}

/** Moves an automation to the version (or only changes its trigger and settings) and says so in its session. */
/** The columns a publish sets, first time or again: who acts, the live version, its trigger. */
function liveColumns(s: Settled) {
  return {
    acting_id: s.actingId,
    live_version_id: s.version.id,
    trigger_kind: s.trigger.kind,
    trigger_json: JSON.stringify(s.trigger),
    notify: s.notify,
    cooldown_s: s.cooldown,
    enabled: s.enabled ? 1 : 0,
    next_fire_at: s.next?.getTime() ?? null,
  };
}

async function republish(trx: Db, access: AutomationAccess, s: Settled) {
  const row = access.row;
  await trx
    .updateTable('automations')
    .set({
      name: s.name ?? row.name,
      description: s.description ?? row.description,
      tags_json: s.tags ? JSON.stringify(s.tags) : row.tags_json,
      ...liveColumns(s),
      updated_at: s.now,
    })
    .where('id', '=', row.id)
    .execute();
  const sameVersion = row.live_version_id === s.version.id;
  await postToSession(
    trx,
    row.session_id,
    s.actor.personId,
    sameVersion
      ? `${s.actorName} changed the trigger: it runs ${triggerText(s.trigger)}.`
      : `${s.actorName} published version ${s.version.version}; it runs ${triggerText(s.trigger)}.`,
  );
  return { id: row.id, name: s.name ?? row.name, sessionId: row.session_id };
}

/** A new automation over the draft's flow, with its session (the publisher, and for a workspace one the admins). */
async function createAutomation(trx: Db, s: Settled) {
  const { actor } = s;
  const name = s.name as string;
  const id = newId('aut');
  const sessionId = newId('cnv');
  await trx
    .insertInto('conversations')
    .values({
      id: sessionId,
      workspace_id: actor.workspaceId,
      title: name,
      kind: 'session',
      archived: 0,
      created_at: s.now,
    })
    .execute();
  const participants = new Set([actor.personId]);
  if (s.scope === 'workspace') {
    const admins = await trx
      .selectFrom('people')
      .select('id')
      .where('workspace_id', '=', actor.workspaceId)
      .where('admin', '=', 1)
      .execute();
    for (const a of admins) participants.add(a.id);
  }
  await trx
    .insertInto('conversation_participants')
    .values([...participants].map((p) => ({ conversation_id: sessionId, person_id: p })))
    .execute();
  await trx
    .insertInto('automations')
    .values({
      id,
      workspace_id: actor.workspaceId,
      flow_id: s.flow.id,
      name,
      description: s.description ?? s.plan.description,
      tags_json: JSON.stringify(s.tags ?? []),
      scope: s.scope,
      created_by: actor.personId,
      ...liveColumns(s),
      session_id: sessionId,
      last_fired_at: null,
      consecutive_failures: 0,
      created_at: s.now,
      updated_at: s.now,
    })
    .execute();
  await trx.updateTable('flows').set({ automation_id: id }).where('id', '=', s.flow.id).execute();
  await postToSession(
    trx,
    sessionId,
    actor.personId,
    `${s.actorName} published “${name}” (version ${s.version.version}); it runs ${triggerText(s.trigger)}${s.enabled ? '' : ', once enabled'}. Its runs, approvals and notices land here.`,
  );
  return { id, name, sessionId };
}

/**
 * Makes a draft live with a trigger: a new automation, or (with `automation_id`) that
 * automation's next version; the live version again changes only the trigger and settings.
 */
export async function publish(ctx: AutomationsContext, actor: Actor, args: PublishArgs) {
  const { db, deps } = ctx;
  const { flowVersionId, name, description, tags, enabled: enabledArg } = checkArgs(args);
  const automationId = args.automation_id;

  const outcome = await db.transaction().execute(async (trx) => {
    // Publishes in one workspace take turns, so two that close a subflow cycle together cannot
    // both pass the check below (on SQLite, transactions already take turns).
    if (deps.dialect === 'postgres') {
      await trx
        .selectFrom('workspaces')
        .select('id')
        .where('id', '=', actor.workspaceId)
        .forNoKeyUpdate()
        .execute();
    }
    const admin = await isAdmin(trx, actor);
    const access = automationId !== undefined ? await automationFor(trx, actor, automationId) : undefined;
    if (access) requireControl(access);
    const version = await trx
      .selectFrom('flow_versions')
      .selectAll()
      .where('id', '=', flowVersionId)
      .where('workspace_id', '=', actor.workspaceId)
      .executeTakeFirst();
    if (!version) throw draftNotFound();
    const flow = await trx
      .selectFrom('flows')
      .selectAll()
      .where('id', '=', version.flow_id)
      .$call((q) => (deps.dialect === 'postgres' ? q.forUpdate() : q))
      .executeTakeFirstOrThrow();
    await checkDraftTarget(trx, actor, flow, access, name);

    const scope: Scope = access
      ? (access.row.scope as Scope)
      : ((args.scope as Scope | undefined) ?? 'personal');
    if (access && args.scope !== undefined && args.scope !== access.row.scope) {
      throw invalid(
        `scope stays ${access.row.scope} once published; publish the draft as a new automation to make it ${String(args.scope)}`,
      );
    }
    if (scope === 'workspace' && !admin) {
      throw new DomainError('forbidden', 'Only workspace admins can publish workspace automations');
    }
    // A personal automation acts as its creator; a workspace one as the admin publishing it.
    const actingId = scope === 'personal' ? (access?.row.created_by ?? actor.personId) : actor.personId;
    const acting: Actor = { ...actor, personId: actingId };

    const plan = JSON.parse(version.plan_json) as FlowPlan;
    const { result, catalogue } = await validateFor(
      ctx,
      trx,
      acting,
      plan,
      version.write_approval as WriteApproval,
      access?.row.id,
    );
    const { trigger, personalProvider } = checkTrigger(args.trigger, catalogue);
    const errors: PlanError[] = result.ok ? [] : [...result.errors];
    if (scope === 'workspace') errors.push(...personalConnectorProblems(plan, catalogue, personalProvider));
    if (errors.length) throw failedPlan(errors);

    const now = Date.now();
    const enabled = enabledArg ?? (access ? access.row.enabled === 1 : true);
    const settled: Settled = {
      actor,
      actorName: await personName(trx, actor.personId),
      version,
      flow,
      plan,
      name,
      description,
      tags,
      scope,
      actingId,
      trigger,
      notify: (args.notify as Notify | undefined) ?? (access?.row.notify as Notify | undefined) ?? 'problems',
      cooldown: (args.cooldown_s as number | undefined) ?? access?.row.cooldown_s ?? 0,
      enabled,
      next: enabled ? nextFireAt(trigger, new Date(now)) : null,
      now,
    };
    const published = access ? await republish(trx, access, settled) : await createAutomation(trx, settled);
    return { ...published, version: version.version, enabled, next: settled.next };
  });
  return {
    action: 'publish' as const,
    automation_id: outcome.id,
    name: outcome.name,
    version: outcome.version,
    enabled: outcome.enabled,
    session_id: outcome.sessionId,
    url: ctx.urlOf(outcome.id),
    ...(outcome.next ? { next_fire_at: outcome.next.toISOString() } : {}),
  };
}
