import { versionActions } from '../domains/documents/restore.ts';
import type { Services } from '../services.ts';
import * as contract from './contract/document-versions.ts';
import { defineRoute } from './route.ts';

const actions = new WeakMap<Services, ReturnType<typeof versionActions>>();
const actionsOf = (services: Services) => {
  let made = actions.get(services);
  if (!made) actions.set(services, (made = versionActions(services.deps, services.documents.store)));
  return made;
};

/** A person's version actions on a document: `Restore` and `Name this version`. */
export const documentVersionRoutes = [
  defineRoute({
    ...contract.restoreDocumentVersion,
    description: 'write an earlier version’s text as the document’s next version (a restore row)',
    scopes: ['documents:write'],
    bodyHint: 'Send JSON: {"version_id": "..."}',
    handler: ({ services, actor, params, body }) =>
      actionsOf(services).restore(actor, { document_id: params.id, version_id: body.version_id }),
  }),
  defineRoute({
    ...contract.nameDocumentVersion,
    description: 'name the document’s current version (a pinned named row)',
    scopes: ['documents:write'],
    bodyHint: 'Send JSON: {"label": "..."}',
    status: 201,
    handler: ({ services, actor, params, body }) =>
      actionsOf(services).nameVersion(actor, { document_id: params.id, label: body.label }),
  }),
];
