import * as Y from 'yjs';
import { allInfos, stringOf } from './block-index.ts';
import { blockArray, blockText, isDeleted, newBlock, positionOf, type BlockMap } from './model.ts';

/**
 * What one write did to a document, block by block: enough to show it and to undo it alone.
 * Stored as JSON with the write's version row (`checkpoints.changes_json`).
 */
export interface WriteChanges {
  /** Blocks the write put in, with their text as it left them. */
  added: { id: string; text: string }[];
  /**
   * Blocks it took out, with their text and where they stood: the block before them and the
   * block after them then (ids; null at either end), so they come back at their place.
   */
  removed: { id: string; text: string; after: string | null; before: string | null }[];
  /** Blocks whose text it changed in place. */
  changed: { id: string; before: string; after: string }[];
  /** Who wrote it: the agent's label and the person it acted for (agent writes only). */
  agent?: string;
  for?: string;
}

export function parseChanges(json: string | null | undefined): WriteChanges | undefined {
  if (!json) return undefined;
  const parsed = JSON.parse(json) as WriteChanges;
  return {
    added: parsed.added ?? [],
    removed: parsed.removed ?? [],
    changed: parsed.changed ?? [],
    ...pick(parsed),
  };
}

function pick(c: WriteChanges): Pick<WriteChanges, 'agent' | 'for'> {
  return { ...(c.agent ? { agent: c.agent } : {}), ...(c.for ? { for: c.for } : {}) };
}

const idOf = (map: BlockMap) => map.get('id') as string;

/** Still in the document's array: a person may have taken a block out altogether. */
const inArray = (map: BlockMap) => map._item !== null && !map._item.deleted && map.get('text') !== undefined;

/**
 * The record of a write from the blocks it added, took out and changed, read off the document
 * as the write leaves it (blocks a person brought back meanwhile are no longer in `removed`).
 */
export function recordChanges(
  doc: Y.Doc,
  added: readonly BlockMap[],
  removed: ReadonlySet<BlockMap>,
  changed: readonly { map: BlockMap; before: string }[],
): WriteChanges {
  const out: WriteChanges = { added: [], removed: [], changed: [] };
  for (const map of added) {
    if (inArray(map) && !isDeleted(map)) out.added.push({ id: idOf(map), text: blockText(map).toString() });
  }
  for (const { map, before } of changed) {
    if (!inArray(map)) continue;
    const after = blockText(map).toString();
    if (after !== before) out.changed.push({ id: idOf(map), before, after });
  }
  if (removed.size > 0) out.removed = removedInPlace(doc, added, removed);
  return out;
}

/**
 * The removed blocks in document order, each with its neighbours in the order before the write:
 * the blocks standing then (live ones and those this write took out), without those it added.
 * Read off the document's block list from each removed block outwards, so the cost is the
 * distance to its neighbours, not the document's length.
 */
function removedInPlace(
  doc: Y.Doc,
  added: readonly BlockMap[],
  removed: ReadonlySet<BlockMap>,
): WriteChanges['removed'] {
  // Read once: inside a transaction (an undo's) the list is read afresh on every call.
  const all = allInfos(doc);
  const at = (map: BlockMap) => positionOf(doc, map, all);
  const taken = new Set([...removed].map(at).filter((i) => i >= 0));
  const put = new Set(added.map(at).filter((i) => i >= 0));
  const entry = (i: number) => taken.has(i) && all[i]!.deleted;
  // Not in the order before the write: what it added, and blocks removed before it.
  const outside = (i: number) => (all[i]!.deleted ? !taken.has(i) : put.has(i));
  const out: WriteChanges['removed'] = [];
  for (const i of [...taken].sort((a, b) => a - b)) {
    if (!entry(i)) continue;
    let left = i - 1;
    while (left >= 0 && outside(left)) left--;
    let right = i + 1;
    while (right < all.length && (outside(right) || entry(right))) right++;
    out.push({
      id: idOf(all[i]!.map),
      text: stringOf(all[i]!),
      after: left >= 0 ? idOf(all[left]!.map) : null,
      before: right < all.length ? idOf(all[right]!.map) : null,
    });
  }
  return out;
}

/** Every block the document holds (removed ones too), by id. */
function blocksById(doc: Y.Doc): Map<string, BlockMap> {
  const byId = new Map<string, BlockMap>();
  blockArray(doc).forEach((map) => byId.set(idOf(map), map));
  return byId;
}

function live(map: BlockMap | undefined): map is BlockMap {
  return map !== undefined && !isDeleted(map);
}

/** Replaces a text's content with the fewest characters touched: the common ends stay. */
function setText(text: Y.Text, to: string): void {
  const from = text.toString();
  let start = 0;
  while (start < from.length && start < to.length && from[start] === to[start]) start++;
  let end = 0;
  while (
    end < from.length - start &&
    end < to.length - start &&
    from[from.length - 1 - end] === to[to.length - 1 - end]
  )
    end++;
  if (from.length - start - end > 0) text.delete(start, from.length - start - end);
  if (to.length - start - end > 0) text.insert(start, to.slice(start, to.length - end));
}

export interface Undone {
  /** What the undo itself did, so it can be undone the same way. */
  changes: WriteChanges;
  /** Passages the write made that were changed after it, and stay as they are now. */
  kept: string[];
}

const excerpt = (text: string) => text.trim().slice(0, 200);

/**
 * Undoes one write on the live document (inside the caller's transaction): the blocks it added
 * go unless someone changed them since, the blocks it took out come back at their place, the
 * blocks it changed go back unless someone changed them since. Whatever was changed after the
 * write is kept as it is, and named in `kept`.
 */
export function undoChanges(doc: Y.Doc, record: WriteChanges): Undone {
  const blocks = blockArray(doc);
  const byId = blocksById(doc);
  const changes: WriteChanges = { added: [], removed: [], changed: [] };
  const kept: string[] = [];
  const removedNow = new Set<BlockMap>();

  for (const { id, text } of record.added) {
    const map = byId.get(id);
    if (!live(map)) continue;
    const now = blockText(map).toString();
    if (now !== text) {
      kept.push(excerpt(now));
      continue;
    }
    map.set('deleted', true);
    removedNow.add(map);
  }

  for (const { id, before, after } of record.changed) {
    const map = byId.get(id);
    if (!live(map)) continue;
    const text = blockText(map);
    if (text.toString() !== after) {
      kept.push(excerpt(text.toString()));
      continue;
    }
    setText(text, before);
    changes.changed.push({ id, before: after, after: before });
  }

  for (const entry of record.removed) {
    const there = byId.get(entry.id);
    if (there && there.parent !== null) {
      if (!isDeleted(there)) continue;
      there.delete('deleted');
      changes.added.push({ id: entry.id, text: blockText(there).toString() });
      continue;
    }
    // Dropped from the document since (a removed block leaves when no one can need it): made
    // again with its text and id, next to the block it followed, or before the one it preceded.
    const map = newBlock(entry.text);
    map.set('id', entry.id);
    const at = placeOf(blocks, byId, entry);
    blocks.insert(at, [map]);
    byId.set(entry.id, map);
    changes.added.push({ id: entry.id, text: entry.text });
  }

  if (removedNow.size > 0) changes.removed = recordChanges(doc, [], removedNow, []).removed;
  return { changes, kept };
}

/** Where a block taken out goes back: after its old neighbour, before its other one, else at the end. */
function placeOf(
  blocks: Y.Array<BlockMap>,
  byId: Map<string, BlockMap>,
  entry: WriteChanges['removed'][number],
): number {
  const indexOf = (id: string | null): number => {
    const map = id === null ? undefined : byId.get(id);
    if (!map || map.parent === null) return -1;
    let i = 0;
    for (let item = blocks._start; item !== null; item = item.right) {
      if (item.deleted || !(item.content instanceof Y.ContentType)) continue;
      if (item.content.type === map) return i;
      i++;
    }
    return -1;
  };
  if (entry.after === null) return 0;
  const after = indexOf(entry.after);
  if (after >= 0) return after + 1;
  const before = indexOf(entry.before);
  if (before >= 0) return before;
  return blocks.length;
}

/** The texts a write added and removed, as a person reads them: blocks changed show both ways. */
export function shownChanges(record: WriteChanges): { added: string[]; removed: string[] } {
  const added = record.added.map((a) => a.text);
  const removed = record.removed.map((r) => r.text);
  for (const c of record.changed) {
    if (c.before.trim() === c.after.trim()) continue;
    removed.push(c.before);
    added.push(c.after);
  }
  return { added: added.filter((t) => t.trim() !== ''), removed: removed.filter((t) => t.trim() !== '') };
}
