import { newId } from '../../ids.ts';
import { maskDeep, maskSecrets } from '../../observability/secrets.ts';
import type { Db } from '../../storage/schema.ts';

/** A message in a conversation (a room or an automation's session): text, or a card people act on. */
export interface NewMessage {
  conversationId: string;
  /** The person who posted it, or null for the automation itself. */
  authorId: string | null;
  body: string;
  card?: Record<string, unknown> | undefined;
}

/** The one writer of `messages`: posts one in the caller's transaction (secrets masked) and returns its id. */
export async function postMessage(on: Db, message: NewMessage): Promise<string> {
  const id = newId('msg');
  await on
    .insertInto('messages')
    .values({
      id,
      conversation_id: message.conversationId,
      author_id: message.authorId,
      kind: message.card ? 'card' : 'text',
      body: maskSecrets(message.body),
      card_json: message.card ? JSON.stringify(maskDeep(message.card)) : null,
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
