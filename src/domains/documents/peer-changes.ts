import { log } from '../../observability/log.ts';
import * as Y from 'yjs';
import { PEER_ORIGIN, type LiveDoc, type Unsaved } from './live-doc.ts';

/**
 * Changes other instances make to a live document this one holds. The instance that made a
 * change stores it and says so; one that stops first leaves its changes here, and after the
 * grace period they are stored here (with the people who made them), so none is lost.
 */
export function peerChanges(options: {
  graceMs: number;
  /** Whether this copy is still the one in memory. */
  current(l: LiveDoc): boolean;
  /** Stores what is pending on this copy (people's edits and changes taken over). */
  store(l: LiveDoc): Promise<unknown>;
}) {
  const { graceMs } = options;

  /** A change another instance made (its `n`th), which that instance stores. */
  function change(l: LiveDoc, from: string, n: number, by: string | null, update: Uint8Array): void {
    Y.applyUpdate(l.doc, update, PEER_ORIGIN);
    let list = l.peers.get(from);
    if (!list) l.peers.set(from, (list = []));
    list.push({ n, update, by, at: Date.now() });
    l.peerTimer ??= setTimeout(() => void takeOver(l), graceMs).unref();
  }

  /** Another instance stored its changes up to `upTo` (or another stored them for it). */
  function stored(l: LiveDoc, origin: string, upTo: number): void {
    const list = l.peers.get(origin)?.filter((c) => c.n > upTo);
    if (list?.length) l.peers.set(origin, list);
    else l.peers.delete(origin);
  }

  /** Another instance's state, sent to catch this copy up: stored by those who made it. */
  function state(l: LiveDoc, update: Uint8Array): void {
    Y.applyUpdate(l.doc, update, PEER_ORIGIN);
  }

  /** Stores, here, the changes other instances have not said they stored within the grace period. */
  async function takeOver(l: LiveDoc): Promise<void> {
    l.peerTimer = undefined;
    const cutoff = Date.now() - graceMs;
    let took = false;
    for (const [from, list] of l.peers) {
      const due = list.filter((c) => c.at <= cutoff);
      if (due.length === 0) continue;
      const rest = list.filter((c) => c.at > cutoff);
      if (rest.length) l.peers.set(from, rest);
      else l.peers.delete(from);
      for (const c of due) {
        l.unsaved.push({ update: c.update, n: c.n, from } satisfies Unsaved);
        if (c.by) l.pendingEditors.add(c.by);
      }
      took = true;
    }
    if (!options.current(l)) return;
    if (took) {
      l.pendingSince ??= Date.now();
      await options
        .store(l)
        .catch((error: unknown) =>
          log.error({ err: error, document: l.id }, 'could not store edits another instance made'),
        );
    }
    if (l.peers.size > 0) l.peerTimer ??= setTimeout(() => void takeOver(l), graceMs).unref();
  }

  return { change, stored, state };
}
