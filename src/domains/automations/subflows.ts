import type { Db } from '../../storage/schema.ts';
import { automationFor, controllers, type Person } from '../policies/automations.ts';
import type { PlanSummary } from '../../flowplan/summary.ts';
import {
  MAX_SUBFLOW_WALK,
  subflowCycle,
  type SubflowGraph,
  type SubflowTarget,
} from '../../flowplan/subflows.ts';

/**
 * Reads the live versions reachable from `start` through their subflow nodes, breadth first
 * (one query per step), within one workspace, at most MAX_SUBFLOW_WALK automations.
 */
export async function subflowGraph(
  on: Db,
  workspaceId: string,
  start: readonly string[],
): Promise<SubflowGraph> {
  const calls = new Map<string, readonly string[]>();
  const seen = new Set(start);
  let frontier = [...seen];
  while (frontier.length > 0) {
    if (seen.size > MAX_SUBFLOW_WALK) return { calls, complete: false };
    const rows = await on
      .selectFrom('automations')
      .innerJoin('flow_versions', 'flow_versions.id', 'automations.live_version_id')
      .select(['automations.id', 'flow_versions.summary_json'])
      .where('automations.workspace_id', '=', workspaceId)
      .where('automations.id', 'in', frontier)
      .execute();
    frontier = [];
    for (const row of rows) {
      const targets = (JSON.parse(row.summary_json) as Pick<PlanSummary, 'subflows'>).subflows;
      calls.set(row.id, targets);
      for (const id of targets) {
        if (seen.has(id)) continue;
        seen.add(id);
        frontier.push(id);
      }
    }
  }
  return { calls, complete: true };
}

/** The automations a plan's subflow nodes name that its acting person can open, and whether they may run them. */
export async function subflowTargetsFor(
  on: Db,
  acting: Person,
  ids: readonly string[],
): Promise<Map<string, SubflowTarget>> {
  const targets = new Map<string, SubflowTarget>();
  for (const id of ids) {
    const access = await automationFor(on, acting, id).catch(() => undefined);
    if (!access) continue;
    const live = await on
      .selectFrom('flow_versions')
      .select('summary_json')
      .where('id', '=', access.row.live_version_id)
      .executeTakeFirst();
    if (!live) continue;
    const summary = JSON.parse(live.summary_json) as { writes_transitively: boolean };
    targets.set(id, {
      writes: summary.writes_transitively,
      ...(access.canControl ? {} : { onlyRunBy: controllers(access.row) }),
    });
  }
  return targets;
}

/**
 * Why a run of automation `parent` may not start `childAutomationId` as a subflow now, in one
 * sentence worded like the engine's other node errors, or null when it may: the child must exist in the workspace, the parent's acting person
 * must be allowed to run it directly (the right edit_automation run checks), and it must not run
 * the parent again through its own subflows. Works inside a transaction.
 */
export async function subflowRefusal(
  db: Db,
  parent: { workspaceId: string; automationId: string | null; actingId: string },
  childAutomationId: string,
): Promise<string | null> {
  const acting = { workspaceId: parent.workspaceId, personId: parent.actingId };
  const child = await db
    .selectFrom('automations')
    .select(['id', 'scope'])
    .where('id', '=', childAutomationId)
    .where('workspace_id', '=', parent.workspaceId)
    .executeTakeFirst();
  if (!child)
    return `automation ${childAutomationId} does not exist in this workspace, so it cannot run as a subflow`;
  const access = await automationFor(db, acting, child.id).catch(() => undefined);
  if (!access?.canControl) {
    return `automation ${child.id} can be run only by ${controllers(child)}, and this automation’s acting person may not run it, so it cannot run as their subflow`;
  }
  // A draft's dry run belongs to no automation, so no call can lead back to it.
  if (parent.automationId === null) return null;
  const graph = await subflowGraph(db, parent.workspaceId, [child.id]);
  return subflowCycle(child.id, parent.automationId, graph)?.reason ?? null;
}
