import type * as Y from 'yjs';
import { allInfos, derivedOf, settled, stringOf, type BlockInfo } from './block-index.ts';
import type { BlockMap } from './blocks.ts';

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

/** A block's fixed-width entry in a stored digest: its short id, then its text's short hash. */
export function entryOf(info: BlockInfo): string {
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

/**
 * A digest stored as the change from an earlier version's: `d2:`, then the base version, the
 * index of the first entry that differs and how many of the base's entries the change replaces
 * (base 36, each followed by a colon), then the entries put in their place. A write changes a
 * few blocks of many, so its row holds those few rather than one entry per block.
 */
const DELTA_MARK = 'd2:';

/** Digests stored as changes follow one another at most this far from a whole one. */
export const DELTA_CHAIN = 16;

export interface DigestDelta {
  base: number;
  at: number;
  removed: number;
  entries: string[];
}

/**
 * The stored form of the digest `now` as the change from `then`, the entries of version `base`
 * (whose digest a version row holds); null when the change is not much smaller than `now` whole.
 */
export function digestDelta(base: number, then: readonly string[], now: readonly string[]): string | null {
  const shorter = Math.min(then.length, now.length);
  let start = 0;
  while (start < shorter && then[start] === now[start]) start++;
  let endThen = then.length;
  let endNow = now.length;
  while (endThen > start && endNow > start && then[endThen - 1] === now[endNow - 1]) {
    endThen--;
    endNow--;
  }
  if (now.length === 0 || (endNow - start) * 2 > now.length) return null;
  const numbers = [base, start, endThen - start].map((n) => n.toString(36)).join(':');
  return `${DELTA_MARK}${numbers}:${now.slice(start, endNow).join('')}`;
}

/** The change a stored digest holds, or undefined when it holds a whole digest. */
export function readDelta(stored: string): DigestDelta | undefined {
  if (!stored.startsWith(DELTA_MARK)) return undefined;
  const parts = stored.slice(DELTA_MARK.length).split(':');
  const [base, at, removed] = parts.slice(0, 3).map((n) => parseInt(n, 36));
  const body = parts[3] ?? '';
  const width = ID_CHARS + HASH_CHARS;
  if (parts.length !== 4 || [base, at, removed].some((n) => !Number.isSafeInteger(n) || n! < 0))
    throw new Error('a stored digest change is malformed');
  const entries: string[] = [];
  for (let i = 0; i + width <= body.length; i += width) entries.push(body.slice(i, i + width));
  return { base: base!, at: at!, removed: removed!, entries };
}

/** The digest a change makes of its base's; undefined when it cannot apply to that base. */
export function applyDelta(base: VersionDigest, delta: DigestDelta): VersionDigest | undefined {
  // Digests stored as JSON hash texts another way: no change was ever made against one.
  if (base.current !== digestBlocks || delta.at + delta.removed > base.blocks.length) return undefined;
  const blocks = base.blocks.slice(0, delta.at);
  for (const entry of delta.entries) blocks.push([entry.slice(0, ID_CHARS), entry.slice(ID_CHARS)]);
  for (let i = delta.at + delta.removed; i < base.blocks.length; i++) blocks.push(base.blocks[i]!);
  return { blocks, current: digestBlocks };
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
