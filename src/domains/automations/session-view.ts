import type { Capability } from '../../capabilities/capability.ts';
import { approvalCards } from './approval-cards.ts';
import { sessionFor } from '../policies/sessions.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { iso } from './runs.ts';

/**
 * An automation's session: where its runs, approvals and notices land. Readable by its
 * participants and by everyone who can open the automation.
 */
export async function sessionView(
  db: Db,
  actor: Actor,
  sessionId: unknown,
  capabilityOf: (key: string) => Capability | undefined,
) {
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
  const states = await approvalCards(db, actor, approvalIds, capabilityOf);
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
