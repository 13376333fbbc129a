import { DomainError } from '../../errors.ts';
import type { Actor } from '../workspace/actor.ts';
import { isParticipant, type Conversation } from './artifacts.ts';
import type { Db } from '../../storage/schema.ts';
import { automationFor } from './automations.ts';

export const sessionNotFound = () => new DomainError('not_found', 'Session not found');

/**
 * An automation's session the person may see: anyone who can open the automation it belongs to,
 * and anyone taking part in it (an approver it was posted to). Anything else, an id of another
 * workspace or of a conversation that is not a session, is not found.
 */
export async function sessionFor(
  on: Db,
  actor: Actor,
  sessionId: unknown,
): Promise<{ conversation: Conversation; automationId: string | undefined }> {
  if (typeof sessionId !== 'string' || sessionId === '') throw sessionNotFound();
  const conversation = await on
    .selectFrom('conversations')
    .selectAll()
    .where('id', '=', sessionId)
    .where('workspace_id', '=', actor.workspaceId)
    .where('kind', '=', 'session')
    .executeTakeFirst();
  if (!conversation) throw sessionNotFound();
  const owner = await on
    .selectFrom('automations')
    .select('id')
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  const access = owner ? await automationFor(on, actor, owner.id).catch(() => undefined) : undefined;
  if (!access && !(await isParticipant(on, sessionId, actor.personId))) throw sessionNotFound();
  return { conversation, automationId: owner?.id };
}
