import { invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Db } from '../../storage/schema.ts';
import type { WriteOptions } from '../deps.ts';
import { automationFor, requireControl } from '../policies/automations.ts';
import { actedBy, type Actor } from '../workspace/actor.ts';
import { failedPlan, storedSummary, validateFor } from './checks.ts';
import type { AutomationsContext } from './context.ts';
import { draftNotFound } from './drafts.ts';
import type { WriteApproval } from '../../flowplan/plan.ts';

/*
 * Storing a draft version (draft_automation, the app's edits of a draft or an automation): the
 * plan checked by the validator, then written as the next version of its flow. Reading and
 * listing drafts, and where one may be published, are in drafts.ts.
 */

export interface DraftArgs {
  plan_json?: unknown;
  ask?: unknown;
  write_approval?: unknown;
  automation_id?: unknown;
  /** The caller's unpublished flow whose next version this draft is (editing a draft in the app). */
  flow_id?: unknown;
}

export interface DraftOptions extends Pick<WriteOptions, 'within'> {
  /** Which of Tandem's agents drafted it (`Builder`). */
  agent?: string;
  /** The trigger the draft proposes for publishing (a template's). */
  trigger?: unknown;
}

/** The caller's own flow that no automation has yet; any other is not found. */
async function unpublishedFlow(on: Db, actor: Actor, flowId: unknown): Promise<string> {
  if (typeof flowId !== 'string' || flowId === '') throw draftNotFound();
  const flow = await on
    .selectFrom('flows')
    .select(['id', 'automation_id'])
    .where('id', '=', flowId)
    .where('workspace_id', '=', actor.workspaceId)
    .where('created_by', '=', actor.personId)
    .executeTakeFirst();
  if (!flow) throw draftNotFound();
  if (flow.automation_id !== null) {
    throw invalid(`That draft is published as automation ${flow.automation_id}; edit it there`);
  }
  return flow.id;
}

/**
 * Checks a plan and stores it as a draft version: of a new flow, or (with `automation_id`, which
 * the person must control) the automation's next version. Nothing is stored when it fails.
 */
export async function draftVersion(
  ctx: AutomationsContext,
  actor: Actor,
  args: DraftArgs,
  options: DraftOptions = {},
) {
  const { db, deps } = ctx;
  if (typeof args.ask !== 'string' || args.ask.trim() === '') {
    throw invalid('ask is required: the request the plan implements, in one sentence');
  }
  if (args.ask.length > 1000) throw invalid('ask must be at most 1000 characters: one sentence');
  const ask = args.ask.trim();
  const writeApproval: WriteApproval = (args.write_approval ?? 'required') as WriteApproval;
  if (writeApproval !== 'required' && writeApproval !== 'automatic') {
    throw invalid('write_approval must be required or automatic');
  }
  const automationId = args.automation_id;
  if (automationId !== undefined) requireControl(await automationFor(db, actor, automationId));
  if (args.flow_id !== undefined && automationId !== undefined) {
    throw invalid('pass automation_id or flow_id, not both');
  }
  if (args.flow_id !== undefined) await unpublishedFlow(db, actor, args.flow_id);
  const { result, catalogue, subflows } = await validateFor(
    ctx,
    db,
    actor,
    args.plan_json,
    writeApproval,
    automationId as string | undefined,
  );
  if (!result.ok) throw failedPlan(result.errors);
  const summary = storedSummary(result.plan, catalogue, subflows);
  const stored = await db.transaction().execute(async (trx) => {
    let flowId: string;
    if (automationId !== undefined) {
      const access = await automationFor(trx, actor, automationId);
      requireControl(access);
      flowId = access.row.flow_id;
      if (deps.dialect === 'postgres') {
        await trx.selectFrom('flows').select('id').where('id', '=', flowId).forUpdate().execute();
      }
    } else if (args.flow_id !== undefined) {
      flowId = await unpublishedFlow(trx, actor, args.flow_id);
      if (deps.dialect === 'postgres') {
        await trx.selectFrom('flows').select('id').where('id', '=', flowId).forUpdate().execute();
      }
    } else {
      flowId = newId('flw');
      await trx
        .insertInto('flows')
        .values({
          id: flowId,
          workspace_id: actor.workspaceId,
          created_by: actor.personId,
          automation_id: null,
          created_at: Date.now(),
        })
        .execute();
    }
    const last = await trx
      .selectFrom('flow_versions')
      .select((eb) => eb.fn.max('version').as('version'))
      .where('flow_id', '=', flowId)
      .executeTakeFirst();
    const version = Number(last?.version ?? 0) + 1;
    const id = newId('fv');
    await trx
      .insertInto('flow_versions')
      .values({
        id,
        flow_id: flowId,
        workspace_id: actor.workspaceId,
        version,
        created_by: actor.personId,
        ask,
        write_approval: writeApproval,
        created_at: Date.now(),
        summary_json: JSON.stringify(summary),
        plan_json: JSON.stringify(result.plan),
        // Made by the person, or by an agent for them, as the way the call came in says.
        made_by: actedBy(actor),
        agent: options.agent ?? null,
        trigger_json: options.trigger === undefined ? null : JSON.stringify(options.trigger),
      })
      .execute();
    await options.within?.(trx, { flow_version_id: id, flow_id: flowId, version });
    return { id, flowId, version };
  });
  return {
    kind: 'plan' as const,
    flow_version_id: stored.id,
    flow_id: stored.flowId,
    version: stored.version,
    ...(automationId !== undefined ? { automation_id: automationId as string } : {}),
    ask,
    steps: summary.steps,
    writes: summary.writes,
    namespaces: summary.namespaces,
    connectors: summary.connectors,
    personal_connectors: summary.personal_connectors,
    write_approval: writeApproval,
  };
}
