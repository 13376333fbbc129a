import type { Db } from '../../storage/schema.ts';
import { postMessage } from '../workspace/messages.ts';

export { updateCard } from '../workspace/messages.ts';

/**
 * Posts to an automation's session: a notice by a person, or (author null) by the automation
 * itself; with a card, an approval or other card people act on. Returns the message id.
 */
export function postToSession(
  on: Db,
  sessionId: string,
  authorId: string | null,
  body: string,
  card?: Record<string, unknown>,
): Promise<string> {
  return postMessage(on, { conversationId: sessionId, authorId, body, card });
}
