import { log as logger } from '../../observability/log.ts';
import * as Y from 'yjs';
import type { LiveDoc, PersonOrigin } from './live-doc.ts';
import type { StoreState } from './store-state.ts';

// People's edits to live documents: applied at once, stored after a quiet period.

export function scheduleStore(s: StoreState, l: LiveDoc, delay?: number): void {
  const { editQuietMs, editMaxWaitMs } = s.timings;
  if (l.timer) clearTimeout(l.timer);
  const since = l.pendingSince ?? Date.now();
  const wait = delay ?? Math.max(0, Math.min(editQuietMs, since + editMaxWaitMs - Date.now()));
  l.timer = setTimeout(() => {
    flushPersonEdits(s, l).catch((error: unknown) =>
      logger.error({ err: error, document: l.id }, 'could not store edits'),
    );
  }, wait);
  l.timer.unref?.();
}

/**
 * A person's Yjs update to a live document (checked by the caller): applied at once; stored,
 * with a new version, after a short quiet period (edits coalesce).
 */
export function applyPersonChange(s: StoreState, l: LiveDoc, personId: string, update: Uint8Array): void {
  const made = l.made;
  Y.applyUpdate(l.doc, update, { person: personId } satisfies PersonOrigin);
  l.lastUsed = Date.now();
  // Nothing new (an editor syncing what the document has already): nothing to store.
  if (l.made === made) return;
  l.pendingEditors.add(personId);
  l.pendingSince ??= Date.now();
  scheduleStore(s, l);
}

export async function flushPersonEdits(s: StoreState, l: LiveDoc): Promise<boolean> {
  if (l.timer) clearTimeout(l.timer);
  l.timer = undefined;
  const takenOver = l.unsaved.some((u) => u.from !== undefined);
  if (l.pendingEditors.size === 0 && !takenOver) return false;
  const editors = [...l.pendingEditors];
  const since = l.pendingSince;
  l.pendingEditors.clear();
  l.pendingSince = undefined;
  try {
    await s.persist(l, {
      reason: 'edit',
      authorId: editors.length === 1 ? editors[0]! : null,
      instruction: editors.length > 1 ? `live edit by ${editors.length} people` : 'live edit',
      ...(editors[0] ? { edited: { actorId: editors[0], by: 'person' as const } } : {}),
    });
  } catch (error) {
    // Not stored: still pending, tried again after another quiet period.
    for (const e of editors) l.pendingEditors.add(e);
    l.pendingSince = Math.min(l.pendingSince ?? Date.now(), since ?? Date.now());
    scheduleStore(s, l, s.timings.editQuietMs);
    throw error;
  }
  return true;
}
