import * as Y from 'yjs';
import { blockArray } from './model.ts';

/**
 * How large a person may make a document over the live socket. Characters count a block's text
 * and the JSON of what else it holds (formatting, embeds, plain values).
 */
export interface DocumentBounds {
  /** All blocks together. */
  documentChars: number;
  /** One block. */
  blockChars: number;
  /** Blocks in the document (removed ones not yet dropped included). */
  blocks: number;
}

export const DEFAULT_BOUNDS: DocumentBounds = {
  documentChars: 250_000,
  blockChars: 60_000,
  blocks: 5_000,
};

export function boundsWith(given: Partial<DocumentBounds> | undefined): DocumentBounds {
  return { ...DEFAULT_BOUNDS, ...given };
}

const n = (value: number) => value.toLocaleString('en');

export const refusals = {
  documentChars: (chars: number, b: DocumentBounds) =>
    `the document would hold ${n(chars)} characters; the limit is ${n(b.documentChars)}`,
  blockChars: (chars: number, b: DocumentBounds) =>
    `a block would hold ${n(chars)} characters; the limit is ${n(b.blockChars)}`,
  blocks: (count: number, b: DocumentBounds) =>
    `the document would have ${n(count)} blocks; the limit is ${n(b.blocks)}`,
};

/**
 * Why a document as stored is past the bounds people edit within, or null. Quick: block count
 * and text lengths only (what a document loaded from storage is checked with).
 */
export function storedOverBound(doc: Y.Doc, bounds: DocumentBounds): string | null {
  const blocks = blockArray(doc) as Y.Array<unknown>;
  if (blocks.length > bounds.blocks) return overBound(`${n(blocks.length)} blocks`, `${n(bounds.blocks)}`);
  let chars = 0;
  for (let item = blocks._start; item !== null; item = item.right) {
    if (item.deleted || !(item.content instanceof Y.ContentType)) continue;
    const map = item.content.type;
    const text: unknown = map instanceof Y.Map ? map.get('text') : undefined;
    const length = text instanceof Y.Text ? text.length : 0;
    if (length > bounds.blockChars)
      return overBound(`a block of ${n(length)} characters`, n(bounds.blockChars));
    chars += length;
  }
  if (chars > bounds.documentChars) return overBound(`${n(chars)} characters`, n(bounds.documentChars));
  return null;
}

function overBound(has: string, limit: string): string {
  return `This document is read-only here: it holds ${has}, past the limit of ${limit} for live editing. Shorten it with edit_document, or copy parts of it into new documents.`;
}
