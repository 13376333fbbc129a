import type { Insertable, Transaction } from 'kysely';
import * as Y from 'yjs';
import { newId } from '../../ids.ts';
import type { CheckpointTable, Database } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';
import type { Db } from '../workspace/access.ts';
import {
  blockText,
  compact,
  docFromMarkdown,
  docFromState,
  encodeState,
  isDeleted,
  projection,
  storedDigest,
  type BlockMap,
} from './model.ts';
import { packText } from '../../storage/packed.ts';

export interface StoreOptions {
  /** A person's edits become one stored version after this long without another. */
  editQuietMs?: number;
  /** A document nobody used for this long leaves memory. */
  idleMs?: number;
  /** At most this many documents stay in memory; the least recently used leave first. */
  maxLoaded?: number;
}

export interface KeptBlock {
  id: string;
  excerpt: string;
}

/** Watches a write in flight: removed blocks a person edits meanwhile are restored and named. */
interface KeptWatch {
  removed: Set<BlockMap>;
  kept: KeptBlock[];
}

export interface LiveDoc {
  id: string;
  doc: Y.Doc;
  lastUsed: number;
  /** People whose edits are not stored yet, and the timer that will store them. */
  pendingEditors: Set<string>;
  timer: NodeJS.Timeout | undefined;
  watch: KeptWatch | undefined;
  /** Agent writes and replicas that may still refer to removed blocks. */
  users: number;
  /** When the snapshot this copy last read or wrote was stored. */
  storedAt: number;
  /** The last stored change (doc_updates.seq) this copy has. */
  lastSeq: number;
  /** Stored changes not yet folded into the snapshot. */
  logged: number;
  /** Changes made here and not stored yet. */
  unsaved: Uint8Array[];
  /**
   * Version rows of agent writes that started landing and are not stored yet: whichever store
   * of this copy's changes comes first stores them too, so no write lands without its row.
   */
  staged: VersionRow[];
  /** The version whose block digest a stored version row holds, as far as this copy knows. */
  digestVersion: number | undefined;
}

export type VersionRow = Insertable<CheckpointTable> & { id: string };

export interface PersistOptions {
  reason: 'agent_edit' | 'edit';
  authorId: string | null;
  instruction: string | null;
  /**
   * An agent write's version row (staged before it landed), completed with the version the
   * write produced; stored in the same transaction as the write.
   */
  agentRow?: { id: string; complete(version: number): VersionRow };
  /** Runs inside the write's transaction with the version it produced (see WriteOptions). */
  within?: (trx: Transaction<Database>, version: number) => Promise<void>;
}

const AGENT_ORIGIN = 'agent';
const LOAD_ORIGIN = 'load';
/** After this many stored changes, the log is folded into a new snapshot. */
const FOLD_AFTER = 50;

export function documentStore(deps: Deps, options: StoreOptions = {}) {
  const { db } = deps;
  const editQuietMs = options.editQuietMs ?? 2_000;
  const idleMs = options.idleMs ?? 60_000;
  // A 60,000-character document takes about 2.5 MB in memory; 32 of them stay under 100 MB.
  const maxLoaded = options.maxLoaded ?? 32;
  const loaded = new Map<string, LiveDoc>();
  const loading = new Map<string, Promise<LiveDoc>>();
  let sweeper: NodeJS.Timeout | undefined;

  function watchUpdates(live: LiveDoc) {
    live.doc.on('update', (update: Uint8Array, origin: unknown) => {
      if (origin !== LOAD_ORIGIN) live.unsaved.push(update);
    });
    live.doc.on('afterTransaction', (tr: Y.Transaction) => {
      if (tr.origin === AGENT_ORIGIN || tr.origin === 'compact' || tr.origin === LOAD_ORIGIN) return;
      // A person's edit landed in a block an agent removed (during the write, or from a replica
      // that had not seen it yet): keep it, next to the new text, and tell a write in flight.
      const revived: BlockMap[] = [];
      for (const type of tr.changed.keys()) {
        if (!(type instanceof Y.Text)) continue;
        const map = type.parent as BlockMap | null;
        if (map instanceof Y.Map && isDeleted(map) && map.get('text') === type) revived.push(map);
      }
      if (revived.length === 0) return;
      live.doc.transact(() => {
        for (const map of revived) map.delete('deleted');
      }, AGENT_ORIGIN);
      for (const map of revived) {
        live.watch?.removed.delete(map);
        live.watch?.kept.push({
          id: map.get('id') as string,
          excerpt: blockText(map).toString().trim().slice(0, 200),
        });
      }
    });
  }

  async function load(id: string): Promise<LiveDoc> {
    const row = await db
      .selectFrom('doc_states')
      .select(['state', 'updated_at'])
      .where('artifact_id', '=', id)
      .executeTakeFirst();
    let doc: Y.Doc;
    let storedAt = row?.updated_at ?? 0;
    if (row) {
      doc = docFromState(row.state);
    } else {
      const artifact = await db
        .selectFrom('artifacts')
        .select('content')
        .where('id', '=', id)
        .executeTakeFirst();
      doc = docFromMarkdown(artifact?.content ?? '');
      storedAt = await saveState(db, id, doc);
    }
    const log = await db
      .selectFrom('doc_updates')
      .select(['seq', 'update'])
      .where('artifact_id', '=', id)
      .orderBy('seq')
      .execute();
    for (const entry of log) Y.applyUpdate(doc, Buffer.from(entry.update, 'base64'), LOAD_ORIGIN);
    // Nothing can refer to removed blocks of a document no one has open.
    const compacted = compact(doc) > 0;
    const live = liveDoc(id, doc, storedAt, log.at(-1)?.seq ?? 0, log.length);
    if (compacted || log.length >= FOLD_AFTER) await fold(live);
    keep(live);
    return live;
  }

  function liveDoc(id: string, doc: Y.Doc, storedAt: number, lastSeq: number, logged: number): LiveDoc {
    const live: LiveDoc = {
      id,
      doc,
      lastUsed: Date.now(),
      pendingEditors: new Set(),
      timer: undefined,
      watch: undefined,
      users: 0,
      storedAt,
      lastSeq,
      logged,
      unsaved: [],
      staged: [],
      digestVersion: undefined,
    };
    watchUpdates(live);
    return live;
  }

  function keep(live: LiveDoc): void {
    loaded.set(live.id, live);
    evictOverflow();
    sweeper ??= setInterval(() => void evictIdle(), Math.max(1000, Math.min(idleMs, 30_000))).unref();
  }

  /**
   * Takes in a document its create has just stored whole (a snapshot stored at `storedAt`, no
   * log), as loading it would, so its first use does not read it back.
   */
  function adopt(id: string, doc: Y.Doc, storedAt: number, digestVersion: number | undefined): void {
    if (loaded.has(id) || loading.has(id)) return;
    const live = liveDoc(id, doc, storedAt, 0, 0);
    live.digestVersion = digestVersion;
    keep(live);
  }

  /** Writes a fresh snapshot holding everything this copy has, and drops the log it covers. */
  async function fold(live: LiveDoc): Promise<void> {
    await db.transaction().execute(async (trx) => {
      await appendLog(trx, live);
      live.storedAt = await saveState(trx, live.id, live.doc);
      await trx
        .deleteFrom('doc_updates')
        .where('artifact_id', '=', live.id)
        .where('seq', '<=', live.lastSeq)
        .execute();
    });
    live.logged = 0;
  }

  /** Stores this copy's unsaved changes as one entry of the log. */
  async function appendLog(trx: Db, live: LiveDoc): Promise<void> {
    if (live.unsaved.length === 0) return;
    const changes = live.unsaved.splice(0);
    try {
      const merged = changes.length === 1 ? changes[0]! : Y.mergeUpdates(changes);
      const row = await trx
        .insertInto('doc_updates')
        .values({
          artifact_id: live.id,
          update: Buffer.from(merged).toString('base64'),
          created_at: Date.now(),
        })
        .returning('seq')
        .executeTakeFirstOrThrow();
      live.lastSeq = Math.max(live.lastSeq, Number(row.seq));
      live.logged++;
    } catch (error) {
      live.unsaved.unshift(...changes);
      throw error;
    }
  }

  /** The live document, loaded from storage on first use. */
  async function open(id: string): Promise<LiveDoc> {
    const live = loaded.get(id);
    if (live) {
      live.lastUsed = Date.now();
      return live;
    }
    let pending = loading.get(id);
    if (!pending) {
      pending = load(id).finally(() => loading.delete(id));
      loading.set(id, pending);
    }
    return pending;
  }

  /**
   * The current markdown: live when the document is in memory (first taking in what other
   * processes stored since), else as last stored.
   */
  async function currentMarkdown(id: string, stored: string | null): Promise<string> {
    const live = loaded.get(id);
    if (!live) return stored ?? '';
    await refresh(live);
    return projection(live.doc);
  }

  async function saveState(trx: Db, id: string, doc: Y.Doc): Promise<number> {
    const state = encodeState(doc);
    const now = Date.now();
    await trx
      .insertInto('doc_states')
      .values({ artifact_id: id, state, updated_at: now })
      .onConflict((oc) => oc.column('artifact_id').doUpdateSet({ state, updated_at: now }))
      .execute();
    return now;
  }

  /**
   * Merges what other processes stored since this copy last looked (Yjs merges without loss),
   * so a write under the lease starts from everything stored.
   */
  async function refresh(live: LiveDoc): Promise<void> {
    const snapshot = await db
      .selectFrom('doc_states')
      .select(['state', 'updated_at'])
      .where('artifact_id', '=', live.id)
      .where('updated_at', '>', live.storedAt)
      .executeTakeFirst();
    if (snapshot) {
      Y.applyUpdate(live.doc, Buffer.from(snapshot.state, 'base64'), LOAD_ORIGIN);
      live.storedAt = snapshot.updated_at;
    }
    const log = await db
      .selectFrom('doc_updates')
      .select(['seq', 'update'])
      .where('artifact_id', '=', live.id)
      .where('seq', '>', live.lastSeq)
      .orderBy('seq')
      .execute();
    for (const entry of log) Y.applyUpdate(live.doc, Buffer.from(entry.update, 'base64'), LOAD_ORIGIN);
    if (log.length) {
      live.lastSeq = log.at(-1)!.seq;
      live.logged += log.length;
    }
  }

  /**
   * Stores the document as it now is and moves its version on by one, recording a version row:
   * a person's `edit`, or the agent write's own row (`agentRow`). Rows of agent writes staged
   * on this copy are stored first. Returns the new version.
   */
  async function persist(live: LiveDoc, opts: PersistOptions): Promise<number> {
    const markdown = projection(live.doc);
    const staged = live.staged.slice();
    const version = await db.transaction().execute(async (trx) => {
      const now = Date.now();
      const { version } = await trx
        .updateTable('artifacts')
        .set((eb) => ({ content: markdown, version: eb('version', '+', 1), updated_at: now }))
        .where('id', '=', live.id)
        .returning('version')
        .executeTakeFirstOrThrow();
      for (const row of staged) {
        if (row.id === opts.agentRow?.id) continue;
        await trx
          .insertInto('checkpoints')
          .values(row)
          .onConflict((oc) => oc.column('id').doNothing())
          .execute();
      }
      if (opts.agentRow) {
        const row = opts.agentRow.complete(version);
        // Its row may already be stored, without the result, by a store during the write.
        await trx
          .insertInto('checkpoints')
          .values(row)
          .onConflict((oc) =>
            oc.column('id').doUpdateSet((eb) => ({
              result_version: eb.ref('excluded.result_version'),
              result_blocks_json: eb.ref('excluded.result_blocks_json'),
              kept_json: eb.ref('excluded.kept_json'),
            })),
          )
          .execute();
      } else if (opts.reason === 'edit') {
        await trx
          .insertInto('checkpoints')
          .values({
            id: newId('ver'),
            artifact_id: live.id,
            doc_version: version,
            reason: 'edit',
            label: null,
            pinned: 0,
            author_id: opts.authorId,
            instruction: opts.instruction,
            content: packText(markdown),
            kept_json: null,
            blocks_json: storedDigest(live.doc),
            created_at: now,
          })
          .execute();
      }
      await appendLog(trx, live);
      await opts.within?.(trx, version);
      return version;
    });
    const stored = new Set(staged.map((row) => row.id));
    if (opts.agentRow) stored.add(opts.agentRow.id);
    live.staged = live.staged.filter((row) => !stored.has(row.id));
    live.digestVersion = version;
    if (live.logged >= FOLD_AFTER) await fold(live);
    return version;
  }

  async function flushPersonEdits(live: LiveDoc): Promise<boolean> {
    if (live.timer) clearTimeout(live.timer);
    live.timer = undefined;
    if (live.pendingEditors.size === 0) return false;
    const editors = [...live.pendingEditors];
    live.pendingEditors.clear();
    const version = await persist(live, {
      reason: 'edit',
      authorId: editors.length === 1 ? editors[0]! : null,
      instruction: editors.length === 1 ? 'live edit' : `live edit by ${editors.length} people`,
    });
    const artifact = await db
      .selectFrom('artifacts')
      .select('workspace_id')
      .where('id', '=', live.id)
      .executeTakeFirst();
    if (artifact) {
      deps.emit({
        type: 'document.edited',
        workspaceId: artifact.workspace_id,
        actorId: editors[0]!,
        data: { document_id: live.id, version, by: 'person' },
      });
    }
    return true;
  }

  /**
   * A person's Yjs update, from the live socket or any replica: applied to the live document
   * at once; stored, with a new version, after a short quiet period (edits coalesce).
   */
  async function applyPersonUpdate(id: string, personId: string, update: Uint8Array): Promise<void> {
    const live = await open(id);
    Y.applyUpdate(live.doc, update, { person: personId });
    live.pendingEditors.add(personId);
    if (live.timer) clearTimeout(live.timer);
    live.timer = setTimeout(() => {
      flushPersonEdits(live).catch((error: unknown) =>
        console.error(`could not store edits to ${id}`, error),
      );
    }, editQuietMs);
    live.timer.unref?.();
  }

  /** Stores pending edits now (before an agent write or a read, on eviction, on shutdown); says whether any were. */
  async function flush(id: string): Promise<boolean> {
    const live = loaded.get(id);
    return live ? flushPersonEdits(live) : false;
  }

  async function evict(live: LiveDoc): Promise<void> {
    if (live.users > 0) return;
    await flushPersonEdits(live);
    if (live.users > 0 || loaded.get(live.id) !== live) return;
    if (live.logged > 0 || live.unsaved.length > 0) await fold(live);
    loaded.delete(live.id);
    live.doc.destroy();
  }

  function evictOverflow() {
    if (loaded.size <= maxLoaded) return;
    const idle = [...loaded.values()].filter((l) => l.users === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const live of idle.slice(0, loaded.size - maxLoaded)) {
      void evict(live).catch((error: unknown) => console.error(`could not evict ${live.id}`, error));
    }
  }

  async function evictIdle(): Promise<void> {
    const cutoff = Date.now() - idleMs;
    for (const live of [...loaded.values()]) if (live.lastUsed < cutoff) await evict(live);
  }

  async function close(): Promise<void> {
    if (sweeper) clearInterval(sweeper);
    sweeper = undefined;
    for (const live of [...loaded.values()]) await flushPersonEdits(live);
  }

  return {
    open,
    adopt,
    refresh,
    currentMarkdown,
    persist,
    applyPersonUpdate,
    flush,
    saveState,
    close,
    loadedCount: () => loaded.size,
    /** Marks a write in flight so removed blocks edited meanwhile are kept. */
    beginWrite(live: LiveDoc): KeptWatch {
      live.users++;
      live.lastUsed = Date.now();
      const watch: KeptWatch = { removed: new Set(), kept: [] };
      live.watch = watch;
      return watch;
    },
    endWrite(live: LiveDoc): void {
      live.users = Math.max(0, live.users - 1);
      live.watch = undefined;
      live.lastUsed = Date.now();
    },
    agentOrigin: AGENT_ORIGIN,
  };
}

export type DocumentStore = ReturnType<typeof documentStore>;
