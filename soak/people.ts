/**
 * People typing: each one a real Hocuspocus provider (through the proxy, so on any server),
 * typing words key by key at the end of a paragraph of their own; and watchers, one per document
 * on each server directly, which time how long a keystroke takes to reach every instance.
 */
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import * as Y from 'yjs';
import { projection } from '../src/domains/documents/model.ts';
import type { Timings } from './stats.ts';

/** A block's paragraph as a person sees it: its text without the line ends that close it. */
export const paragraphOf = (text: Y.Text): string => text.toString().replace(/\n+$/, '');

/** The Y.Text of the live block whose text starts with `label`. */
export function blockStartingWith(doc: Y.Doc, label: string): Y.Text | undefined {
  for (const map of doc.getArray<Y.Map<unknown>>('blocks').toArray()) {
    const text = map.get('text');
    if (map.get('deleted') !== true && text instanceof Y.Text && text.toString().startsWith(label))
      return text;
  }
  return undefined;
}

export interface Connection {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  socket: HocuspocusProviderWebsocket;
  /** Synced, with nothing of its own waiting for the server. */
  settled(): boolean;
  /** When it last lost its socket, and when it was synced again after that. */
  lastDrop: number;
  lastSynced: number;
  refusals: string[];
  /** Its state in a few words, for a report of what did not settle. */
  describe(): string;
  close(): void;
}

export function connect(url: string, documentId: string, token: string): Connection {
  const doc = new Y.Doc();
  const socket = new HocuspocusProviderWebsocket({
    url,
    delay: 200,
    factor: 1.5,
    maxDelay: 2000,
    minDelay: 100,
    maxAttempts: 0,
  });
  const conn: Connection = {
    doc,
    socket,
    provider: undefined as unknown as HocuspocusProvider,
    settled: () => conn.provider.synced && !conn.provider.hasUnsyncedChanges,
    lastDrop: 0,
    lastSynced: 0,
    refusals: [],
    describe: () =>
      `${documentId} via ${url}: synced ${conn.provider.synced}, unsynced changes ${conn.provider.unsyncedChanges}, socket ${socket.status}, dropped ${conn.lastDrop ? new Date(conn.lastDrop).toISOString() : '-'}, synced ${conn.lastSynced ? new Date(conn.lastSynced).toISOString() : '-'}${conn.refusals.length ? `, refused: ${conn.refusals.join('; ')}` : ''}`,
    close() {
      conn.provider.destroy();
      socket.destroy();
      doc.destroy();
    },
  };
  conn.provider = new HocuspocusProvider({
    websocketProvider: socket,
    name: documentId,
    token,
    document: doc,
    onSynced: () => (conn.lastSynced = Date.now()),
    onDisconnect: () => (conn.lastDrop = Date.now()),
    onAuthenticationFailed: ({ reason }) => conn.refusals.push(reason),
  });
  conn.provider.attach();
  return conn;
}

/** When each length of each person's paragraph was typed, to time its arrival elsewhere. */
export type TypedAt = Map<string, number[]>;

export class Typist {
  readonly conn: Connection;
  private word = 0;
  private pending = '';
  private timer: NodeJS.Timeout | undefined;
  keys = 0;

  readonly documentId: string;
  readonly label: string;
  private readonly typedAt: TypedAt;
  private readonly keyMs: number;

  constructor(
    url: string,
    documentId: string,
    token: string,
    label: string,
    typedAt: TypedAt,
    keyMs: number,
  ) {
    this.documentId = documentId;
    this.label = label;
    this.typedAt = typedAt;
    this.keyMs = keyMs;
    this.conn = connect(url, documentId, token);
    typedAt.set(label, []);
  }

  /** Types one key every `keyMs` (± half), a word at a time, until stopped. */
  start() {
    const next = () => {
      this.type();
      this.timer = setTimeout(next, this.keyMs * (0.5 + Math.random()));
    };
    this.timer = setTimeout(next, Math.random() * this.keyMs);
  }

  stop() {
    clearTimeout(this.timer);
  }

  private type() {
    // Before the first sync there is no paragraph to type in yet; a person would wait too.
    const text = blockStartingWith(this.conn.doc, this.label);
    if (!text) return;
    if (this.pending === '') this.pending = `${this.label.slice(0, -1)}.${this.word++} `;
    const key = this.pending[0]!;
    this.pending = this.pending.slice(1);
    // At the end of their paragraph's line, before the line ends that close the block.
    const end = paragraphOf(text).length;
    text.insert(end, key);
    this.keys++;
    this.typedAt.get(this.label)![end + 1] = Date.now();
  }

  /** How long their paragraph was at `when` (what they had typed by then). */
  lengthAt(when: number): number {
    const times = this.typedAt.get(this.label) ?? [];
    for (let l = times.length - 1; l >= 0; l--) if (times[l] !== undefined && times[l]! <= when) return l;
    return 0;
  }

  /** What this person's own replica holds of their paragraph. */
  typed(): string {
    const text = blockStartingWith(this.conn.doc, this.label);
    return text ? paragraphOf(text) : '';
  }
}

/**
 * A provider on one server that notes, for each paragraph, when each new length arrives; a
 * keystroke's fan-out is the latest of its arrivals on every instance.
 */
export class Watcher {
  readonly conn: Connection;
  private readonly seen = new Map<string, number>();

  private readonly labels: string[];
  private readonly arrivals: Map<string, number[]>;

  constructor(
    url: string,
    documentId: string,
    token: string,
    labels: string[],
    arrivals: Map<string, number[]>,
  ) {
    this.labels = labels;
    this.arrivals = arrivals;
    this.conn = connect(url, documentId, token);
    this.conn.doc.on('afterTransaction', (tr: Y.Transaction) => {
      if (tr.local) return;
      for (const label of this.labels) {
        const text = blockStartingWith(this.conn.doc, label);
        if (!text) continue;
        const length = paragraphOf(text).length;
        const before = this.seen.get(label) ?? length;
        this.seen.set(label, length);
        const now = Date.now();
        for (let l = before + 1; l <= length; l++) {
          const key = `${label}@${l}`;
          const list = this.arrivals.get(key);
          if (list) list.push(now);
          else this.arrivals.set(key, [now]);
        }
      }
    });
  }

  markdown(): string {
    return projection(this.conn.doc);
  }
}

/** Keystroke fan-out: for every key seen by all `instances` watchers, the time to the last of them. */
export function fanOut(typedAt: TypedAt, arrivals: Map<string, number[]>, instances: number, t: Timings) {
  for (const [label, times] of typedAt) {
    times.forEach((at, length) => {
      const seen = arrivals.get(`${label}@${length}`);
      if (at && seen && seen.length >= instances)
        t.add('keystroke to every instance', Math.max(...seen) - at);
    });
  }
}

/**
 * What keeps the editors from agreeing: each person connected and synced, with every key they typed
 * more than `graceMs` ago on every instance's watcher (and nothing they did not type). With people
 * still typing some keys are always on their way; once they stop, `graceMs` 0 asks for all of it.
 * (A provider's own count of unacknowledged changes can stay at one after a reconnect although the
 * server has everything, so the text is compared.)
 */
export function disagreements(typists: Typist[], watchers: Map<string, Watcher[]>, graceMs = 0): string[] {
  const out: string[] = [];
  const now = Date.now();
  for (const w of [...watchers.values()].flat())
    if (!w.conn.provider.synced || w.conn.socket.status !== 'connected')
      out.push(`watcher ${w.conn.describe()}`);
  for (const t of typists) {
    if (!t.conn.provider.synced || t.conn.socket.status !== 'connected') {
      out.push(`person ${t.label} ${t.conn.describe()}`);
      continue;
    }
    const typed = t.typed();
    const needed = graceMs === 0 ? typed.length : t.lengthAt(now - graceMs);
    for (const w of watchers.get(t.documentId) ?? []) {
      const block = blockStartingWith(w.conn.doc, t.label);
      const seen = block ? paragraphOf(block) : '';
      if (!typed.startsWith(seen) || seen.length < needed)
        out.push(
          `person ${t.label}: an instance has ${seen.length} of the ${needed} characters typed by now`,
        );
    }
  }
  return out;
}
