import { log as logger } from '../../observability/log.ts';
import * as Y from 'yjs';
import type { Deps } from '../deps.ts';
import type { DocumentBounds } from './bounds.ts';
import { docLog } from './doc-log.ts';
import {
  AGENT_ORIGIN,
  LOAD_ORIGIN,
  marksOf,
  packedMarkdown,
  type KeptWatch,
  type LiveDoc,
  type LiveDocHooks,
  type Writer,
} from './live-doc.ts';
import { compact, digestEntries, projection } from './model.ts';
import { peerChanges } from './peer-changes.ts';
import { repairBlocks } from './repair.ts';
import { FOLD_AFTER, persister } from './persist.ts';
import { applyPersonChange, flushPersonEdits } from './store-edits.ts';
import { keep, unload } from './store-memory.ts';
import { live, newDoc, notifyStored, type StoreState } from './store-state.ts';

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
  /** Characters the documents no one is using may hold between them before the oldest leave. */
  maxIdleCharacters?: number;
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
  const editMaxWaitMs = options.editMaxWaitMs ?? 10_000;
  const timings = {
    editQuietMs: options.editQuietMs ?? 2_000,
    editMaxWaitMs,
    idleMs: options.idleMs ?? 60_000,
    maxLoaded: options.maxLoaded ?? 32,
    // A 60,000-character document takes about 4 MB of the process: documents no one is using
    // stay while they hold 500,000 characters between them (about 8 of that size).
    maxIdleCharacters: options.maxIdleCharacters ?? 500_000,
  };
  const peerGraceMs = options.peerGraceMs ?? editMaxWaitMs + 10_000;
  const log = docLog(deps);
  const hookSets: LiveDocHooks[] = [];
  /**
   * Documents just stored: the next agent write's version row holds the text they were stored
   * with, packed once the work under way has answered, off that write's path. Ids, not
   * documents, wait for it, so nothing stays in memory for it. (Deflating on zlib's threads
   * instead cost the event loop as much as deflating here, and was not always done in time.)
   */
  const packDue = new Set<string>();
  const packLater = (id: string) => {
    if (packDue.size === 0) {
      setImmediate(() => {
        for (const due of packDue) {
          const l = s.loaded.get(due);
          if (l && !l.doc.isDestroyed) packedMarkdown(l);
        }
        packDue.clear();
      });
    }
    packDue.add(id);
  };
  const { persist } = persister(deps, log, (l, marks) => {
    notifyStored(hookSets, l, marks);
    packLater(l.id);
  });
  const s: StoreState = {
    log,
    timings,
    hookSets,
    loaded: new Map(),
    loading: new Map(),
    leaving: new Set(),
    sweeper: undefined,
    persist,
  };

  // Other instances' changes: theirs to store, this instance's when they stop first.
  const peers = peerChanges({
    graceMs: peerGraceMs,
    current: (l) => s.loaded.get(l.id) === l,
    store: (l) => flushPersonEdits(s, l),
  });

  return {
    open: (id: string) => open(s, id),
    adopt: (id: string, doc: Y.Doc, storedAt: number, digestVersion: number | undefined) =>
      adopt(s, id, doc, storedAt, digestVersion),
    refresh: log.refresh,
    currentMarkdown: (id: string, stored: string | null) => currentMarkdown(s, id, stored),
    persist,
    applyPersonUpdate: async (id: string, personId: string, update: Uint8Array) =>
      applyPersonChange(s, await open(s, id), personId, update),
    applyPersonChange: (l: LiveDoc, personId: string, update: Uint8Array) =>
      applyPersonChange(s, l, personId, update),
    /** Stores pending edits now (before an agent write or a read, on eviction, on shutdown); says whether any were. */
    flush: async (id: string) => {
      const known = s.loaded.get(id);
      return known ? flushPersonEdits(s, known) : false;
    },
    saveState: log.saveState,
    peerChange: peers.change,
    peerStored: peers.stored,
    peerState: peers.state,
    extend: (hooks: LiveDocHooks) => extend(s, hooks),
    unload: (id: string) => unload(s, id),
    close: () => close(s),
    loadedCount: () => s.loaded.size,
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

async function load(s: StoreState, id: string): Promise<LiveDoc> {
  const doc = newDoc(s, id);
  let made: LiveDoc | undefined;
  try {
    const stored = await s.log.load(id, doc);
    made = live(s, id, doc, stored);
    // Blocks stored malformed before people's updates were judged whole are mended (and stored).
    const repaired = repairBlocks(id, doc) > 0;
    let shared = false;
    for (const h of s.hookSets) if (h.loaded && (await h.loaded(made))) shared = true;
    // Nothing can refer to removed blocks of a document no one else has open.
    const compacted = !shared && compact(doc) > 0;
    if (compacted || repaired || made.logged >= FOLD_AFTER)
      notifyStored(s.hookSets, made, marksOf(await s.log.fold(made)));
  } catch (error) {
    if (made) for (const h of s.hookSets) h.unloaded?.(made);
    doc.destroy();
    throw error;
  }
  keep(s, made);
  return made;
}

/**
 * Takes in a document its create has just stored whole (a snapshot stored at `storedAt`, no
 * log), as loading it would, so its first use does not read it back.
 */
function adopt(
  s: StoreState,
  id: string,
  doc: Y.Doc,
  storedAt: number,
  digestVersion: number | undefined,
): void {
  if (s.loaded.has(id) || s.loading.has(id)) return;
  let own = doc;
  if (s.hookSets.some((h) => h.newDoc)) {
    own = newDoc(s, id);
    Y.applyUpdate(own, Y.encodeStateAsUpdate(doc), LOAD_ORIGIN);
  }
  const made = live(s, id, own, { storedAt, lastSeq: 0, logged: 0 });
  made.digestVersion = digestVersion;
  // Its create stored the digest of this very text.
  if (digestVersion !== undefined) made.digestEntries = digestEntries(doc);
  keep(s, made);
  for (const h of s.hookSets) {
    h.loaded?.(made).catch((error: unknown) =>
      logger.error({ err: error, document: id }, 'could not share a live document'),
    );
  }
}

/** The live document, loaded from storage on first use. */
async function open(s: StoreState, id: string): Promise<LiveDoc> {
  const known = s.loaded.get(id);
  if (known) {
    known.lastUsed = Date.now();
    return known;
  }
  let pending = s.loading.get(id);
  if (!pending) {
    pending = load(s, id).finally(() => s.loading.delete(id));
    s.loading.set(id, pending);
  }
  return pending;
}

/**
 * The current markdown: live when the document is in memory (first taking in what other
 * processes stored since), else as last stored.
 */
async function currentMarkdown(s: StoreState, id: string, stored: string | null): Promise<string> {
  const known = s.loaded.get(id);
  if (!known) return stored ?? '';
  await s.log.refresh(known);
  return projection(known.doc);
}

/**
 * Lets the live socket or other instances take part in documents' lives. Documents already
 * loaded leave memory first when the hooks make documents of their own kind.
 */
async function extend(s: StoreState, hooks: LiveDocHooks): Promise<void> {
  if (s.hookSets.includes(hooks)) return;
  if (hooks.newDoc) {
    await Promise.allSettled([...s.loading.values()]);
    for (const id of [...s.loaded.keys()]) {
      if (!(await unload(s, id))) throw new Error(`document ${id} is in use; attach live documents first`);
    }
  }
  s.hookSets.push(hooks);
}

async function close(s: StoreState): Promise<void> {
  if (s.sweeper) clearInterval(s.sweeper);
  s.sweeper = undefined;
  let failed: unknown;
  for (const l of [...s.loaded.values()]) {
    if (l.peerTimer) clearTimeout(l.peerTimer);
    await flushPersonEdits(s, l).catch((error: unknown) => (failed ??= error));
  }
  for (const h of s.hookSets) await h.close?.().catch((error: unknown) => (failed ??= error));
  for (const l of s.loaded.values()) l.doc.destroy();
  s.loaded.clear();
  if (failed) throw failed;
}
