import { newId } from '../../ids.ts';
import type { Db } from '../workspace/access.ts';

/**
 * Posts to an automation's session: a notice by a person, or (author null) by the automation
 * itself; with a card, an approval or other card people act on. Returns the message id.
 */
export async function postToSession(
  on: Db,
  sessionId: string,
  authorId: string | null,
  body: string,
  card?: Record<string, unknown>,
): Promise<string> {
  const id = newId('msg');
  await on
    .insertInto('messages')
    .values({
      id,
      conversation_id: sessionId,
      author_id: authorId,
      kind: card ? 'card' : 'text',
      body,
      card_json: card ? JSON.stringify(card) : null,
      created_at: Date.now(),
    })
    .execute();
  return id;
}

/** Updates fields of a card already posted (an approval's status and who decided it). */
export async function updateCard(on: Db, messageId: string, patch: Record<string, unknown>): Promise<void> {
  const message = await on
    .selectFrom('messages')
    .select('card_json')
    .where('id', '=', messageId)
    .executeTakeFirst();
  const card = message?.card_json ? (JSON.parse(message.card_json) as Record<string, unknown>) : {};
  await on
    .updateTable('messages')
    .set({ card_json: JSON.stringify({ ...card, ...patch }) })
    .where('id', '=', messageId)
    .execute();
}
