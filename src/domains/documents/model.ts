import * as Y from 'yjs';
import { newId } from '../../ids.ts';
import { splitBlocks } from './text.ts';

/**
 * A document is a Y.Doc holding a Y.Array of blocks; each block is a Y.Map with a stable `id`,
 * a Y.Text of its raw markdown and, once an agent removed it, `deleted: true`. Removed blocks
 * stay until no write or replica can still need them, so a person's edit that lands in one
 * during a write is kept rather than lost.
 */
export type BlockMap = Y.Map<unknown>;

export interface LiveBlock {
  id: string;
  text: string;
  map: BlockMap;
  /** Position in the Y.Array, deleted blocks included. */
  index: number;
}

export function blockArray(doc: Y.Doc): Y.Array<BlockMap> {
  return doc.getArray<BlockMap>('blocks');
}

export function blockText(map: BlockMap): Y.Text {
  return map.get('text') as Y.Text;
}

export function isDeleted(map: BlockMap): boolean {
  return map.get('deleted') === true;
}

export function newBlock(text: string): BlockMap {
  const map = new Y.Map<unknown>();
  map.set('id', newId('blk'));
  map.set('text', new Y.Text(text));
  return map;
}

export function liveBlocks(doc: Y.Doc): LiveBlock[] {
  const out: LiveBlock[] = [];
  blockArray(doc).forEach((map, index) => {
    if (!isDeleted(map))
      out.push({ id: map.get('id') as string, text: blockText(map).toString(), map, index });
  });
  return out;
}

interface Derived {
  projection?: string;
  digest?: BlockDigest;
  digestJson?: string;
}

/** What is derived from a document, kept until its next transaction (a write asks several times). */
const derived = new WeakMap<Y.Doc, Derived>();

function derivedOf(doc: Y.Doc): Derived {
  let entry = derived.get(doc);
  if (!entry) {
    entry = {};
    derived.set(doc, entry);
    doc.on('afterTransaction', (tr: Y.Transaction) => {
      const cached = derived.get(doc)!;
      cached.projection = cached.digest = cached.digestJson = undefined;
      for (const type of tr.changed.keys()) if (type instanceof Y.Text) hashes.delete(type);
    });
  }
  return entry;
}

/** The markdown: the live blocks' text, in order. Editor-only annotations are not part of it. */
export function projection(doc: Y.Doc): string {
  const cached = derivedOf(doc);
  if (cached.projection === undefined) {
    let out = '';
    for (const map of blockArray(doc)) if (!isDeleted(map)) out += blockText(map).toString();
    cached.projection = out;
  }
  return cached.projection;
}

export function docFromMarkdown(markdown: string): Y.Doc {
  const doc = new Y.Doc();
  const blocks = splitBlocks(markdown);
  if (blocks.length) blockArray(doc).insert(0, blocks.map(newBlock));
  return doc;
}

export function encodeState(doc: Y.Doc): string {
  return Buffer.from(Y.encodeStateAsUpdate(doc)).toString('base64');
}

export function docFromState(state: string): Y.Doc {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, Buffer.from(state, 'base64'));
  return doc;
}

/** Short block ids with a short hash of each text: enough to say later how many blocks changed. */
export type BlockDigest = [id: string, hash: string][];

/** FNV-1a over the text with its length: cheap, and enough to tell a changed block from an unchanged one. */
function textHash(text: string): string {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619);
    h2 = Math.imul(h2 ^ c, 2246822507);
  }
  return `${text.length.toString(36)}.${(h1 >>> 0).toString(36)}${(h2 >>> 0).toString(36)}`;
}

const shortIds = new WeakMap<BlockMap, string>();

/** A block's id, shortened to a hash for digests: version rows keep one entry per block. */
export function shortId(map: BlockMap): string {
  let id = shortIds.get(map);
  if (id === undefined) {
    id = textHash(map.get('id') as string).slice(-8);
    shortIds.set(map, id);
  }
  return id;
}

/** Hashes of block texts, dropped when a text changes, so a digest rehashes only what changed. */
const hashes = new WeakMap<Y.Text, string>();

export function digestBlocks(doc: Y.Doc): BlockDigest {
  const cached = derivedOf(doc);
  if (cached.digest) return cached.digest;
  const out: BlockDigest = [];
  for (const map of blockArray(doc)) {
    if (isDeleted(map)) continue;
    const text = blockText(map);
    let hash = hashes.get(text);
    if (hash === undefined) {
      hash = textHash(text.toString());
      hashes.set(text, hash);
    }
    out.push([shortId(map), hash]);
  }
  cached.digest = out;
  return out;
}

/** The digest as stored in version rows. */
export function digestJson(doc: Y.Doc): string {
  const cached = derivedOf(doc);
  cached.digestJson ??= JSON.stringify(digestBlocks(doc));
  return cached.digestJson;
}

/** Where a block stands in the array (deleted ones included), or -1; one pass over the array. */
export function positionOf(doc: Y.Doc, map: BlockMap): number {
  let i = 0;
  for (const item of blockArray(doc)) {
    if (item === map) return i;
    i++;
  }
  return -1;
}

/** How many blocks were added, removed or changed between two digests. */
export function blocksChanged(then: BlockDigest, now: BlockDigest): number {
  const before = new Map(then);
  const after = new Map(now);
  let changed = 0;
  for (const [id, hash] of after) if (before.get(id) !== hash) changed++;
  for (const id of before.keys()) if (!after.has(id)) changed++;
  return changed;
}

/** Drops blocks marked deleted; only when no write and no replica can still need them. */
export function compact(doc: Y.Doc): number {
  const blocks = blockArray(doc);
  let removed = 0;
  doc.transact(() => {
    for (let i = blocks.length - 1; i >= 0; i--) {
      if (isDeleted(blocks.get(i))) {
        blocks.delete(i, 1);
        removed++;
      }
    }
  }, 'compact');
  return removed;
}
