import { newId } from '../../ids.ts';
import type { Db } from '../../storage/schema.ts';

/** An agent's reply is kept to what a person's comment may hold. */
export const AGENT_REPLY_MAX = 20_000;

/**
 * Posts an agent's reply in a thread, attributed to the agent (no person wrote it). It records no
 * mentions and emits no event, so an agent's reply never sets an agent or automation going, and
 * `request_id` is unique: a request has at most one reply, whoever tries to post a second.
 */
export async function insertAgentReply(
  trx: Db,
  reply: { threadId: string; agent: string; requestId: string; body: string },
): Promise<string> {
  const id = newId('cmt');
  const body =
    reply.body.length > AGENT_REPLY_MAX
      ? `${reply.body.slice(0, AGENT_REPLY_MAX - 40).trimEnd()}\n\n(The rest of this reply was cut.)`
      : reply.body;
  await trx
    .insertInto('comments')
    .values({
      id,
      thread_id: reply.threadId,
      author_id: null,
      agent: reply.agent,
      request_id: reply.requestId,
      body,
      deleted: 0,
      created_at: Date.now(),
    })
    .execute();
  return id;
}
