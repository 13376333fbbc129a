import type { Capability, ConnectorPlugin } from '../../capabilities/capability.ts';
import type { Db } from '../../storage/schema.ts';
import { approvalFor, approversInWords, decider, mayDecide, parseApprovers } from '../policies/approvals.ts';
import type { Actor } from '../workspace/actor.ts';
import { writesAfterApproval, type WriteAfterApproval } from './approval-writes.ts';
import { iso } from './runs.ts';

/** An approval as every place that shows it draws its card: the session, Home, the run, Notifications. */
export interface ApprovalCardView {
  type: 'approval';
  approval_id: string;
  run_id: string;
  node_id: string;
  automation_id: string;
  automation_name: string;
  session_id: string;
  status: string;
  message: string;
  approvers: string;
  /** Whether the reader may decide it now. */
  can_decide: boolean;
  decided_by?: string;
  decided_at?: string;
  note?: string;
  created_at: string;
  expires_at: string;
  /** While it waits: the writes approving lets happen, as they would be sent now. */
  writes?: WriteAfterApproval[];
}

/** The capabilities of these plugins by key, to say what a step writes. */
export function capabilityLookup(plugins: ConnectorPlugin[]): (key: string) => Capability | undefined {
  const byKey = new Map(plugins.flatMap((p) => p.capabilities).map((c) => [c.key, c]));
  return (key) => byKey.get(key);
}

/**
 * The cards of these approvals (of the reader's workspace; ids of others are left out). The
 * caller has settled that the reader may see them (a session they can read, approvals they may
 * decide, or `approvalCard`'s own check); targets of the writes are named only when the reader can
 * open them. Writes are worked out for waiting approvals only.
 */
export async function approvalCards(
  on: Db,
  actor: Actor,
  ids: string[],
  capabilityOf: (key: string) => Capability | undefined,
): Promise<Map<string, ApprovalCardView>> {
  const cards = new Map<string, ApprovalCardView>();
  if (ids.length === 0) return cards;
  const rows = await on
    .selectFrom('approvals')
    .innerJoin('automations', 'automations.id', 'approvals.automation_id')
    .innerJoin('runs', 'runs.id', 'approvals.run_id')
    .leftJoin('people', 'people.id', 'approvals.decided_by')
    .select([
      'approvals.id',
      'approvals.run_id',
      'approvals.node_id',
      'approvals.node_key',
      'approvals.session_id',
      'approvals.message',
      'approvals.status',
      'approvals.approvers_json',
      'approvals.decided_at',
      'approvals.note',
      'approvals.expires_at',
      'approvals.created_at',
      'automations.id as automation_id',
      'automations.name as automation_name',
      'automations.created_by',
      'runs.flow_version_id',
      'runs.trigger_json',
      'people.name as decided_by',
    ])
    .where('approvals.id', 'in', ids)
    .where('approvals.workspace_id', '=', actor.workspaceId)
    .execute();
  const me = await decider(on, actor);
  const names = new Map<string, string | undefined>();
  const automationName = async (id: string) => {
    if (!names.has(id)) {
      const row = await on
        .selectFrom('automations')
        .select('name')
        .where('id', '=', id)
        .where('workspace_id', '=', actor.workspaceId)
        .executeTakeFirst();
      names.set(id, row?.name);
    }
    return names.get(id);
  };
  const plans = new Map<string, string>();
  for (const r of rows) {
    const approvers = parseApprovers(r.approvers_json);
    let writes: WriteAfterApproval[] | undefined;
    if (r.status === 'pending') {
      let plan = plans.get(r.flow_version_id);
      if (plan === undefined) {
        plan = (
          await on
            .selectFrom('flow_versions')
            .select('plan_json')
            .where('id', '=', r.flow_version_id)
            .executeTakeFirstOrThrow()
        ).plan_json;
        plans.set(r.flow_version_id, plan);
      }
      writes = await writesAfterApproval(
        { db: on, actor, capabilityOf, automationName },
        { id: r.run_id, trigger_json: r.trigger_json, plan_json: plan },
        r.node_key,
      );
    }
    cards.set(r.id, {
      type: 'approval',
      approval_id: r.id,
      run_id: r.run_id,
      node_id: r.node_id,
      automation_id: r.automation_id,
      automation_name: r.automation_name,
      session_id: r.session_id,
      status: r.status,
      message: r.message,
      approvers: approversInWords(approvers),
      can_decide: r.status === 'pending' && mayDecide(approvers, r.created_by, me),
      ...(r.decided_by ? { decided_by: r.decided_by } : {}),
      ...(r.decided_at !== null && r.status !== 'pending' ? { decided_at: iso(r.decided_at) as string } : {}),
      ...(r.note ? { note: r.note } : {}),
      created_at: iso(r.created_at) as string,
      expires_at: iso(r.expires_at) as string,
      ...(writes ? { writes } : {}),
    });
  }
  return cards;
}

/** One approval's card, for anyone who may see the approval (the policies module says who). */
export async function approvalCard(
  on: Db,
  actor: Actor,
  approvalId: unknown,
  capabilityOf: (key: string) => Capability | undefined,
): Promise<ApprovalCardView> {
  const { approval } = await approvalFor(on, actor, approvalId);
  const card = (await approvalCards(on, actor, [approval.id], capabilityOf)).get(approval.id);
  return card as ApprovalCardView;
}

/** The approvals of one run the reader may see, newest last (the run's page shows them). */
export async function approvalsOfRun(
  on: Db,
  actor: Actor,
  runId: string,
  capabilityOf: (key: string) => Capability | undefined,
): Promise<ApprovalCardView[]> {
  const ids = await on
    .selectFrom('approvals')
    .select('id')
    .where('run_id', '=', runId)
    .where('workspace_id', '=', actor.workspaceId)
    .orderBy('id', 'asc')
    .limit(50)
    .execute();
  const cards = await approvalCards(
    on,
    actor,
    ids.map((r) => r.id),
    capabilityOf,
  );
  return [...cards.values()].sort((a, b) => a.approval_id.localeCompare(b.approval_id));
}
