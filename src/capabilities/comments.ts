import { z } from 'zod';
import { defineCapability, defineNamespace, domain } from './capability.ts';

/** Comment threads on documents and pages, as the automation's acting person. */
export const comments = defineNamespace({
  namespace: 'comments',
  name: 'Comments',
  capabilities: [
    defineCapability({
      name: 'add_comment',
      kind: 'write',
      describe:
        'Start a comment thread on a document or page (anchored when anchor_excerpt is given), or reply to one.',
      input: z.strictObject({
        document_id: z.string().min(1).describe('A document id.'),
        body: z.string().min(1).max(20_000),
        anchor_excerpt: z.string().optional(),
        thread_id: z.string().optional(),
      }),
      output: z.object({ thread_id: z.string(), comment_id: z.string() }),
      async run(input, ctx) {
        const result = await domain(() =>
          ctx.services.comments.add(
            ctx.actor,
            {
              document_id: input.document_id,
              body_markdown: input.body,
              anchor_excerpt: input.anchor_excerpt,
              thread_id: input.thread_id,
            },
            {
              within: (trx, r) => ctx.within(trx, { thread_id: r.thread_id, comment_id: r.comment_id }),
              origin: ctx.origin,
            },
          ),
        );
        return {
          thread_id: result.thread_id,
          comment_id: 'comment_id' in result ? result.comment_id : result.thread_id,
        };
      },
    }),
  ],
});
