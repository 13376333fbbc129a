import { z } from 'zod';
import { choiceParam, endpoint } from './endpoint.ts';

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

/**
 * What one write changed (`previous`, the default) or what differs between a version and the
 * document now (`now`): blocks added and removed, with who wrote it, for whom, and when.
 */
export const versionChanges = endpoint({
  method: 'GET',
  path: '/documents/:id/versions/:version_id/changes',
  query: { against: choiceParam('now', 'previous') },
  output: z.object({
    document_id: z.string(),
    against: z.enum(['now', 'previous']),
    added: z.array(z.string()),
    removed: z.array(z.string()),
    author_label: z.string(),
    for_label: z.string().optional(),
    created_at: z.number(),
    /** The version the row stands for: what its write produced. */
    doc_version: z.number(),
    /** Whether the write can be undone alone. */
    undoable: z.boolean(),
  }),
});

/**
 * Undoes one write alone (a person's write, a `restore` row naming it): its text taken out, what
 * it removed put back, later edits kept; `kept` quotes the passages changed after it that stay.
 */
export const undoVersion = endpoint({
  method: 'POST',
  path: '/documents/:id/versions/:version_id/undo',
  body: z.object({}),
  output: z.object({
    document_id: z.string(),
    new_version: z.number(),
    undone_version: z.number(),
    kept: z.array(z.string()),
    changed: z.boolean(),
  }),
});

/** The blocks agents wrote in the last day, with their text as written and who wrote them for whom. */
export const agentBlocks = endpoint({
  method: 'GET',
  path: '/documents/:id/agent-blocks',
  output: z.object({
    document_id: z.string(),
    blocks: z.array(
      z.object({ block_id: z.string(), text: z.string(), by_label: z.string(), at: z.number() }),
    ),
  }),
});
