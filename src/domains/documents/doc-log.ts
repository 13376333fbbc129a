import * as Y from 'yjs';
import type { Deps } from '../deps.ts';
import { compiled } from '../../storage/compiled.ts';
import { onPostgres } from '../../storage/db.ts';
import type { Db } from '../../storage/schema.ts';
import { LOAD_ORIGIN, type LiveDoc, type Unsaved } from './live-doc.ts';
import { docFromMarkdown, encodeState } from './model.ts';

/**
 * Where a document's Yjs state is stored: a snapshot (`doc_states`) and a log of the changes
 * stored since (`doc_updates`, ordered by a database sequence).
 *
 * Every write to a document's log or snapshot first locks the document's `artifacts` row, so
 * of all processes one at a time appends or folds, and a log entry's sequence number is taken
 * after every entry before it committed. Under that lock a copy takes in what others stored
 * before it adds its own, so the last entry it knows of always comes with all the earlier ones,
 * and a fold never drops an entry the snapshot it writes does not hold.
 */
export function docLog(deps: Deps) {
  const { db } = deps;

  /**
   * Locks the document's row until the transaction ends (PostgreSQL: the row; SQLite: the
   * database, whose transactions hold its write lock from their start), and reads where its
   * version stands.
   */
  async function lock(trx: Db, id: string): Promise<{ version: number; workspace_id: string }> {
    const [row] = (await lockRow(trx, id)).rows;
    if (!row) throw new Error(`no document ${id} to lock`);
    return row;
  }

  /**
   * Stores a snapshot; its time is later than `after` (the snapshot it replaces), so a copy that
   * read that one always sees this one is newer.
   */
  async function saveState(trx: Db, id: string, doc: Y.Doc, after = 0): Promise<number> {
    return saveEncoded(trx, id, encodeState(doc), after);
  }

  async function saveEncoded(trx: Db, id: string, state: string, after: number): Promise<number> {
    const at = Math.max(Date.now(), after + 1);
    await trx
      .insertInto('doc_states')
      .values({ artifact_id: id, state, updated_at: at })
      .onConflict((oc) => oc.column('artifact_id').doUpdateSet({ state, updated_at: at }))
      .execute();
    return at;
  }

  /** The stored snapshot, made once (under the lock, so every process builds on the same blocks). */
  async function snapshotOf(id: string): Promise<{ state: string; updated_at: number }> {
    const row = await db
      .selectFrom('doc_states')
      .select(['state', 'updated_at'])
      .where('artifact_id', '=', id)
      .executeTakeFirst();
    if (row) return row;
    return db.transaction().execute(async (trx) => {
      await lock(trx, id);
      const made = await trx
        .selectFrom('doc_states')
        .select(['state', 'updated_at'])
        .where('artifact_id', '=', id)
        .executeTakeFirst();
      if (made) return made;
      const artifact = await trx
        .selectFrom('artifacts')
        .select('content')
        .where('id', '=', id)
        .executeTakeFirst();
      const first = docFromMarkdown(artifact?.content ?? '');
      const state = encodeState(first);
      first.destroy();
      return { state, updated_at: await saveEncoded(trx, id, state, 0) };
    });
  }

  /** Reads a document into `doc`: its snapshot and the log after it. */
  async function load(id: string, doc: Y.Doc) {
    const snapshot = await snapshotOf(id);
    Y.applyUpdate(doc, Buffer.from(snapshot.state, 'base64'), LOAD_ORIGIN);
    const log = await db
      .selectFrom('doc_updates')
      .select(['seq', 'update'])
      .where('artifact_id', '=', id)
      .orderBy('seq')
      .execute();
    for (const entry of log) Y.applyUpdate(doc, Buffer.from(entry.update, 'base64'), LOAD_ORIGIN);
    return { storedAt: snapshot.updated_at, lastSeq: log.at(-1)?.seq ?? 0, logged: log.length };
  }

  /** Takes in what other processes stored since this copy last looked (Yjs merges without loss). */
  async function takeIn(trx: Db, live: LiveDoc): Promise<void> {
    const [snapshot] = (await newerState(trx, live.id, live.storedAt)).rows;
    if (snapshot) {
      Y.applyUpdate(live.doc, Buffer.from(snapshot.state, 'base64'), LOAD_ORIGIN);
      live.storedAt = snapshot.updated_at;
    }
    const log = (await updatesAfter(trx, live.id, live.lastSeq)).rows;
    for (const entry of log) Y.applyUpdate(live.doc, Buffer.from(entry.update, 'base64'), LOAD_ORIGIN);
    if (log.length) live.lastSeq = Math.max(live.lastSeq, log.at(-1)!.seq);
    live.logged = (snapshot ? 0 : live.logged) + log.length;
  }

  /** Adds changes to the log as one entry; its sequence number, or null when there were none. */
  async function append(trx: Db, id: string, changes: readonly Unsaved[]): Promise<number | null> {
    if (changes.length === 0) return null;
    const merged = changes.length === 1 ? changes[0]!.update : Y.mergeUpdates(changes.map((c) => c.update));
    const [row] = (await logUpdate(trx, id, Buffer.from(merged).toString('base64'), Date.now())).rows;
    return Number(row!.seq);
  }

  /**
   * Writes a snapshot of everything this copy has, with its unsaved changes, and drops the log
   * entries it holds. Returns the changes it stored.
   */
  async function fold(live: LiveDoc): Promise<Unsaved[]> {
    let taken: Unsaved[] = [];
    try {
      const done = await db.transaction().execute(async (trx) => {
        await lock(trx, live.id);
        await takeIn(trx, live);
        // The snapshot and the changes it stores are taken at one moment.
        const state = encodeState(live.doc);
        taken = live.unsaved.splice(0);
        const seq = await append(trx, live.id, taken);
        const storedAt = await saveEncoded(trx, live.id, state, live.storedAt);
        const upTo = Math.max(seq ?? 0, live.lastSeq);
        await trx
          .deleteFrom('doc_updates')
          .where('artifact_id', '=', live.id)
          .where('seq', '<=', upTo)
          .execute();
        return { storedAt, upTo };
      });
      live.storedAt = done.storedAt;
      live.lastSeq = done.upTo;
      live.logged = 0;
      return taken;
    } catch (error) {
      // Nothing was stored: the changes are still to be stored.
      live.unsaved.unshift(...taken);
      throw error;
    }
  }

  /** Takes in what other processes stored, outside any write. */
  const refresh = (live: LiveDoc) => takeIn(db, live);

  return { lock, load, takeIn, refresh, append, fold, saveState };
}

export type DocLog = ReturnType<typeof docLog>;

// The statements every store makes, compiled once (see storage/compiled.ts).
const lockRow = compiled((db, id: string) =>
  db
    .selectFrom('artifacts')
    .select(['version', 'workspace_id'])
    .where('id', '=', id)
    .$call((q) => (onPostgres(db) ? q.forUpdate() : q)),
);
const newerState = compiled((db, id: string, after: number) =>
  db
    .selectFrom('doc_states')
    .select(['state', 'updated_at'])
    .where('artifact_id', '=', id)
    .where('updated_at', '>', after),
);
const updatesAfter = compiled((db, id: string, after: number) =>
  db
    .selectFrom('doc_updates')
    .select(['seq', 'update'])
    .where('artifact_id', '=', id)
    .where('seq', '>', after)
    .orderBy('seq'),
);
const logUpdate = compiled((db, id: string, update: string, at: number) =>
  db.insertInto('doc_updates').values({ artifact_id: id, update, created_at: at }).returning('seq'),
);
