import * as Y from 'yjs';
import { allInfos, derivedOf, settled, type BlockInfo } from './block-index.ts';
import { derivation, rederive } from './derivation.ts';
import { blockArray, isDeleted, newBlock, type BlockMap } from './blocks.ts';
import { EMPTY_DIGEST } from './digest.ts';
import { splitBlocks } from './text.ts';

// The document model: blocks (blocks.ts), what is derived from them and kept up to date
// (block-index.ts) and their digests (digest.ts), read through the functions below.
export { blockArray, blockText, isDeleted, newBlock, liveBlocks } from './blocks.ts';
export type { BlockMap, LiveBlock } from './blocks.ts';
export {
  shortId,
  EMPTY_DIGEST,
  digestBlocks,
  readDigest,
  blocksChanged,
  digestDelta,
  readDelta,
  applyDelta,
  DELTA_CHAIN,
} from './digest.ts';
export type { BlockDigest, VersionDigest } from './digest.ts';

/** The markdown: the live blocks' text, in order. Editor-only annotations are not part of it. */
export function projection(doc: Y.Doc): string {
  return derive(doc).projection;
}

/**
 * The projection and the digest's entries, made in one pass over the blocks: every stored change
 * needs both.
 */
function derive(doc: Y.Doc): { projection: string; entries: string[] } {
  const cached = derivedOf(doc);
  const keep = settled(doc);
  if (cached.projection !== undefined && cached.entries !== undefined && keep) {
    return { projection: cached.projection, entries: cached.entries };
  }
  // Within a transaction the blocks are read afresh, and nothing made then is kept.
  const all = allInfos(doc);
  const made = keep && cached.last ? rederive(cached.last, all, cached.touched) : derivation(all);
  if (keep) {
    cached.last = made;
    // What changes from here on, while no block leaves the array (block-index.ts keeps it).
    cached.touched = new Set();
    cached.projection = made.projection;
    cached.entries = made.entries;
  }
  return made;
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

/** The digest as version rows store it whole. */
export function storedDigest(doc: Y.Doc): string {
  const { entries } = derive(doc);
  const cached = derivedOf(doc);
  if (cached.entries === entries) return (cached.stored ??= EMPTY_DIGEST + entries.join(''));
  return EMPTY_DIGEST + entries.join('');
}

/** The live blocks' digest entries, in order: what `digestDelta` compares. */
export function digestEntries(doc: Y.Doc): readonly string[] {
  return derive(doc).entries;
}

/** Where a block stands in the array (deleted ones included), or -1. */
export function positionOf(doc: Y.Doc, map: BlockMap, all: readonly BlockInfo[] = allInfos(doc)): number {
  const info = derivedOf(doc).infos.get(map);
  const at = info ? all.indexOf(info) : -1;
  if (at >= 0) return at;
  for (let i = 0; i < all.length; i++) if (all[i]!.map === map) return i;
  return -1;
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
