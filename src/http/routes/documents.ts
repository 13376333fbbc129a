import * as contract from '../../contract/documents.ts';
import { defineRoute } from '../route.ts';

const READ = ['documents:read'] as const;
const WRITE = ['documents:write'] as const;

/** The documents list, read views, version rows and comment threads of documents and pages. */
export const documentRoutes = [
  defineRoute({
    ...contract.listDocuments,
    description: 'every document, page and table the caller can open, most recently changed first',
    scopes: READ,
    handler: ({ services, actor, query }) =>
      services.documents.list(
        actor,
        { query: query.query, cursor: query.cursor, limit: query.limit },
        { pageAll: true },
      ),
  }),
  defineRoute({
    ...contract.createDocument,
    description: 'a new, empty document of the caller’s own, open to whom they say (only them by default)',
    scopes: WRITE,
    bodyHint:
      'Send JSON: {"title": "...", "scope"?: "user" | "pod" | "org", "pod_id"?: "...", "scope_role"?: "editor" | "commenter" | "viewer"}',
    status: 201,
    handler: ({ services, actor, body }) =>
      services.documents.create(actor, {
        title: body.title,
        scope: body.scope ?? 'user',
        pod_id: body.pod_id,
        scope_role: body.scope_role,
      }),
  }),
  defineRoute({
    ...contract.readDocument,
    description: 'a window of a document’s markdown (a page’s HTML, a table’s markdown)',
    scopes: READ,
    handler: async ({ services, actor, params, query }) => {
      const read = await services.documents.read(actor, { document_id: params.id, offset: query.offset });
      return { ...read, ...(await services.sharing.rights(actor, read.document_id)) };
    },
  }),
  defineRoute({
    ...contract.listVersions,
    description: 'the version rows of a document or page, newest first',
    scopes: READ,
    handler: ({ services, actor, params }) => services.documents.versions(actor, { document_id: params.id }),
  }),
  defineRoute({
    ...contract.readComments,
    description: 'the comment threads on a document or page',
    scopes: READ,
    handler: ({ services, actor, params, query }) =>
      services.comments.read(
        actor,
        { document_id: params.id, include_resolved: query.include_resolved },
        { positions: true },
      ),
  }),
  defineRoute({
    ...contract.addComment,
    description: 'start a thread, or reply in one (thread_id)',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"body_markdown": "...", "thread_id"?: "...", "anchor_excerpt"?: "..."}',
    status: 201,
    handler: ({ services, actor, params, body }) =>
      services.comments.add(actor, { ...body, document_id: params.id }),
  }),
  defineRoute({
    ...contract.resolveThread,
    description: 'resolve (resolved true) or reopen (resolved false) a thread',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"resolved": true | false}',
    handler: ({ services, actor, params, body }) =>
      services.comments.resolve(actor, {
        document_id: params.id,
        thread_id: params.thread_id,
        resolved: body.resolved,
      }),
  }),
];
