import { z } from 'zod';
import { StepError } from '../errors.ts';
import { conversationFor } from '../domains/policies/artifacts.ts';
import { postMessage } from '../domains/workspace/messages.ts';
import { defineCapability, defineNamespace, domain } from './capability.ts';

/** Messages in conversations the automation's acting person takes part in. */
export const conversations = defineNamespace({
  namespace: 'conversations',
  name: 'Conversations',
  capabilities: [
    defineCapability({
      name: 'post_message',
      kind: 'write',
      describe: 'Post a message to a conversation; the automation’s session by default.',
      input: z.strictObject({
        text: z.string().min(1).max(20_000),
        conversation_id: z.string().optional(),
      }),
      output: z.object({ message_id: z.string(), conversation_id: z.string() }),
      run(input, ctx) {
        const { db } = ctx.services.deps;
        return domain(() =>
          db.transaction().execute(async (trx) => {
            const conversationId =
              input.conversation_id === undefined
                ? ctx.sessionId
                : (await conversationFor(trx, ctx.actor, input.conversation_id)).id;
            const room = await trx
              .selectFrom('conversations')
              .select('archived')
              .where('id', '=', conversationId)
              .executeTakeFirstOrThrow();
            if (room.archived === 1)
              throw new StepError('That conversation is archived, so nothing was posted.');
            const id = await postMessage(trx, {
              conversationId,
              authorId: ctx.actor.personId,
              body: String(input.text),
            });
            const result = { message_id: id, conversation_id: conversationId };
            await ctx.within(trx, result);
            return result;
          }),
        );
      },
    }),
  ],
});
