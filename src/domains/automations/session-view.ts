import { approversInWords, decider, mayDecide, parseApprovers } from '../policies/approvals.ts';
import { sessionFor } from '../policies/sessions.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { iso } from './runs.ts';

/** An approval card's state as the session shows it: the decision, who made it, when, and whether the reader may make it. */
interface ApprovalState {
  status: string;
  approvers: string;
  can_decide: boolean;
  decided_by?: string;
  decided_at?: string;
  note?: string;
  expires_at: string;
}

/** The current state of the approvals behind a session's cards, keyed by approval id. */
async function approvalStates(
  on: Db,
  actor: Actor,
  approvalIds: string[],
): Promise<Map<string, ApprovalState>> {
  const states = new Map<string, ApprovalState>();
  if (approvalIds.length === 0) return states;
  const rows = await on
    .selectFrom('approvals')
    .innerJoin('automations', 'automations.id', 'approvals.automation_id')
    .leftJoin('people', 'people.id', 'approvals.decided_by')
    .select([
      'approvals.id',
      'approvals.status',
      'approvals.approvers_json',
      'approvals.decided_at',
      'approvals.note',
      'approvals.expires_at',
      'automations.created_by',
      'people.name as decided_by',
    ])
    .where('approvals.id', 'in', approvalIds)
    .where('approvals.workspace_id', '=', actor.workspaceId)
    .execute();
  const me = await decider(on, actor);
  for (const r of rows) {
    const approvers = parseApprovers(r.approvers_json);
    states.set(r.id, {
      status: r.status,
      approvers: approversInWords(approvers),
      can_decide: r.status === 'pending' && mayDecide(approvers, r.created_by, me),
      ...(r.decided_by ? { decided_by: r.decided_by } : {}),
      ...(r.decided_at !== null && r.status !== 'pending' ? { decided_at: iso(r.decided_at) } : {}),
      ...(r.note ? { note: r.note } : {}),
      expires_at: iso(r.expires_at) as string,
    });
  }
  return states;
}

/**
 * An automation's session: where its runs, approvals and notices land. Readable by its
 * participants and by everyone who can open the automation.
 */
export async function sessionView(db: Db, actor: Actor, sessionId: unknown) {
  // Who may see a session is the policies module's to say.
  const { conversation, automationId } = await sessionFor(db, actor, sessionId);
  const owner = automationId === undefined ? undefined : { id: automationId };
  const messages = await db
    .selectFrom('messages')
    .leftJoin('people', 'people.id', 'messages.author_id')
    .select([
      'messages.id',
      'messages.kind',
      'messages.body',
      'messages.card_json',
      'messages.created_at',
      'people.name as author',
    ])
    .where('messages.conversation_id', '=', conversation.id)
    .orderBy('messages.created_at', 'desc')
    .orderBy('messages.id', 'desc')
    .limit(200)
    .execute();
  const cards = new Map(
    messages.flatMap((m) =>
      m.card_json ? [[m.id, JSON.parse(m.card_json) as Record<string, unknown>]] : [],
    ),
  );
  // An approval card shows the decision as stored, and whether this reader may make it.
  const approvalIds = [...cards.values()].flatMap((c) =>
    c.type === 'approval' && typeof c.approval_id === 'string' ? [c.approval_id] : [],
  );
  const states = await approvalStates(db, actor, approvalIds);
  return {
    session_id: conversation.id,
    title: conversation.title,
    ...(owner ? { automation_id: owner.id } : {}),
    messages: messages.reverse().map((m) => {
      const card = cards.get(m.id);
      const state = card ? states.get(card.approval_id as string) : undefined;
      return {
        message_id: m.id,
        kind: m.kind,
        ...(m.author ? { author: m.author } : {}),
        body: m.body,
        ...(card ? { card: state ? { ...card, ...state } : card } : {}),
        created_at: iso(m.created_at) as string,
      };
    }),
  };
}
