import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole } from '../workspace/access.ts';
import { creator } from './create.ts';
import { editor, requireDocument, type EditHooks } from './edit.ts';
import { leases } from './lease.ts';
import { lister } from './list.ts';
import { reader } from './read.ts';
import { documentStore, type StoreOptions } from './store.ts';

/** The five document operations over one live store; the tools and the live socket share it. */
export function documentsService(deps: Deps, options: StoreOptions = {}) {
  const store = documentStore(deps, options);
  const lease = leases(deps);
  const { read, versions, digestAt, holdsDigest, prune } = reader(deps, store);
  const hooks: EditHooks = {};
  const { edit } = editor({ deps, store, hooks, acquire: lease.acquire, digestAt, holdsDigest, prune });
  const { create } = creator(deps, store, lease.acquire);
  const { list } = lister(deps);

  /**
   * A person's change from a live replica: they must be able to edit the document, and the
   * update goes through the same live model agents write to.
   */
  async function applyPersonUpdate(actor: Actor, documentId: string, update: Uint8Array): Promise<void> {
    const access = await artifactFor(deps.db, actor, documentId);
    requireDocument(access.artifact);
    requireRole(access, 'editor');
    await store.applyPersonUpdate(access.artifact.id, actor.personId, update);
  }

  return {
    list,
    read,
    create,
    edit,
    versions,
    applyPersonUpdate,
    store,
    /** Points in a write where a caller may step in; empty unless set. */
    hooks,
    close: () => store.close(),
  };
}

export type DocumentsService = ReturnType<typeof documentsService>;
