import { z } from 'zod';
import { endpoint, flagParam, integerParam, textParam } from './endpoint.ts';

const artifactType = z.enum(['document', 'html_app', 'table']);
const role = z.enum(['owner', 'editor', 'commenter', 'viewer']);

/**
 * A document, page or table as every listing gives it: list_documents, `GET /api/documents` and
 * the documents.list_documents capability (which keeps a few of its fields).
 */
export const documentRow = z.object({
  document_id: z.string(),
  title: z.string(),
  type: artifactType,
  status: z.enum(['active', 'archived']),
  /** Absent until a markdown projection exists; absent is not empty. */
  characters: z.number().optional(),
  /** Milliseconds since the epoch, as is last_edited_at. */
  created_at: z.number(),
  last_edited_at: z.number(),
  version: z.number(),
  /** The conversation it was made in, if any (list_documents only). */
  conversation_id: z.string().optional(),
  /** The pod it is shared with, if any (list_documents only). */
  pod_id: z.string().optional(),
  scope: z.enum(['user', 'pod', 'org']),
  role,
  owner_label: z.string().optional(),
});
export type DocumentRow = z.infer<typeof documentRow>;

/** Everything the person can open, most recently changed first, a page at a time. */
export const listDocuments = endpoint({
  method: 'GET',
  path: '/documents',
  query: { query: textParam(200), cursor: textParam(1000), limit: integerParam(1, 50) },
  output: z.object({
    // The app's list does not say where a document was made or which pod it is shared with.
    documents: z.array(documentRow.omit({ conversation_id: true, pod_id: true })),
    next_cursor: z.string().nullable(),
    truncated: z.boolean(),
  }),
});

export const createDocument = endpoint({
  method: 'POST',
  path: '/documents',
  /** Who can open it: only the creator (user, the default), a pod of theirs, or the workspace, with that audience's role. */
  body: z.object({
    title: z.custom<string>(),
    scope: z.custom<'user' | 'pod' | 'org'>().optional(),
    pod_id: z.custom<string>().optional(),
    scope_role: z.custom<'editor' | 'commenter' | 'viewer'>().optional(),
  }),
  output: z.object({ document_id: z.string(), title: z.string() }),
});

export const readDocument = endpoint({
  method: 'GET',
  path: '/documents/:id',
  query: { offset: integerParam(0, Number.MAX_SAFE_INTEGER) },
  output: z.object({
    document_id: z.string(),
    title: z.string(),
    type: artifactType,
    markdown: z.string(),
    version: z.number(),
    size_chars: z.number(),
    offset: z.number(),
    window: z.number(),
    truncated: z.boolean(),
    archived: z.boolean(),
    /** The caller's role, and whether they may change who can open it (`Share`). */
    role,
    may_share: z.boolean(),
  }),
});

/** A version of a document or page as get_document_versions and the app's list give it. */
export const documentVersion = z.object({
  version_id: z.string(),
  doc_version: z.number(),
  reason: z.string(),
  label: z.string().nullable(),
  pinned: z.boolean(),
  author_label: z.string().optional(),
  instruction: z.string().optional(),
  created_at: z.number(),
});

/** A version row as the app's versions list shows it. */
export const versionRow = documentVersion.extend({
  /** Whether an agent wrote it (for the author) or the author did. */
  by: z.enum(['agent', 'person']).optional(),
  /** The version the row stands for: what its write produced. */
  made_version: z.number().optional(),
  /** Whether its write can be undone alone (Show changes, Undo). */
  undoable: z.boolean().optional(),
});
export type VersionRow = z.infer<typeof versionRow>;

/** The version rows of a document or page (get_document_versions), newest first. */
export const listVersions = endpoint({
  method: 'GET',
  path: '/documents/:id/versions',
  output: z.object({ document_id: z.string(), versions: z.array(versionRow) }),
});

/** A comment thread as read_comments and the JSON API give it; each door adds a field of its own. */
export const commentThread = z.object({
  thread_id: z.string(),
  status: z.enum(['open', 'resolved']),
  /** The quoted passage, when the thread is anchored. */
  anchor_excerpt: z.string().optional(),
  author_label: z.string(),
  body: z.string(),
  /** Milliseconds since the epoch. */
  created_at: z.number(),
  replies: z.array(
    z.object({
      comment_id: z.string(),
      author_label: z.string(),
      body: z.string(),
      deleted: z.boolean(),
      created_at: z.number(),
    }),
  ),
  /** True when older replies were left out. */
  more_replies: z.boolean(),
});

/** A thread as the app reads it. */
export const thread = commentThread.extend({
  /** A document's passage as Yjs relative positions (base64): the live editor follows it itself. */
  anchor_position: z.object({ rel_start: z.string(), rel_end: z.string() }).optional(),
});
export type Thread = z.infer<typeof thread>;

/** The comment threads on a document or page (read_comments). */
export const readComments = endpoint({
  method: 'GET',
  path: '/documents/:id/comments',
  query: { include_resolved: flagParam() },
  output: z.object({ document_id: z.string(), role, threads: z.array(thread) }),
});

/** A new thread, or a reply when thread_id is given (add_comment). */
export const addComment = endpoint({
  method: 'POST',
  path: '/documents/:id/comments',
  body: z.object({
    body_markdown: z.custom<string>(),
    thread_id: z.custom<string>().optional(),
    anchor_excerpt: z.custom<string>().optional(),
  }),
  output: z.object({
    document_id: z.string(),
    thread_id: z.string(),
    reply: z.boolean(),
    /** A new thread: whether its quoted passage was found exactly once. */
    anchored: z.boolean().optional(),
  }),
});

export const resolveThread = endpoint({
  method: 'POST',
  path: '/documents/:id/threads/:thread_id',
  body: z.object({ resolved: z.custom<boolean>() }),
  output: z.object({ thread_id: z.string(), status: z.enum(['open', 'resolved']) }),
});

/**
 * A one-minute ticket that opens one document on the live socket (`/collab`) once. The server
 * mounts this route apart, at `/api/collab` (`src/http/collab-tickets.ts`).
 */
export const collabTicket = endpoint({
  method: 'POST',
  path: '/collab/tickets',
  body: z.object({ document_id: z.custom<string>((v) => typeof v === 'string' && v !== '') }),
  output: z.object({ ticket: z.string(), expires_at: z.number() }),
});
