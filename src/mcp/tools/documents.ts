import { z } from 'zod';
import { documentRow, documentVersion, type DocumentRow } from '../../contract/documents.ts';
import { defineTool, READ_ONLY, specChecked, WRITE } from '../tool.ts';
import { editDocument, keptBlocks } from './document-edit.ts';
import { placement } from './placement.ts';

const documentId = z.string();

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
    'Documents, pages and tables you can open, last edited first. Narrow by one of scope, pod_id or conversation_id; pass next_cursor back for more.',
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({
    scope: specChecked({
      type: 'string',
      enum: ['mine', 'shared', 'pod', 'org'],
    }),
    conversation_id: z.string().optional(),
    pod_id: z.string().optional(),
    query: z.string().optional().describe('Text in title or body.'),
    cursor: z.string().optional(),
    include_archived: z.boolean().optional(),
    limit: specChecked(
      {
        type: 'integer',
        minimum: 1,
        maximum: 50,
        description: 'Default 50.',
      },
      { clamped: true },
    ),
  }),
  output: z.object({
    documents: z.array(documentRow),
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
    "A document's markdown (a page's HTML) in windows of up to 24,000 characters, with its version. If truncated, call again from offset + window.",
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({
    document_id: documentId,
    offset: specChecked(
      {
        type: 'integer',
        minimum: 0,
      },
      { clamped: true },
    ),
    window: specChecked(
      {
        type: 'integer',
        minimum: 1,
        maximum: 24000,
        description: 'Default 24,000.',
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
    'Create a markdown document in a conversation (posts a card) or a scope, not both. idempotency_key makes a retry within 10 minutes return the first.',
  scope: 'documents:write',
  annotations: WRITE,
  input: z.object({
    title: specChecked({ type: 'string', minLength: 1, maxLength: 500 }, { required: true }),
    ...placement,
    content_markdown: specChecked({
      type: 'string',
      description: 'Up to 60,000 characters.',
    }),
    idempotency_key: specChecked(
      {
        type: 'string',
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

export const getDocumentVersions = defineTool({
  name: 'get_document_versions',
  title: 'List document versions',
  description: 'The 20 latest versions of a document or page.',
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({ document_id: documentId }),
  output: z.object({
    document_id: z.string(),
    versions: z.array(
      documentVersion.extend({
        reason: z.enum(['agent_edit', 'edit', 'restore', 'export', 'named']),
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
