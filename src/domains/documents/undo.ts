import { invalid } from '../../errors.ts';
import { unpackText } from '../../storage/packed.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';
import { parseChanges, shownChanges, undoChanges, type WriteChanges } from './changes.ts';
import { diffTexts } from './diff.ts';
import { editableDocument, requireDocument } from './edit-target.ts';
import { persistRestoreRow, personTurn } from './restore.ts';
import { leases } from './lease.ts';
import type { DocumentStore } from './store.ts';

/** The version a row stands for: what an agent write produced, or the version the row stored. */
function madeVersion(row: { reason: string; doc_version: number; result_version: number | null }): number {
  return row.reason === 'agent_edit' && row.result_version !== null ? row.result_version : row.doc_version;
}

const NO_VERSION = 'That version is not one of this document’s versions';

/**
 * What one write changed, a version against now, and undoing one write: its effect alone taken
 * out of the live document, everything written after it kept. An undo is a person's write,
 * stored as a `restore` row naming the version it undid, with its own record of what it changed,
 * so undoing an undo is the same operation.
 */
export function versionChanges(deps: Deps, store: DocumentStore) {
  const { db } = deps;
  const lease = leases(deps);

  async function rowOf(artifactId: string, versionId: unknown) {
    if (typeof versionId !== 'string' || versionId === '') throw invalid(NO_VERSION);
    const row = await db
      .selectFrom('checkpoints')
      .leftJoin('people', 'people.id', 'checkpoints.author_id')
      .select([
        'checkpoints.id',
        'checkpoints.doc_version',
        'checkpoints.result_version',
        'checkpoints.reason',
        'checkpoints.content',
        'checkpoints.changes_json',
        'checkpoints.created_at',
        'people.name as author',
      ])
      .where('checkpoints.id', '=', versionId)
      .where('checkpoints.artifact_id', '=', artifactId)
      .executeTakeFirst();
    if (!row) throw invalid(NO_VERSION);
    return row;
  }

  /**
   * What a version changed (`previous`: what its write added and removed), or what differs
   * between it and the document now (`now`). Needs only the right to read the document.
   */
  async function changes(
    actor: Actor,
    input: { document_id?: unknown; version_id?: unknown; against?: unknown },
  ) {
    const against = input.against ?? 'previous';
    if (against !== 'previous' && against !== 'now') throw invalid('against must be now or previous');
    const { artifact } = await artifactFor(db, actor, input.document_id);
    requireDocument(artifact);
    const row = await rowOf(artifact.id, input.version_id);
    const record = parseChanges(row.changes_json);
    const who = {
      author_label: record?.agent ?? row.author ?? 'Unknown',
      ...(record?.agent && record.for ? { for_label: record.for } : {}),
      created_at: row.created_at,
      doc_version: madeVersion(row),
      undoable: record !== undefined,
    };
    if (against === 'now') {
      const now = await store.currentMarkdown(artifact.id, artifact.content);
      const then = row.content === null ? '' : unpackText(row.content);
      return { document_id: artifact.id, against, ...who, ...diffTexts(then, now) };
    }
    if (record) return { document_id: artifact.id, against, ...who, ...shownChanges(record) };
    // No record: the row's text against the row before it.
    const previous = await db
      .selectFrom('checkpoints')
      .select('content')
      .where('artifact_id', '=', artifact.id)
      .where('id', '<', row.id)
      .where('content', 'is not', null)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    const before = previous?.content ? unpackText(previous.content) : '';
    const after = row.content === null ? '' : unpackText(row.content);
    return { document_id: artifact.id, against, ...who, ...diffTexts(before, after) };
  }

  const editable = (actor: Actor, documentId: unknown) => editableDocument(db, actor, documentId);

  /**
   * Undoes one write: through the lease agents' writes take, on the live document open editors
   * follow, as this person. Says the version it made and the passages it kept.
   */
  async function undo(actor: Actor, input: { document_id?: unknown; version_id?: unknown }) {
    const id = await editable(actor, input.document_id);
    const row = await rowOf(id, input.version_id);
    const record = parseChanges(row.changes_json);
    if (!record) {
      throw invalid(
        'That version has no record of what its write changed, so it cannot be undone alone; compare it and restore it instead',
      );
    }
    const undone = madeVersion(row);
    return personTurn({ db, lease, store }, actor, id, async (live) => {
      await store.refresh(live);
      // Edits not stored yet are stored first, as their own version.
      await store.flush(id);
      let result: { changes: WriteChanges; kept: string[] } = { changes: record, kept: [] };
      live.doc.transact(() => (result = undoChanges(live.doc, record)), { person: actor.personId });
      const { changes: made, kept } = result;
      if (made.added.length + made.removed.length + made.changed.length === 0) {
        const { version } = await db
          .selectFrom('artifacts')
          .select('version')
          .where('id', '=', id)
          .executeTakeFirstOrThrow();
        return { document_id: id, new_version: version, undone_version: undone, kept, changed: false };
      }
      const version = await persistRestoreRow(store, live, actor, {
        instruction: `undid version ${undone}`,
        mode: 'undo',
        kept_json: kept.length > 0 ? JSON.stringify({ count: kept.length, excerpts: kept }) : null,
        changes_json: JSON.stringify(made),
      });
      return { document_id: id, new_version: version, undone_version: undone, kept, changed: true };
    });
  }

  return { changes, undo };
}

export type VersionChanges = ReturnType<typeof versionChanges>;
