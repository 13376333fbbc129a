import * as Y from 'yjs';
import { wellFormed } from './block-shape.ts';
import type { BlockDigest } from './digest.ts';
import { blockArray, blockText, isDeleted, type BlockMap } from './blocks.ts';

/** What the projection and the digest need of a block, kept up to date as the block changes. */
export interface BlockInfo {
  map: BlockMap;
  text: Y.Text;
  deleted: boolean;
  /** Its text, until the text changes. */
  string: string | undefined;
  /** Its digest entry, until the text changes. */
  entry: string | undefined;
  /** Counts the changes to the block seen so far: what was made from it stands while this does. */
  rev: number;
}

/**
 * The projection and digest entries as last made, with what they were made from: each block's
 * info, how many changes it had seen and its text then (null: removed), so the next can reuse
 * the start and end no change has touched since.
 */
export interface Derivation {
  infos: readonly BlockInfo[];
  /** Each block's `rev` then. */
  revs: readonly number[];
  strings: readonly (string | null)[];
  projection: string;
  entries: string[];
}

interface Derived {
  /** What is known of each block the document has held. */
  infos: Map<BlockMap, BlockInfo>;
  /** Every block of the array in order, removed ones too, kept in step with the array's changes. */
  all?: BlockInfo[];
  projection?: string;
  digest?: BlockDigest;
  entries?: string[];
  stored?: string;
  /** The last projection made while settled, kept past changes: the next starts from it. */
  last?: Derivation;
  /** Blocks changed or put in since `last` was made, while no block has left the array. */
  touched: Set<BlockInfo> | undefined;
}

/**
 * What is derived from a document, so a write does not walk the Yjs structures more than it
 * must: the block list follows the array's change events, each block's text and digest entry
 * last until its text changes, the rest until the next transaction.
 */
const derived = new WeakMap<Y.Doc, Derived>();

/** No transaction is running or has events still to deliver: what is read now may be kept. */
export function settled(doc: Y.Doc): boolean {
  return doc._transaction === null && doc._transactionCleanups.length === 0;
}

/** Stands in for the text of a malformed block, which reads as removed. */
const NO_TEXT = new Y.Doc().getText('none');

function newInfo(map: BlockMap): BlockInfo {
  const ok = wellFormed(map);
  return {
    map,
    text: ok ? blockText(map) : NO_TEXT,
    deleted: !ok || isDeleted(map),
    string: undefined,
    entry: undefined,
    rev: 0,
  };
}

function infoOf(infos: Map<BlockMap, BlockInfo>, map: BlockMap): BlockInfo {
  let info = infos.get(map);
  if (!info) {
    info = newInfo(map);
    infos.set(map, info);
  }
  return info;
}

export function derivedOf(doc: Y.Doc): Derived {
  const known = derived.get(doc);
  if (known) return known;
  const cached: Derived = { infos: new Map(), touched: undefined };
  const { infos } = cached;
  derived.set(doc, cached);
  blockArray(doc).observe((event) => {
    const all = cached.all;
    if (!all) return;
    let inStep = false;
    try {
      inStep = followChanges(all, infos, event.target, event.transaction, cached);
    } catch {
      // Read afresh below.
    }
    if (!inStep) cached.all = cached.touched = undefined;
  });
  doc.on('afterTransaction', (tr: Y.Transaction) => {
    cached.projection = cached.digest = cached.entries = cached.stored = undefined;
    for (const type of tr.changed.keys()) {
      const map = type instanceof Y.Text ? type.parent : type;
      const info = map instanceof Y.Map ? infos.get(map) : undefined;
      if (!info) continue;
      if (type === map) {
        // The block's own keys changed: its mark, its text, its id.
        const ok = wellFormed(info.map);
        info.deleted = !ok || isDeleted(info.map);
        info.text = ok ? blockText(info.map) : NO_TEXT;
      }
      info.string = info.entry = undefined;
      info.rev++;
      cached.touched?.add(info);
    }
  });
  return cached;
}

/**
 * Brings the block list in step with what a transaction did to the array, looking only at the
 * items it added and removed. Says false when the list should rather be read afresh.
 */
function followChanges(
  all: BlockInfo[],
  infos: Map<BlockMap, BlockInfo>,
  array: Y.Array<BlockMap>,
  tr: Y.Transaction,
  cached: Derived,
): boolean {
  const clients = tr.doc.store.clients;
  const isNew = (item: Y.Item) => item.id.clock >= (tr.beforeState.get(item.id.client) ?? 0);
  const isBlock = (struct: Y.Item | Y.GC): struct is Y.Item =>
    struct instanceof Y.Item &&
    struct.parent === array &&
    struct.content instanceof Y.ContentType &&
    struct.content.type instanceof Y.Map;
  let inStep = true;
  // Blocks the transaction took out of the array.
  tr.deleteSet.clients.forEach((ranges, client) => {
    const structs = clients.get(client);
    if (!structs) return;
    for (const { clock, len } of ranges) {
      for (let i = Y.findIndexSS(structs, clock); i < structs.length; i++) {
        const struct = structs[i]!;
        if (struct.id.clock >= clock + len) break;
        if (!isBlock(struct) || isNew(struct)) continue;
        const info = infos.get((struct.content as Y.ContentType).type as BlockMap);
        const at = info ? all.indexOf(info) : -1;
        if (at < 0) inStep = false;
        else all.splice(at, 1);
        cached.touched = undefined;
      }
    }
  });
  // Blocks it put in, in the order they were made: each goes right after the nearest block to
  // its left already in the list, which puts every one in its place.
  const placed = new Set<Y.Item>();
  tr.afterState.forEach((after, client) => {
    const before = tr.beforeState.get(client) ?? 0;
    const structs = clients.get(client);
    if (after <= before || !structs) return;
    for (let i = Y.findIndexSS(structs, before); i < structs.length; i++) {
      const struct = structs[i]!;
      if (!isBlock(struct) || struct.deleted) continue;
      let left = struct.left;
      while (left && (left.deleted || (isNew(left) && !placed.has(left)))) left = left.left;
      const leftInfo = left ? infos.get((left.content as Y.ContentType).type as BlockMap) : undefined;
      const at = left ? (leftInfo ? all.lastIndexOf(leftInfo) : -1) + 1 : 0;
      if (left && at === 0) inStep = false;
      else {
        const info = infoOf(infos, (struct.content as Y.ContentType).type as BlockMap);
        all.splice(at, 0, info);
        cached.touched?.add(info);
      }
      placed.add(struct);
    }
  });
  return inStep && all.length === array.length;
}

/** Every block of the array in order, removed ones included. */
export function allInfos(doc: Y.Doc): readonly BlockInfo[] {
  const cached = derivedOf(doc);
  // Within a transaction the list is read afresh: it follows the array's events, which come after.
  const keep = settled(doc);
  if (cached.all && keep) return cached.all;
  const out: BlockInfo[] = [];
  // The array's items in order, without building its content: one block per item not removed.
  for (let item = blockArray(doc)._start; item !== null; item = item.right) {
    if (item.deleted || !(item.content instanceof Y.ContentType) || !(item.content.type instanceof Y.Map))
      continue;
    const map = item.content.type as BlockMap;
    out.push(keep ? infoOf(cached.infos, map) : newInfo(map));
  }
  if (keep) cached.all = out;
  return out;
}

export function stringOf(info: BlockInfo): string {
  return (info.string ??= info.text.toString());
}
