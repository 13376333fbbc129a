import type * as Y from 'yjs';
import type { TextChange } from './binding.ts';

/**
 * What a remote transaction did to the editor's text, as changes in the coordinates of the
 * text before it: each block's own, so text between them (and a cursor there) stays put.
 */

export interface BlockText {
  map: Y.Map<unknown>;
  str: string;
}

/** A Yjs text delta's op (embeds are any other insert). */
export interface Delta {
  retain?: number;
  delete?: number;
  insert?: unknown;
}

/** A text's edits from its event's delta, or null when they cannot be (embeds) or do not check out. */
function deltaChanges(prev: string, next: string, delta: readonly Delta[]): TextChange[] | null {
  const out: TextChange[] = [];
  let pos = 0;
  for (const op of delta) {
    if (op.retain !== undefined) pos += op.retain;
    else if (op.delete !== undefined) {
      out.push({ from: pos, to: pos + op.delete, insert: '' });
      pos += op.delete;
    } else if (typeof op.insert === 'string') out.push({ from: pos, to: pos, insert: op.insert });
    else return null;
  }
  if (pos > prev.length) return null;
  let built = '';
  let at = 0;
  for (const c of out) {
    built += prev.slice(at, c.from) + c.insert;
    at = c.to;
  }
  return built + prev.slice(at) === next ? out : null;
}

/**
 * The changes from one list of blocks to the next, block by block (old coordinates, in order).
 * Null when blocks moved, which a whole-text diff handles.
 */
export function blockChanges(
  prev: readonly BlockText[],
  next: readonly BlockText[],
  deltas: ReadonlyMap<Y.Map<unknown>, readonly Delta[]>,
): TextChange[] | null {
  const index = new Map(prev.map((b, i) => [b.map, i]));
  let last = -1;
  for (const b of next) {
    const i = index.get(b.map);
    if (i === undefined) continue;
    if (i < last) return null;
    last = i;
  }
  const out: TextChange[] = [];
  let i = 0;
  let pos = 0;
  const drop = (upTo: number) => {
    for (; i < upTo; i++) {
      const gone = prev[i]!.str;
      if (gone !== '') out.push({ from: pos, to: pos + gone.length, insert: '' });
      pos += gone.length;
    }
  };
  for (const b of next) {
    const j = index.get(b.map);
    if (j === undefined) {
      if (b.str !== '') out.push({ from: pos, to: pos, insert: b.str });
      continue;
    }
    drop(j);
    const old = prev[j]!.str;
    if (old !== b.str) {
      const delta = deltas.get(b.map);
      const own = (delta && deltaChanges(old, b.str, delta)) ?? [diff(old, b.str)];
      for (const c of own) out.push({ from: c.from + pos, to: c.to + pos, insert: c.insert });
    }
    pos += old.length;
    i = j + 1;
  }
  drop(prev.length);
  return out;
}

/** One change turning `a` into `b`: common prefix and suffix kept (never splitting a pair). */
export function diff(a: string, b: string): TextChange {
  let start = 0;
  const max = Math.min(a.length, b.length);
  while (start < max && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a.charCodeAt(endA - 1) === b.charCodeAt(endB - 1)) {
    endA--;
    endB--;
  }
  // Keep surrogate pairs whole.
  if (start > 0 && isHigh(a.charCodeAt(start - 1))) start--;
  if (endA < a.length && isLow(a.charCodeAt(endA))) {
    endA++;
    endB++;
  }
  return { from: start, to: endA, insert: b.slice(start, endB) };
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;
