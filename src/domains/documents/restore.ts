import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { packText } from '../../storage/packed.ts';
import type { Deps } from '../deps.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { versionText } from '../../storage/checkpoints.ts';
import { editableDocument } from './edit-target.ts';
import { leases, type Leases } from './lease.ts';
import type { VersionRow } from './live-doc.ts';
import { blockArray, isDeleted, newBlock, projection, storedDigest } from './model.ts';
import type { DocumentStore, LiveDoc } from './store.ts';
import { splitBlocks } from './text.ts';

const LABEL_MAX = 200;

/**
 * Stores the live document as a person's `restore` row (a whole-version restore, or an undo of one
 * write with what it kept and changed) and returns the version it made.
 */
export function persistRestoreRow(
  store: DocumentStore,
  live: LiveDoc,
  actor: Actor,
  row: { instruction: string; mode: 'restore' | 'undo'; kept_json?: string | null; changes_json?: string },
): Promise<number> {
  const rowId = newId('ver');
  return store.persist(live, {
    reason: 'edit',
    authorId: actor.personId,
    instruction: null,
    agentRow: {
      id: rowId,
      complete: (v: number): VersionRow => ({
        id: rowId,
        artifact_id: live.id,
        doc_version: v,
        reason: 'restore',
        label: null,
        pinned: 0,
        author_id: actor.personId,
        instruction: row.instruction,
        content: packText(projection(live.doc)),
        kept_json: row.kept_json ?? null,
        blocks_json: storedDigest(live.doc),
        ...(row.changes_json !== undefined ? { changes_json: row.changes_json } : {}),
        created_at: Date.now(),
      }),
    },
    edited: { actorId: actor.personId, by: 'person', mode: row.mode },
  });
}

/**
 * A person's version actions on a document: restoring a version (a person's write: the text
 * becomes that version's, recorded as a `restore` row) and naming the current one (a `named`
 * row, pinned, kept forever). Both need the editor role; archived documents refuse.
 */
export function versionActions(deps: Deps, store: DocumentStore) {
  const { db } = deps;
  // The lease agents' writes take (the same queue in this process, the same row across them).
  const lease = leases(deps);

  const editable = (actor: Actor, documentId: unknown) => editableDocument(db, actor, documentId);

  async function restore(actor: Actor, input: { document_id?: unknown; version_id?: unknown }) {
    const id = await editable(actor, input.document_id);
    const version = await versionText(db, id, input.version_id);
    if (!version) throw invalid('That version is not one of this document’s versions');
    const markdown = version.text;
    return personTurn({ db, lease, store }, actor, id, (live) =>
      replaceText(actor, live, markdown, version.docVersion),
    );
  }

  /** Makes the document's text a version's, as this person, and stores it as a `restore` row. */
  async function replaceText(actor: Actor, live: LiveDoc, markdown: string, restored: number) {
    const id = live.id;
    await store.refresh(live);
    // Edits not stored yet are stored first, as their own version: nothing is lost by restoring.
    await store.flush(id);
    // The blocks shown now are marked removed and the version's blocks follow them, in one change
    // made as this person (editors see it arrive like anyone's edit).
    live.doc.transact(
      () => {
        const blocks = blockArray(live.doc);
        for (const map of blocks) if (!isDeleted(map)) map.set('deleted', true);
        blocks.push(splitBlocks(markdown).map(newBlock));
      },
      { person: actor.personId },
    );
    const version = await persistRestoreRow(store, live, actor, {
      instruction: `restored version ${restored}`,
      mode: 'restore',
    });
    return { document_id: id, new_version: version, restored_version: restored };
  }

  async function nameVersion(actor: Actor, input: { document_id?: unknown; label?: unknown }) {
    const id = await editable(actor, input.document_id);
    const label = typeof input.label === 'string' ? input.label.trim() : '';
    if (label === '') throw invalid('A version needs a name');
    if (label.length > LABEL_MAX) throw invalid(`A version name is at most ${LABEL_MAX} characters`);
    const live = await store.open(id);
    await store.refresh(live);
    await store.flush(id);
    const artifact = await db
      .selectFrom('artifacts')
      .select('version')
      .where('id', '=', id)
      .executeTakeFirst();
    if (!artifact) throw new DomainError('not_found', 'Artifact not found');
    const rowId = newId('ver');
    await db
      .insertInto('checkpoints')
      .values({
        id: rowId,
        artifact_id: id,
        doc_version: artifact.version,
        reason: 'named',
        label,
        pinned: 1,
        author_id: actor.personId,
        instruction: null,
        content: packText(projection(live.doc)),
        kept_json: null,
        blocks_json: storedDigest(live.doc),
        created_at: Date.now(),
      })
      .execute();
    return { document_id: id, version_id: rowId, doc_version: artifact.version, label, pinned: true };
  }

  return { restore, nameVersion };
}

/**
 * A person's change of the whole text (a restore, an undo) takes its turn with agents' writes: it
 * waits for the one landing now to be stored, and the next waits for it; the two never interleave.
 * Within the lease the role is checked again (it may have changed while the person waited), and
 * the live document is held for writing while `act` runs.
 */
export async function personTurn<T>(
  on: { db: Db; lease: Leases; store: DocumentStore },
  actor: Actor,
  id: string,
  act: (live: LiveDoc) => Promise<T>,
): Promise<T> {
  const held = await on.lease.acquire(id, newId('lease'));
  try {
    await editableDocument(on.db, actor, id);
    const live = await on.store.open(id);
    on.store.beginWrite(live);
    try {
      return await act(live);
    } finally {
      on.store.endWrite(live);
    }
  } finally {
    await held.release();
  }
}
