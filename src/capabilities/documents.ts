import { z } from 'zod';
import { documentRow } from '../contract/documents.ts';
import { defineCapability, defineNamespace, domain } from './capability.ts';

const documentId = z.string().min(1).describe('A document id.');
const markdown = z.string().max(60_000);

/** What a step gets of each listed document. */
const listedDocument = documentRow.pick({
  document_id: true,
  title: true,
  type: true,
  version: true,
  characters: true,
});

/** Documents, read and written as the automation's acting person. */
export const documents = defineNamespace({
  namespace: 'documents',
  name: 'Documents',
  capabilities: [
    defineCapability({
      name: 'read_document',
      kind: 'read',
      describe: 'Read a document’s markdown (an html_app gives its HTML, a table its markdown table).',
      input: z.strictObject({
        document_id: documentId,
        offset: z.number().int().min(0).optional(),
        window: z.number().int().min(1).max(24_000).optional(),
      }),
      output: z.object({
        document_id: z.string(),
        title: z.string(),
        markdown: z.string(),
        version: z.number(),
        size_chars: z.number(),
        truncated: z.boolean(),
      }),
      large: true,
      async run(input, ctx) {
        const doc = await domain(() => ctx.services.documents.read(ctx.actor, input));
        return {
          document_id: doc.document_id,
          title: doc.title,
          markdown: doc.markdown,
          version: doc.version,
          size_chars: doc.size_chars,
          truncated: doc.truncated,
        };
      },
    }),
    defineCapability({
      name: 'list_documents',
      kind: 'read',
      describe: 'List documents the automation’s person can open, newest first.',
      input: z.strictObject({
        scope: z.enum(['mine', 'shared', 'pod', 'org']).optional(),
        pod_id: z.string().optional(),
        query: z.string().optional(),
        limit: z.number().int().min(1).max(50).optional(),
      }),
      output: z.object({ documents: z.array(listedDocument), truncated: z.boolean() }),
      async run(input, ctx) {
        const listed = await domain(() => ctx.services.documents.list(ctx.actor, input));
        return {
          documents: listed.documents.map((d) => ({
            document_id: d.document_id,
            title: d.title,
            type: d.type,
            version: d.version,
            ...(d.characters !== undefined ? { characters: d.characters } : {}),
          })),
          truncated: listed.truncated,
        };
      },
    }),
    defineCapability({
      name: 'create_document',
      kind: 'write',
      describe:
        'Create a markdown document (in the automation’s session unless a scope or conversation is given).',
      input: z.strictObject({
        title: z.string().min(1).max(500),
        content_markdown: markdown.optional(),
        conversation_id: z.string().optional(),
        scope: z.enum(['user', 'pod', 'org']).optional(),
        pod_id: z.string().optional(),
      }),
      output: z.object({ document_id: z.string(), title: z.string(), version: z.number() }),
      async run(input, ctx) {
        const placement =
          input.scope !== undefined || input.conversation_id !== undefined
            ? {}
            : { conversation_id: ctx.sessionId };
        const output = (r: Record<string, unknown>) => ({
          document_id: r.document_id,
          title: r.title,
          version: r.version ?? 0,
        });
        const doc = await domain(() =>
          ctx.services.documents.create(
            ctx.actor,
            { ...input, ...placement },
            { within: (trx, r) => ctx.within(trx, output(r)), origin: ctx.origin },
          ),
        );
        return output(doc);
      },
    }),
    defineCapability({
      name: 'append_to_document',
      kind: 'write',
      describe: 'Append markdown to the end of a document as a new block.',
      input: z.strictObject({ document_id: documentId, content_markdown: markdown.min(1) }),
      output: z.object({ document_id: z.string(), new_version: z.number(), written_chars: z.number() }),
      async run(input, ctx) {
        const output = (r: Record<string, unknown>) => ({
          document_id: r.document_id,
          new_version: r.new_version,
          written_chars: r.written_chars,
        });
        const result = await domain(() =>
          ctx.services.documents.edit(
            ctx.actor,
            { document_id: input.document_id, mode: 'append', content_markdown: input.content_markdown },
            { within: (trx, r) => ctx.within(trx, output(r)), origin: ctx.origin },
          ),
        );
        return output(result);
      },
    }),
  ],
});
