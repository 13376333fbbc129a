import { log as logger } from '../../observability/log.ts';
import { marksOf, type LiveDoc } from './live-doc.ts';
import { projection } from './model.ts';
import { flushPersonEdits } from './store-edits.ts';
import { busy, notifyStored, type StoreState } from './store-state.ts';

// Which live documents stay in memory: those in use, or used recently, within a cap.

/** Holds a document just loaded or adopted, and starts the sweeper that lets idle ones go. */
export function keep(s: StoreState, l: LiveDoc): void {
  s.loaded.set(l.id, l);
  evictOverflow(s);
  s.sweeper ??= setInterval(() => void sweep(s), Math.max(1000, Math.min(s.timings.idleMs, 30_000))).unref();
}

export async function evict(s: StoreState, l: LiveDoc): Promise<void> {
  if (busy(s, l) || l.peers.size > 0 || s.leaving.has(l)) return;
  const since = l.lastUsed;
  s.leaving.add(l);
  try {
    await flushPersonEdits(s, l);
    if (l.logged > 0 || l.unsaved.length > 0) notifyStored(s.hookSets, l, marksOf(await s.log.fold(l)));
  } finally {
    s.leaving.delete(l);
  }
  // Someone took it up meanwhile: it stays.
  if (busy(s, l) || l.peers.size > 0 || l.lastUsed !== since || s.loaded.get(l.id) !== l) return;
  s.loaded.delete(l.id);
  if (l.timer) clearTimeout(l.timer);
  if (l.peerTimer) clearTimeout(l.peerTimer);
  for (const h of s.hookSets) h.unloaded?.(l);
  l.doc.destroy();
}

function evictSafely(s: StoreState, l: LiveDoc): Promise<void> {
  return evict(s, l).catch((error: unknown) =>
    logger.error({ err: error, document: l.id }, 'could not unload a live document'),
  );
}

/**
 * The caps bound documents nobody is connected to (those people use stay): the least recently
 * used leave while there are more than `maxLoaded` of them or they hold more than
 * `maxIdleCharacters` between them.
 */
function evictOverflow(s: StoreState): void {
  const idle = [...s.loaded.values()].filter((l) => !busy(s, l)).sort((a, b) => a.lastUsed - b.lastUsed);
  const sizes = idle.map((l) => projection(l.doc).length);
  let characters = sizes.reduce((sum, n) => sum + n, 0);
  let count = idle.length;
  for (const [i, l] of idle.entries()) {
    if (count <= s.timings.maxLoaded && characters <= s.timings.maxIdleCharacters) break;
    count--;
    characters -= sizes[i]!;
    void evictSafely(s, l);
  }
}

async function sweep(s: StoreState): Promise<void> {
  const cutoff = Date.now() - s.timings.idleMs;
  for (const l of [...s.loaded.values()]) if (l.lastUsed < cutoff) await evictSafely(s, l);
  evictOverflow(s);
}

/** Stores and unloads a document now unless something holds it; says whether it left memory. */
export async function unload(s: StoreState, id: string): Promise<boolean> {
  const known = s.loaded.get(id);
  if (known) await evict(s, known);
  return !s.loaded.has(id);
}
