import * as Y from 'yjs';
import type { Insertable } from 'kysely';
import type { CheckpointTable } from '../../storage/schema.ts';
import { packText } from '../../storage/packed.ts';
import { blockText, isDeleted, projection, type BlockMap } from './model.ts';

/** Changes agents make (writes, restoring blocks people edited). */
export const AGENT_ORIGIN = 'agent';
/** Changes taken from storage: stored already. */
export const LOAD_ORIGIN = 'load';
/** Changes another server instance made: that instance stores them. */
export const PEER_ORIGIN = 'peer';
/** Removed blocks dropped when a document loads. */
export const COMPACT_ORIGIN = 'compact';

/** The origin of a person's change, so it is stored in their name. */
export interface PersonOrigin {
  person: string;
}

export function personOf(origin: unknown): string | null {
  return typeof origin === 'object' && origin !== null && typeof (origin as PersonOrigin).person === 'string'
    ? (origin as PersonOrigin).person
    : null;
}

export interface KeptBlock {
  id: string;
  excerpt: string;
}

/** Watches a write in flight: removed blocks a person edits meanwhile are restored and named. */
export interface KeptWatch {
  removed: Set<BlockMap>;
  kept: KeptBlock[];
}

export type VersionRow = Insertable<CheckpointTable> & { id: string };

/** A change made here and not stored yet; `from` names the instance it was taken over from. */
export interface Unsaved {
  update: Uint8Array;
  /** Its number among the changes of the instance that made it. */
  n: number;
  from?: string;
}

/** A change another instance made and has not said it stored. */
export interface PeerChange {
  n: number;
  update: Uint8Array;
  /** The person who made it; null for an agent's. */
  by: string | null;
  at: number;
}

export interface LiveDoc {
  id: string;
  doc: Y.Doc;
  lastUsed: number;
  /** People whose edits are not stored yet, since when, and the timer that will store them. */
  pendingEditors: Set<string>;
  pendingSince: number | undefined;
  timer: NodeJS.Timeout | undefined;
  watch: KeptWatch | undefined;
  /** Agent writes and replicas that may still refer to removed blocks. */
  users: number;
  /** When the snapshot this copy last read or wrote was stored. */
  storedAt: number;
  /** The last stored change (doc_updates.seq) this copy has, with every one before it. */
  lastSeq: number;
  /** Stored changes not yet folded into the snapshot. */
  logged: number;
  /** Changes made here and not stored yet. */
  unsaved: Unsaved[];
  /** How many changes this copy has made. */
  made: number;
  /**
   * Version rows of agent writes that started landing and are not stored yet: whichever store
   * of this copy's changes comes first stores them too, so no write lands without its row.
   */
  staged: VersionRow[];
  /** The version whose block digest a stored version row holds, as far as this copy knows. */
  digestVersion: number | undefined;
  /**
   * That digest's entries, when this copy made them: the next row stores its digest as the
   * change from them (`digestDelta`).
   */
  digestEntries: readonly string[] | undefined;
  /** How many stored changes that digest is from a whole one (a bound for its readers). */
  digestChain: number;
  /** Changes of other instances they have not said they stored, by instance. */
  peers: Map<string, PeerChange[]>;
  peerTimer: NodeJS.Timeout | undefined;
  /** Its markdown at one moment, deflated as version rows keep it (see `packedMarkdown`). */
  packed: { text: string; packed: string } | undefined;
}

/** What a change made here is, for those who pass it on. */
export interface LocalChange {
  n: number;
  by: string | null;
}

/** Changes up to `upTo` that `origin` made (null: this instance) are stored. */
export interface StoredMark {
  origin: string | null;
  upTo: number;
}

/** Who is writing to a document: an agent acting for a person, and the blocks it writes. */
export interface Writer {
  name: string;
  for: string;
  blocks: string[];
}

/**
 * How the live socket and other instances take part in a document's life. Each is optional;
 * a process without them keeps plain Yjs documents to itself.
 */
export interface LiveDocHooks {
  /** Makes the Yjs document a document lives in (the socket's own document type). */
  newDoc?(id: string): Y.Doc;
  /**
   * A document was read from storage and is about to be used: catches up with other instances
   * holding it. Resolves true when another instance holds it.
   */
  loaded?(live: LiveDoc): Promise<boolean>;
  /** People are connected to it here: it stays in memory while they are. */
  inUse?(live: LiveDoc): boolean;
  /** A change was made here (not taken from storage or from another instance). */
  changed?(live: LiveDoc, update: Uint8Array, change: LocalChange): void;
  /** Changes were stored. */
  stored?(live: LiveDoc, marks: StoredMark[]): void;
  /** An agent writes to it (or stopped: null). */
  writing?(live: LiveDoc, writer: Writer | null): void;
  /** It left memory. */
  unloaded?(live: LiveDoc): void;
  /** The store closes: after pending edits were stored. */
  close?(): Promise<void>;
}

export function newLiveDoc(
  id: string,
  doc: Y.Doc,
  storedAt: number,
  lastSeq: number,
  logged: number,
): LiveDoc {
  return {
    id,
    doc,
    lastUsed: Date.now(),
    pendingEditors: new Set(),
    pendingSince: undefined,
    timer: undefined,
    watch: undefined,
    users: 0,
    storedAt,
    lastSeq,
    logged,
    unsaved: [],
    made: 0,
    staged: [],
    digestVersion: undefined,
    digestEntries: undefined,
    digestChain: 0,
    peers: new Map(),
    peerTimer: undefined,
    packed: undefined,
  };
}

/**
 * Follows a live document's changes: those made here are numbered and kept until stored; a
 * person's edit that lands in a block an agent removed (during the write, or from a replica that
 * had not seen it yet) brings the block back, next to the new text, and tells a write in flight.
 */
export function followChanges(
  live: LiveDoc,
  changed: (update: Uint8Array, change: LocalChange) => void,
): void {
  live.doc.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin === LOAD_ORIGIN || origin === PEER_ORIGIN) return;
    const n = ++live.made;
    live.unsaved.push({ update, n });
    changed(update, { n, by: personOf(origin) });
  });
  live.doc.on('afterTransaction', (tr: Y.Transaction) => {
    if (tr.origin === AGENT_ORIGIN || tr.origin === COMPACT_ORIGIN || tr.origin === LOAD_ORIGIN) return;
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

/** The marks a store of these changes sets: the last number stored of each instance's. */
export function marksOf(changes: readonly Unsaved[]): StoredMark[] {
  const upTo = new Map<string | null, number>();
  for (const c of changes) upTo.set(c.from ?? null, Math.max(upTo.get(c.from ?? null) ?? 0, c.n));
  return [...upTo].map(([origin, n]) => ({ origin, upTo: n }));
}

/**
 * The document's markdown as a version row keeps it (deflated), remembered for the text it was
 * made from: the next agent write's row holds the text the last store left, packed once.
 */
export function packedMarkdown(live: LiveDoc): string {
  const text = projection(live.doc);
  if (live.packed?.text !== text) live.packed = { text, packed: packText(text) };
  return live.packed.packed;
}
