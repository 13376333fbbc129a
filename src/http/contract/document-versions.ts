import { z } from 'zod';
import { endpoint } from './endpoint.ts';

/** Writes an earlier version's text as the next version of a document (a person's write). */
export const restoreDocumentVersion = endpoint({
  method: 'POST',
  path: '/documents/:id/restore',
  body: z.object({ version_id: z.custom<string>() }),
  output: z.object({ document_id: z.string(), new_version: z.number(), restored_version: z.number() }),
});

/** Names the document's current version: a pinned `named` row, kept forever. */
export const nameDocumentVersion = endpoint({
  method: 'POST',
  path: '/documents/:id/versions',
  body: z.object({ label: z.custom<string>() }),
  output: z.object({
    document_id: z.string(),
    version_id: z.string(),
    doc_version: z.number(),
    label: z.string(),
    pinned: z.boolean(),
  }),
});
