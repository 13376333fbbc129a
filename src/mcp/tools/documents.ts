import { z } from 'zod';
import type { DocumentRow } from '../../domains/documents/list.ts';
import { CONTENT_CAP } from '../../domains/documents/text.ts';
import { defineTool, DESTRUCTIVE_WRITE, READ_ONLY, specChecked, WRITE } from '../tool.ts';

const documentId = z.string().describe('The artifact id, from list_documents, create_document or a card.');
const role = z.enum(['owner', 'editor', 'commenter', 'viewer']);
const keptBlocks = z
  .object({ count: z.number().int(), excerpts: z.array(z.string()) })
  .describe('Edits people made during the write, kept next to the written text.');

const row = z.object({
  document_id: z.string(),
  title: z.string(),
  type: z.enum(['document', 'html_app', 'table']),
  status: z.enum(['active', 'archived']),
  characters: z
    .number()
    .int()
    .optional()
    .describe('Absent until a markdown projection exists; absent is not empty.'),
  created_at: z.number().describe('Milliseconds since the epoch.'),
  last_edited_at: z.number().describe('Milliseconds since the epoch.'),
  version: z.number().int(),
  conversation_id: z.string().optional(),
  pod_id: z.string().optional(),
  scope: z.enum(['user', 'pod', 'org']),
  role,
  owner_label: z.string().optional(),
});

function rowLine(r: DocumentRow): string {
  const parts = [r.type, r.role, `version ${r.version}`];
  if (r.characters !== undefined) parts.push(`${r.characters} characters`);
  if (r.status === 'archived') parts.push('archived');
  return `${r.title} — ${parts.join(', ')} (document_id: ${r.document_id})`;
}

export const listDocuments = defineTool({
  name: 'list_documents',
  title: 'List documents',
  description:
    'List the documents, pages and tables you can open, most recently edited first. Narrow with one of scope (mine, shared, pod, org), pod_id or conversation_id; with none, everything reachable is merged. Paged listings (mine, shared, org, pod_id) return next_cursor while more rows exist; pass it back with the same arguments. query filters the rows read by title and body, ignoring case.',
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({
    scope: specChecked({
      type: 'string',
      enum: ['mine', 'shared', 'pod', 'org'],
      description: 'Which documents to list.',
    }),
    conversation_id: z.string().optional().describe('Documents in this conversation.'),
    pod_id: z.string().optional().describe('Documents in this pod (paged).'),
    query: z
      .string()
      .optional()
      .describe('Case-insensitive text to look for in titles and bodies of the rows read.'),
    cursor: z.string().optional().describe('next_cursor from the previous page of the same listing.'),
    include_archived: z.boolean().optional().describe('Also list archived artifacts (default false).'),
    limit: specChecked(
      {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        description: 'Rows per page, 1 to 50 (default 50).',
      },
      { clamped: true },
    ),
  }),
  output: z.object({
    documents: z.array(row),
    next_cursor: z.string().nullable(),
    truncated: z.boolean(),
  }),
  async run({ actor, services }, args) {
    const result = await services.documents.list(actor, args);
    const text =
      result.documents.length === 0 ? 'No documents found.' : result.documents.map(rowLine).join('\n');
    return { structured: result, text };
  },
});

export const readDocument = defineTool({
  name: 'read_document',
  title: 'Read document',
  description:
    'Read a document’s markdown (a page’s HTML source, a table’s markdown projection) in windows of up to 24,000 characters. When truncated is true, call again with offset = offset + window. Always returns the version to pass as expected_version.',
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({
    document_id: documentId,
    offset: specChecked(
      {
        type: 'integer',
        minimum: 0,
        description: 'Where to start, in characters (default 0).',
      },
      { clamped: true },
    ),
    window: specChecked(
      {
        type: 'integer',
        minimum: 1,
        maximum: 24000,
        description: 'How many characters to return, 1 to 24,000 (default 24,000).',
      },
      { clamped: true },
    ),
  }),
  output: z.object({
    document_id: z.string(),
    title: z.string(),
    type: z.enum(['document', 'html_app', 'table']),
    markdown: z.string(),
    version: z.number().int(),
    size_chars: z.number().int(),
    offset: z.number().int(),
    window: z.number().int(),
    truncated: z.boolean(),
    archived: z.boolean(),
    parent: z.object({ conversation_id: z.string() }).optional(),
  }),
  async run({ actor, services }, args) {
    const doc = await services.documents.read(actor, args);
    const end = doc.offset + doc.markdown.length;
    const range = doc.size_chars === 0 ? 'empty' : `characters ${doc.offset}–${end} of ${doc.size_chars}`;
    let text = `# ${doc.title} (version ${doc.version}, ${range})\n\n${doc.markdown}`;
    if (doc.truncated) text += `\n\n(truncated: call again with offset ${doc.offset + doc.window})`;
    return { structured: doc, text };
  },
});

export const createDocument = defineTool({
  name: 'create_document',
  title: 'Create document',
  description:
    'Create a markdown document, optionally with content (written verbatim, up to 60,000 characters; whitespace only counts as empty). Pass conversation_id to create it in a conversation (a card is posted), or a scope (user by default, pod with pod_id, or org); never both. An idempotency_key makes a retry within 10 minutes return the original document instead of a second one.',
  scope: 'documents:write',
  annotations: WRITE,
  input: z.object({
    title: specChecked(
      { type: 'string', minLength: 1, maxLength: 500, description: 'The title; non-empty.' },
      { required: true },
    ),
    conversation_id: z
      .string()
      .optional()
      .describe('Create the document in this conversation and post a card there.'),
    scope: specChecked({
      type: 'string',
      enum: ['user', 'pod', 'org'],
      description: 'user (default), pod (with pod_id) or org (editable by every workspace member).',
    }),
    pod_id: z.string().optional().describe('The pod, with scope pod.'),
    content_markdown: specChecked({
      type: 'string',
      description: 'Initial content, written verbatim; at most 60,000 characters.',
    }),
    idempotency_key: specChecked(
      {
        type: 'string',
        description: 'Any string; a repeat within 10 minutes returns the original document.',
      },
      { expects: 'a string of 1 to 200 characters' },
    ),
  }),
  output: z.object({
    document_id: z.string(),
    title: z.string().optional(),
    version: z
      .number()
      .int()
      .optional()
      .describe('On a deduplicated retry, present only when the retry filled the document.'),
    deduplicated: z.boolean().optional(),
    healed: z.boolean().optional(),
    error: z.literal('write_conflict').optional(),
    retry_after_seconds: z.number().int().optional(),
  }),
  async run({ actor, services }, args) {
    const doc: {
      document_id: string;
      title: string;
      version?: number;
      deduplicated: boolean;
      healed: boolean;
    } = await services.documents.create(actor, args);
    let text: string;
    if (!doc.deduplicated)
      text = `Created document ${doc.title} (document_id: ${doc.document_id}, version ${doc.version}).`;
    else if (doc.healed) {
      text = `This idempotency_key already made ${doc.title} (document_id: ${doc.document_id}), which was empty; filled it, now at version ${doc.version}.`;
    } else
      text = `This idempotency_key already made ${doc.title} (document_id: ${doc.document_id}); nothing new was created.`;
    return { structured: doc, text };
  },
});

export const editDocument = defineTool({
  name: 'edit_document',
  title: 'Edit document',
  description:
    'Write to a document while people may be editing it. append adds content as a new block at the end; replace_section replaces the whole blocks covered by section_excerpt (an exact passage from read_document, white space ignored); replace_all replaces everything and needs expected_version; fill_empty writes only into an empty document. Edits people make during the write are kept next to the written text (kept_blocks). Content over 60,000 characters stops early with next_step. dry_run resolves the target and version checks and writes nothing.',
  scope: 'documents:write',
  annotations: DESTRUCTIVE_WRITE,
  input: z.object({
    document_id: documentId,
    mode: specChecked(
      {
        type: 'string',
        enum: ['append', 'replace_section', 'replace_all', 'fill_empty'],
        description: 'How to write.',
      },
      { required: true },
    ),
    content_markdown: specChecked(
      { type: 'string', description: 'The markdown to write, verbatim.' },
      { required: true },
    ),
    // Matching folds the white space of the whole excerpt, about a second per 4 million characters;
    // a passage longer than a write may put back is refused before that.
    section_excerpt: specChecked({
      type: 'string',
      maxLength: CONTENT_CAP,
      description:
        'replace_section: an exact passage from read_document, matched ignoring white space; at most 60,000 characters.',
    }),
    expected_version: specChecked({
      type: 'integer',
      minimum: 0,
      description: 'The version you read. Required for replace_all; elsewhere it only reports drift.',
    }),
    dry_run: z
      .boolean()
      .optional()
      .describe('Resolve the target and version checks, write nothing (default false).'),
  }),
  output: z.object({
    document_id: z.string().optional(),
    mode: z.enum(['append', 'replace_section', 'replace_all', 'fill_empty']).optional(),
    new_version: z.number().int().optional(),
    written_chars: z.number().int().optional(),
    stopped_early: z.boolean().optional(),
    stop_reason: z.enum(['cap', 'anchor_gone']).optional(),
    next_step: z.string().optional(),
    version_drift: z.boolean().optional(),
    blocks_changed_since: z.number().int().optional(),
    kept_blocks: keptBlocks.optional(),
    dry_run: z.boolean().optional(),
    resolved: z.boolean().optional(),
    block_ids: z.array(z.string()).optional(),
    current_version: z.number().int().optional(),
    error: z
      .enum([
        'version_conflict',
        'excerpt_not_found',
        'excerpt_ambiguous',
        'not_empty',
        'selection_gone',
        'write_conflict',
      ])
      .optional(),
    expected_version: z.number().int().optional(),
    candidates: z.array(z.object({ excerpt: z.string(), similarity: z.number() })).optional(),
    locations: z.array(z.object({ excerpt: z.string() })).optional(),
    retry_after_seconds: z.number().int().optional(),
  }),
  async run({ actor, services }, args) {
    const result = await services.documents.edit(actor, args);
    if ('dry_run' in result) {
      const n = (result.block_ids ?? []).length;
      return {
        structured: result,
        text: `Dry run (${result.mode}): nothing written. The write would replace ${n} block${n === 1 ? '' : 's'}; the document is at version ${result.current_version}${result.version_drift ? ', newer than expected_version' : ''}.`,
      };
    }
    let text = `Wrote ${result.written_chars} characters (${result.mode}); the document is now at version ${result.new_version}.`;
    if (result.stop_reason === 'cap')
      text += ` Stopped early at the 60,000-character cap. ${result.next_step}`;
    if (result.stop_reason === 'anchor_gone') text += ` Stopped early: ${result.next_step}`;
    if (result.kept_blocks) {
      const n = result.kept_blocks.count;
      text += ` Kept ${n} block${n === 1 ? '' : 's'} that people edited during the write, next to the new text.`;
    }
    if (result.version_drift) {
      text += ` The document had moved on since expected_version${result.blocks_changed_since !== undefined ? ` (${result.blocks_changed_since} blocks changed)` : ''}.`;
    }
    return { structured: result, text };
  },
});

export const getDocumentVersions = defineTool({
  name: 'get_document_versions',
  title: 'List document versions',
  description:
    'The 20 most recent version rows of a document or page, newest first: agent writes (checkpointed before they land), people’s edits, named versions. Metadata only.',
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({ document_id: documentId }),
  output: z.object({
    document_id: z.string(),
    versions: z.array(
      z.object({
        version_id: z.string(),
        doc_version: z.number().int(),
        reason: z.enum(['agent_edit', 'edit', 'restore', 'export', 'named']),
        label: z.string().nullable(),
        pinned: z.boolean(),
        author_label: z.string().optional(),
        instruction: z.string().optional(),
        created_at: z.number(),
        kept_blocks: keptBlocks.optional(),
      }),
    ),
  }),
  async run({ actor, services }, args) {
    const all = await services.documents.versions(actor, args);
    // The tool gives the rows as the spec words them; what the app adds stays in the app.
    const result = {
      document_id: all.document_id,
      versions: all.versions.map(({ by: _by, made_version: _made, undoable: _undoable, ...row }) => row),
    };
    const lines = result.versions.map((v) => {
      const bits = [`version ${v.doc_version}`, v.reason];
      if (v.label) bits.push(`“${v.label}”`);
      if (v.author_label) bits.push(`by ${v.author_label}`);
      if (v.instruction) bits.push(v.instruction);
      if (v.pinned) bits.push('pinned');
      if (v.kept_blocks)
        bits.push(`kept ${v.kept_blocks.count} edited block${v.kept_blocks.count === 1 ? '' : 's'}`);
      return `${new Date(v.created_at).toISOString()} — ${bits.join(', ')} (${v.version_id})`;
    });
    return { structured: result, text: lines.length ? lines.join('\n') : 'No versions yet.' };
  },
});

export const documentTools = [listDocuments, readDocument, createDocument, editDocument, getDocumentVersions];
