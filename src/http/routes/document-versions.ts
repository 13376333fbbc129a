import { versionActions } from '../../domains/documents/restore.ts';
import { agentBlocks } from '../../domains/documents/attribution.ts';
import { versionChanges } from '../../domains/documents/undo.ts';
import type { Services } from '../../services.ts';
import * as contract from '../../contract/document-versions.ts';
import { defineRoute } from '../route.ts';

const actions = new WeakMap<Services, ReturnType<typeof versionActions>>();
const actionsOf = (services: Services) => {
  let made = actions.get(services);
  if (!made) actions.set(services, (made = versionActions(services.deps, services.documents.store)));
  return made;
};

const changesBy = new WeakMap<Services, ReturnType<typeof versionChanges>>();
const changesOf = (services: Services) => {
  let made = changesBy.get(services);
  if (!made) changesBy.set(services, (made = versionChanges(services.deps, services.documents.store)));
  return made;
};

/**
 * A person's version actions on a document: `Restore`, `Name this version`, what a write changed
 * (`Show changes`, `Compare`) and `Undo`.
 */
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
  defineRoute({
    ...contract.versionChanges,
    description: 'what one write changed, or what differs between a version and the document now',
    scopes: ['documents:read'],
    handler: ({ services, actor, params, query }) =>
      changesOf(services).changes(actor, {
        document_id: params.id,
        version_id: params.version_id,
        against: query.against,
      }),
  }),
  defineRoute({
    ...contract.undoVersion,
    description: 'undo one write alone, keeping every later edit (a restore row naming it)',
    scopes: ['documents:write'],
    bodyHint: 'Send JSON: {}',
    handler: ({ services, actor, params }) =>
      changesOf(services).undo(actor, { document_id: params.id, version_id: params.version_id }),
  }),
  defineRoute({
    ...contract.agentBlocks,
    description: 'the blocks agents wrote to a document in the last day, for the editor to mark',
    scopes: ['documents:read'],
    handler: ({ services, actor, params }) => agentBlocks(services.deps)(actor, { document_id: params.id }),
  }),
];
