import * as Y from 'yjs';
import type { DocLog } from './doc-log.ts';
import { followChanges, newLiveDoc, type LiveDoc, type LiveDocHooks, type StoredMark } from './live-doc.ts';
import type { persister } from './persist.ts';

/** How long edits wait to be stored and how long documents stay in memory, resolved. */
export interface StoreTimings {
  editQuietMs: number;
  editMaxWaitMs: number;
  idleMs: number;
  maxLoaded: number;
  maxIdleCharacters: number;
}

/** What the live documents of a process share: the functions of the store take it first. */
export interface StoreState {
  log: DocLog;
  timings: StoreTimings;
  hookSets: LiveDocHooks[];
  loaded: Map<string, LiveDoc>;
  loading: Map<string, Promise<LiveDoc>>;
  /** Documents being stored on their way out of memory. */
  leaving: Set<LiveDoc>;
  sweeper: NodeJS.Timeout | undefined;
  persist: ReturnType<typeof persister>['persist'];
}

export function notifyStored(hookSets: LiveDocHooks[], live: LiveDoc, marks: StoredMark[]): void {
  if (marks.length === 0) return;
  for (const h of hookSets) h.stored?.(live, marks);
}

export function newDoc(s: StoreState, id: string): Y.Doc {
  for (const h of s.hookSets) if (h.newDoc) return h.newDoc(id);
  return new Y.Doc();
}

/** Where a loaded document's storage stands: its snapshot's time, its last update, updates since. */
export interface Stored {
  storedAt: number;
  lastSeq: number;
  logged: number;
}

/** A live document whose changes reach every hook. */
export function live(s: StoreState, id: string, doc: Y.Doc, stored: Stored): LiveDoc {
  const made = newLiveDoc(id, doc, stored.storedAt, stored.lastSeq, stored.logged);
  followChanges(made, (update, change) => {
    for (const h of s.hookSets) h.changed?.(made, update, change);
  });
  return made;
}

/** Whether a write, a replica or a connected person holds the document. */
export function busy(s: StoreState, l: LiveDoc): boolean {
  return l.users > 0 || s.hookSets.some((h) => h.inUse?.(l) === true);
}
