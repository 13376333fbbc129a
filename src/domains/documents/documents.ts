import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole } from '../policies/artifacts.ts';
import { creator } from './create.ts';
import { editor, requireDocument, type EditHooks } from './edit.ts';
import { exporter } from './export.ts';
import { leases } from './lease.ts';
import { lister } from './list.ts';
import { liveDocuments } from './live.ts';
import { reader } from './read.ts';
import { documentStore, type StoreOptions } from './store.ts';

/** The document operations over one live store; the tools and the live socket share it. */
export function documentsService(deps: Deps, options: StoreOptions = {}) {
  const store = documentStore(deps, options);
  const lease = leases(deps);
  const { read, versions, digestAt, holdsDigest } = reader(deps, store);
  const hooks: EditHooks = {};
  const { edit } = editor({ deps, store, hooks, acquire: lease.acquire, digestAt, holdsDigest });
  const { create } = creator(deps, store, lease.acquire);
  const { list } = lister(deps);
  const live = liveDocuments(deps, store, options.bounds);
  const { exportArtifact } = exporter(deps, store);

  /**
   * A person's change from a live replica: they must be able to edit the document, the update
   * must keep the document's shape, and it goes through the same live model agents write to.
   */
  async function applyPersonUpdate(actor: Actor, documentId: string, update: Uint8Array): Promise<void> {
    const access = await artifactFor(deps.db, actor, documentId);
    requireDocument(access.artifact);
    requireRole(access, 'editor');
    live.applyChecked(await store.open(access.artifact.id), actor.personId, true, update);
  }

  return {
    list,
    read,
    create,
    edit,
    versions,
    applyPersonUpdate,
    /** A document or page as a file, recorded as an `export` version row. */
    export: exportArtifact,
    /** People following documents live (the socket). */
    live,
    store,
    /** Points in a write where a caller may step in; empty unless set. */
    hooks,
    close: () => store.close(),
  };
}

export type DocumentsService = ReturnType<typeof documentsService>;
