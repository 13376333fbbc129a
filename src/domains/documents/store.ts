import { log as logger } from '../../observability/log.ts';
import * as Y from 'yjs';
import type { Deps } from '../deps.ts';
import type { DocumentBounds } from './bounds.ts';
import { docLog } from './doc-log.ts';
import {
  AGENT_ORIGIN,
  followChanges,
  LOAD_ORIGIN,
  marksOf,
  newLiveDoc,
  type KeptWatch,
  type LiveDoc,
  type LiveDocHooks,
  type PersonOrigin,
  type StoredMark,
  type Writer,
} from './live-doc.ts';
import { compact, projection } from './model.ts';
import { peerChanges } from './peer-changes.ts';
import { repairBlocks } from './repair.ts';
import { FOLD_AFTER, persister } from './persist.ts';

export type { KeptBlock, LiveDoc, LiveDocHooks, VersionRow, Writer } from './live-doc.ts';
export type { PersistOptions } from './persist.ts';

export interface StoreOptions {
  /** A person's edits become one stored version after this long without another. */
  editQuietMs?: number;
  /** ... and after at most this long, however long they keep typing. */
  editMaxWaitMs?: number;
  /** A document nobody used for this long leaves memory. */
  idleMs?: number;
  /** At most this many documents nobody is connected to stay in memory; the least recently used leave first. */
  maxLoaded?: number;
  /**
   * Changes another instance made and has not said it stored within this long are stored here
   * (that instance may have stopped).
   */
  peerGraceMs?: number;
  /** How large people may make a document live (defaults in bounds.ts). */
  bounds?: Partial<DocumentBounds>;
}

/**
 * The live documents of this process: one Yjs document per document in use, the one people
 * are connected to and agents write to. Loaded on first use; people's edits stored after a quiet
 * period; left in memory while anyone is connected, or used recently, within a cap.
 */
export function documentStore(deps: Deps, options: StoreOptions = {}) {
  const editQuietMs = options.editQuietMs ?? 2_000;
  const editMaxWaitMs = options.editMaxWaitMs ?? 10_000;
  const idleMs = options.idleMs ?? 60_000;
  // A 60,000-character document takes about 2.5 MB in memory; 32 of them stay under 100 MB.
  const maxLoaded = options.maxLoaded ?? 32;
  const peerGraceMs = options.peerGraceMs ?? editMaxWaitMs + 10_000;
  const log = docLog(deps);
  const hookSets: LiveDocHooks[] = [];
  const loaded = new Map<string, LiveDoc>();
  const loading = new Map<string, Promise<LiveDoc>>();
  /** Documents being stored on their way out of memory. */
  const leaving = new Set<LiveDoc>();
  let sweeper: NodeJS.Timeout | undefined;

  function notifyStored(live: LiveDoc, marks: StoredMark[]): void {
    if (marks.length === 0) return;
    for (const h of hookSets) h.stored?.(live, marks);
  }
  const { persist } = persister(deps, log, notifyStored);

  function newDoc(id: string): Y.Doc {
    for (const h of hookSets) if (h.newDoc) return h.newDoc(id);
    return new Y.Doc();
  }

  function live(id: string, doc: Y.Doc, storedAt: number, lastSeq: number, logged: number): LiveDoc {
    const made = newLiveDoc(id, doc, storedAt, lastSeq, logged);
    followChanges(made, (update, change) => {
      for (const h of hookSets) h.changed?.(made, update, change);
    });
    return made;
  }

  /** Whether a write, a replica or a connected person holds the document. */
  function busy(l: LiveDoc): boolean {
    return l.users > 0 || hookSets.some((h) => h.inUse?.(l) === true);
  }

  async function load(id: string): Promise<LiveDoc> {
    const doc = newDoc(id);
    let made: LiveDoc | undefined;
    try {
      const stored = await log.load(id, doc);
      made = live(id, doc, stored.storedAt, stored.lastSeq, stored.logged);
      // Blocks stored malformed before people's updates were judged whole are mended (and stored).
      const repaired = repairBlocks(id, doc) > 0;
      let shared = false;
      for (const h of hookSets) if (h.loaded && (await h.loaded(made))) shared = true;
      // Nothing can refer to removed blocks of a document no one else has open.
      const compacted = !shared && compact(doc) > 0;
      if (compacted || repaired || made.logged >= FOLD_AFTER)
        notifyStored(made, marksOf(await log.fold(made)));
    } catch (error) {
      if (made) for (const h of hookSets) h.unloaded?.(made);
      doc.destroy();
      throw error;
    }
    keep(made);
    return made;
  }

  function keep(l: LiveDoc): void {
    loaded.set(l.id, l);
    evictOverflow();
    sweeper ??= setInterval(() => void sweep(), Math.max(1000, Math.min(idleMs, 30_000))).unref();
  }

  /**
   * Takes in a document its create has just stored whole (a snapshot stored at `storedAt`, no
   * log), as loading it would, so its first use does not read it back.
   */
  function adopt(id: string, doc: Y.Doc, storedAt: number, digestVersion: number | undefined): void {
    if (loaded.has(id) || loading.has(id)) return;
    let own = doc;
    if (hookSets.some((h) => h.newDoc)) {
      own = newDoc(id);
      Y.applyUpdate(own, Y.encodeStateAsUpdate(doc), LOAD_ORIGIN);
    }
    const made = live(id, own, storedAt, 0, 0);
    made.digestVersion = digestVersion;
    keep(made);
    for (const h of hookSets) {
      h.loaded?.(made).catch((error: unknown) =>
        logger.error({ err: error, document: id }, 'could not share a live document'),
      );
    }
  }

  /** The live document, loaded from storage on first use. */
  async function open(id: string): Promise<LiveDoc> {
    const known = loaded.get(id);
    if (known) {
      known.lastUsed = Date.now();
      return known;
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
    const known = loaded.get(id);
    if (!known) return stored ?? '';
    await log.refresh(known);
    return projection(known.doc);
  }

  // ── people's edits ──────────────────────────────────────────────────────────────────────

  function scheduleStore(l: LiveDoc, delay?: number): void {
    if (l.timer) clearTimeout(l.timer);
    const since = l.pendingSince ?? Date.now();
    const wait = delay ?? Math.max(0, Math.min(editQuietMs, since + editMaxWaitMs - Date.now()));
    l.timer = setTimeout(() => {
      flushPersonEdits(l).catch((error: unknown) =>
        logger.error({ err: error, document: l.id }, 'could not store edits'),
      );
    }, wait);
    l.timer.unref?.();
  }

  /**
   * A person's Yjs update to a live document (checked by the caller): applied at once; stored,
   * with a new version, after a short quiet period (edits coalesce).
   */
  function applyPersonChange(l: LiveDoc, personId: string, update: Uint8Array): void {
    const made = l.made;
    Y.applyUpdate(l.doc, update, { person: personId } satisfies PersonOrigin);
    l.lastUsed = Date.now();
    // Nothing new (an editor syncing what the document has already): nothing to store.
    if (l.made === made) return;
    l.pendingEditors.add(personId);
    l.pendingSince ??= Date.now();
    scheduleStore(l);
  }

  async function applyPersonUpdate(id: string, personId: string, update: Uint8Array): Promise<void> {
    applyPersonChange(await open(id), personId, update);
  }

  async function flushPersonEdits(l: LiveDoc): Promise<boolean> {
    if (l.timer) clearTimeout(l.timer);
    l.timer = undefined;
    const takenOver = l.unsaved.some((u) => u.from !== undefined);
    if (l.pendingEditors.size === 0 && !takenOver) return false;
    const editors = [...l.pendingEditors];
    const since = l.pendingSince;
    l.pendingEditors.clear();
    l.pendingSince = undefined;
    try {
      await persist(l, {
        reason: 'edit',
        authorId: editors.length === 1 ? editors[0]! : null,
        instruction: editors.length > 1 ? `live edit by ${editors.length} people` : 'live edit',
        ...(editors[0] ? { edited: { actorId: editors[0], by: 'person' as const } } : {}),
      });
    } catch (error) {
      // Not stored: still pending, tried again after another quiet period.
      for (const e of editors) l.pendingEditors.add(e);
      l.pendingSince = Math.min(l.pendingSince ?? Date.now(), since ?? Date.now());
      scheduleStore(l, editQuietMs);
      throw error;
    }
    return true;
  }

  /** Stores pending edits now (before an agent write or a read, on eviction, on shutdown); says whether any were. */
  async function flush(id: string): Promise<boolean> {
    const known = loaded.get(id);
    return known ? flushPersonEdits(known) : false;
  }

  // Other instances' changes: theirs to store, this instance's when they stop first.
  const peers = peerChanges({
    graceMs: peerGraceMs,
    current: (l) => loaded.get(l.id) === l,
    store: flushPersonEdits,
  });

  // ── leaving memory ──────────────────────────────────────────────────────────────────────

  async function evict(l: LiveDoc): Promise<void> {
    if (busy(l) || l.peers.size > 0 || leaving.has(l)) return;
    const since = l.lastUsed;
    leaving.add(l);
    try {
      await flushPersonEdits(l);
      if (l.logged > 0 || l.unsaved.length > 0) notifyStored(l, marksOf(await log.fold(l)));
    } finally {
      leaving.delete(l);
    }
    // Someone took it up meanwhile: it stays.
    if (busy(l) || l.peers.size > 0 || l.lastUsed !== since || loaded.get(l.id) !== l) return;
    loaded.delete(l.id);
    if (l.timer) clearTimeout(l.timer);
    if (l.peerTimer) clearTimeout(l.peerTimer);
    for (const h of hookSets) h.unloaded?.(l);
    l.doc.destroy();
  }

  const evictSafely = (l: LiveDoc) =>
    evict(l).catch((error: unknown) =>
      logger.error({ err: error, document: l.id }, 'could not unload a live document'),
    );

  /** The cap bounds documents nobody is connected to; those people use stay. */
  function evictOverflow(): void {
    const idle = [...loaded.values()].filter((l) => !busy(l)).sort((a, b) => a.lastUsed - b.lastUsed);
    for (const l of idle.slice(0, Math.max(0, idle.length - maxLoaded))) void evictSafely(l);
  }

  async function sweep(): Promise<void> {
    const cutoff = Date.now() - idleMs;
    for (const l of [...loaded.values()]) if (l.lastUsed < cutoff) await evictSafely(l);
    evictOverflow();
  }

  /** Stores and unloads a document now unless something holds it; says whether it left memory. */
  async function unload(id: string): Promise<boolean> {
    const known = loaded.get(id);
    if (known) await evict(known);
    return !loaded.has(id);
  }

  /**
   * Lets the live socket or other instances take part in documents' lives. Documents already
   * loaded leave memory first when the hooks make documents of their own kind.
   */
  async function extend(hooks: LiveDocHooks): Promise<void> {
    if (hookSets.includes(hooks)) return;
    if (hooks.newDoc) {
      await Promise.allSettled([...loading.values()]);
      for (const id of [...loaded.keys()]) {
        if (!(await unload(id))) throw new Error(`document ${id} is in use; attach live documents first`);
      }
    }
    hookSets.push(hooks);
  }

  async function close(): Promise<void> {
    if (sweeper) clearInterval(sweeper);
    sweeper = undefined;
    let failed: unknown;
    for (const l of [...loaded.values()]) {
      if (l.peerTimer) clearTimeout(l.peerTimer);
      await flushPersonEdits(l).catch((error: unknown) => (failed ??= error));
    }
    for (const h of hookSets) await h.close?.().catch((error: unknown) => (failed ??= error));
    for (const l of loaded.values()) l.doc.destroy();
    loaded.clear();
    if (failed) throw failed;
  }

  return {
    open,
    adopt,
    refresh: log.refresh,
    currentMarkdown,
    persist,
    applyPersonUpdate,
    applyPersonChange,
    flush,
    saveState: log.saveState,
    peerChange: peers.change,
    peerStored: peers.stored,
    peerState: peers.state,
    extend,
    unload,
    close,
    loadedCount: () => loaded.size,
    /** Marks a write in flight so removed blocks edited meanwhile are kept. */
    beginWrite(l: LiveDoc): KeptWatch {
      l.users++;
      l.lastUsed = Date.now();
      const watch: KeptWatch = { removed: new Set(), kept: [] };
      l.watch = watch;
      return watch;
    },
    /** Shows who is writing (and which blocks) to those connected. */
    writing(l: LiveDoc, writer: Writer): void {
      for (const h of hookSets) h.writing?.(l, writer);
    },
    endWrite(l: LiveDoc): void {
      l.users = Math.max(0, l.users - 1);
      l.watch = undefined;
      l.lastUsed = Date.now();
      for (const h of hookSets) h.writing?.(l, null);
    },
    agentOrigin: AGENT_ORIGIN,
  };
}

export type DocumentStore = ReturnType<typeof documentStore>;
