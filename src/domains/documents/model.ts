import * as Y from 'yjs';
import { newId } from '../../ids.ts';
import { wellFormed } from './block-shape.ts';
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

/** The blocks people read: not removed, and well-formed (a malformed one from storage is skipped). */
export function liveBlocks(doc: Y.Doc): LiveBlock[] {
  const out: LiveBlock[] = [];
  blockArray(doc).forEach((map, index) => {
    if (wellFormed(map) && !isDeleted(map))
      out.push({ id: map.get('id') as string, text: blockText(map).toString(), map, index });
  });
  return out;
}

/** What the projection and the digest need of a block, kept up to date as the block changes. */
interface BlockInfo {
  map: BlockMap;
  text: Y.Text;
  deleted: boolean;
  /** Its text, until the text changes. */
  string: string | undefined;
  /** Its digest entry, until the text changes. */
  entry: string | undefined;
}

interface Derived {
  /** What is known of each block the document has held. */
  infos: Map<BlockMap, BlockInfo>;
  /** Every block of the array in order, removed ones too, kept in step with the array's changes. */
  all?: BlockInfo[];
  projection?: string;
  digest?: BlockDigest;
  stored?: string;
}

/**
 * What is derived from a document, so a write does not walk the Yjs structures more than it
 * must: the block list follows the array's change events, each block's text and digest entry
 * last until its text changes, the rest until the next transaction.
 */
const derived = new WeakMap<Y.Doc, Derived>();

/** No transaction is running or has events still to deliver: what is read now may be kept. */
function settled(doc: Y.Doc): boolean {
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

function derivedOf(doc: Y.Doc): Derived {
  const known = derived.get(doc);
  if (known) return known;
  const cached: Derived = { infos: new Map() };
  const { infos } = cached;
  derived.set(doc, cached);
  blockArray(doc).observe((event) => {
    const all = cached.all;
    if (!all) return;
    let inStep = false;
    try {
      inStep = followChanges(all, infos, event.target, event.transaction);
    } catch {
      // Read afresh below.
    }
    if (!inStep) cached.all = undefined;
  });
  doc.on('afterTransaction', (tr: Y.Transaction) => {
    cached.projection = cached.digest = cached.stored = undefined;
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
      else all.splice(at, 0, infoOf(infos, (struct.content as Y.ContentType).type as BlockMap));
      placed.add(struct);
    }
  });
  return inStep && all.length === array.length;
}

/** Every block of the array in order, removed ones included. */
function allInfos(doc: Y.Doc): readonly BlockInfo[] {
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

function stringOf(info: BlockInfo): string {
  return (info.string ??= info.text.toString());
}

/** The markdown: the live blocks' text, in order. Editor-only annotations are not part of it. */
export function projection(doc: Y.Doc): string {
  return derive(doc).projection;
}

/**
 * The projection and the stored digest, made in one pass over the blocks: every stored change
 * needs both.
 */
function derive(doc: Y.Doc): { projection: string; stored: string } {
  const cached = derivedOf(doc);
  if (cached.projection !== undefined && cached.stored !== undefined && settled(doc)) {
    return { projection: cached.projection, stored: cached.stored };
  }
  let projection = '';
  let stored = DIGEST_MARK;
  for (const info of allInfos(doc)) {
    if (info.deleted) continue;
    projection += stringOf(info);
    stored += entryOf(info);
  }
  if (settled(doc)) {
    cached.projection = projection;
    cached.stored = stored;
  }
  return { projection, stored };
}

/** The text of the last live block with any text: where the document ends; null when none has. */
export function lastNonEmptyText(doc: Y.Doc): Y.Text | null {
  const all = allInfos(doc);
  for (let i = all.length - 1; i >= 0; i--) {
    const info = all[i]!;
    if (!info.deleted && info.text.length > 0) return info.text;
  }
  return null;
}

/** The live blocks a span of the projection touches, in order. */
export function blocksCovering(doc: Y.Doc, start: number, end: number): BlockMap[] {
  const covered: BlockMap[] = [];
  let at = 0;
  for (const info of allInfos(doc)) {
    if (info.deleted) continue;
    const blockEnd = at + info.text.length;
    if (blockEnd > start && at < end) covered.push(info.map);
    if (blockEnd >= end) break;
    at = blockEnd;
  }
  return covered;
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

/** FNV-1a over the text, twice with different primes. */
function hashPair(text: string): [number, number] {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619);
    h2 = Math.imul(h2 ^ c, 2246822507);
  }
  return [h1 >>> 0, h2 >>> 0];
}

/** The hash with the text's length, as digests stored as JSON hold it. */
function textHash(text: string): string {
  const [h1, h2] = hashPair(text);
  return `${text.length.toString(36)}.${h1.toString(36)}${h2.toString(36)}`;
}

const DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const ID_CHARS = 8;
const HASH_CHARS = 8;

/** 48 bits of the text's hashes in eight characters: enough to tell a changed block from an unchanged one. */
function shortHash(text: string): string {
  const [h1, h2] = hashPair(text);
  let n = h1 * 0x10000 + (h2 & 0xffff);
  const codes: number[] = new Array<number>(HASH_CHARS);
  for (let i = HASH_CHARS - 1; i >= 0; i--) {
    codes[i] = DIGITS.charCodeAt(n % 64);
    n = Math.floor(n / 64);
  }
  return String.fromCharCode(...codes);
}

/** A block's id, shortened to a hash for digests: version rows keep one entry per block. */
export function shortId(map: BlockMap): string {
  return textHash(map.get('id') as string)
    .slice(-ID_CHARS)
    .padStart(ID_CHARS, '0');
}

/**
 * Digests are stored behind this marker as one fixed-width entry per block: its short id, then
 * the hash of its text. Rows without it hold the JSON of `[id, hash]` pairs made with `textHash`.
 */
const DIGEST_MARK = 'd1:';

/** The stored digest of a document with no blocks. */
export const EMPTY_DIGEST = DIGEST_MARK;

function entryOf(info: BlockInfo): string {
  return (info.entry ??= shortId(info.map) + shortHash(stringOf(info)));
}

/** The live blocks' short ids and text hashes, in order. */
export function digestBlocks(doc: Y.Doc): BlockDigest {
  const cached = derivedOf(doc);
  if (cached.digest && settled(doc)) return cached.digest;
  const digest: BlockDigest = [];
  for (const info of allInfos(doc)) {
    if (info.deleted) continue;
    const entry = entryOf(info);
    digest.push([entry.slice(0, ID_CHARS), entry.slice(ID_CHARS)]);
  }
  if (settled(doc)) cached.digest = digest;
  return digest;
}

/** The digest as version rows store it. */
export function storedDigest(doc: Y.Doc): string {
  return derive(doc).stored;
}

/** A version's digest as a row stored it, and how to make a document's digest to compare with it. */
export interface VersionDigest {
  blocks: BlockDigest;
  current(doc: Y.Doc): BlockDigest;
}

export function readDigest(stored: string): VersionDigest {
  if (!stored.startsWith(DIGEST_MARK)) {
    return {
      blocks: JSON.parse(stored) as BlockDigest,
      current: (doc) =>
        allInfos(doc)
          .filter((info) => !info.deleted)
          .map((info) => [shortId(info.map), textHash(stringOf(info))]),
    };
  }
  const blocks: BlockDigest = [];
  const width = ID_CHARS + HASH_CHARS;
  for (let at = DIGEST_MARK.length; at + width <= stored.length; at += width) {
    blocks.push([stored.slice(at, at + ID_CHARS), stored.slice(at + ID_CHARS, at + width)]);
  }
  return { blocks, current: digestBlocks };
}

/** Where a block stands in the array (deleted ones included), or -1. */
export function positionOf(doc: Y.Doc, map: BlockMap): number {
  const all = allInfos(doc);
  const info = derivedOf(doc).infos.get(map);
  const at = info ? all.indexOf(info) : -1;
  if (at >= 0) return at;
  for (let i = 0; i < all.length; i++) if (all[i]!.map === map) return i;
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
      const block: unknown = blocks.get(i);
      if (block instanceof Y.Map && isDeleted(block)) {
        blocks.delete(i, 1);
        removed++;
      }
    }
  }, 'compact');
  return removed;
}
