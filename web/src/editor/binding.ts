import * as Y from 'yjs';
import { blockChanges, diff, type BlockText, type Delta } from './remote-changes.ts';

export { diff };

/**
 * One plain-text editor over a document's block array. The editor shows the markdown (the
 * concatenation of the texts of the blocks not deleted); each local change is mapped onto the
 * blocks' own `Y.Text`s, so blocks keep their ids and their texts are never replaced, and remote
 * changes come back as editor changes. Free of the DOM: the editor glue lives in codemirror.ts.
 */

/** A change in the coordinates of the text before any change of its batch (CodeMirror's A side). */
export interface TextChange {
  from: number;
  to: number;
  insert: string;
}

type BlockMap = Y.Map<unknown>;

export function blocksOf(doc: Y.Doc): Y.Array<BlockMap> {
  return doc.getArray<BlockMap>('blocks');
}

const isLive = (map: BlockMap) => map.get('deleted') !== true && map.get('text') instanceof Y.Text;

/** The markdown of a document: the texts of its blocks not deleted, one after the other. */
export function markdownOf(doc: Y.Doc): string {
  let out = '';
  for (const map of blocksOf(doc)) if (isLive(map)) out += (map.get('text') as Y.Text).toString();
  return out;
}

/** A fresh block id, unique across replicas (time plus randomness). */
export function freshBlockId(): string {
  const random = new Uint8Array(10);
  globalThis.crypto.getRandomValues(random);
  let tail = '';
  for (const b of random) tail += (b % 36).toString(36);
  return `blk_${Date.now().toString(36).padStart(9, '0')}${tail}`;
}

/**
 * Where a character offset of a text's string falls in the `Y.Text` (embeds count in Yjs
 * indices and not in the string). `after` puts an offset that sits on embeds after them.
 */
function yIndex(text: Y.Text, offset: number, str: string, after = false): number {
  if (text.length === str.length) return offset;
  let y = 0;
  let s = 0;
  for (const op of text.toDelta() as { insert: unknown }[]) {
    if (typeof op.insert === 'string') {
      if (s + op.insert.length > offset || (s + op.insert.length === offset && !after))
        return y + (offset - s);
      s += op.insert.length;
      y += op.insert.length;
    } else {
      if (s === offset && !after) return y;
      y += 1;
    }
  }
  return y;
}

/** Deletes the string range [from, to) of a block's text, leaving its embeds. */
function deleteRange(text: Y.Text, from: number, to: number, str: string): void {
  if (from >= to) return;
  if (text.length === str.length) {
    text.delete(from, to - from);
    return;
  }
  const ranges: [number, number][] = [];
  let y = 0;
  let s = 0;
  for (const op of text.toDelta() as { insert: unknown }[]) {
    if (typeof op.insert === 'string') {
      const a = Math.max(from, s);
      const b = Math.min(to, s + op.insert.length);
      if (a < b) ranges.push([y + (a - s), b - a]);
      s += op.insert.length;
      y += op.insert.length;
    } else y += 1;
  }
  for (let i = ranges.length - 1; i >= 0; i--) text.delete(ranges[i]![0], ranges[i]![1]);
}

interface Span {
  text: Y.Text;
  str: string;
  start: number;
}

export interface BindingOptions {
  /** Called with the changes (old coordinates) that bring the editor's text to the markdown. */
  onRemote: (changes: TextChange[], markdown: string) => void;
  /** Whether a person's undo is tracked (default true). */
  undo?: boolean;
}

export class BlockBinding {
  readonly doc: Y.Doc;
  /** The origin of this binding's own transactions; the undo manager tracks only these. */
  readonly origin: object = { binding: true };
  readonly undoManager: Y.UndoManager | null;
  private text: string;
  /** The live blocks as the editor last showed them. */
  private blocks: BlockText[] = [];
  private readonly onRemote: BindingOptions['onRemote'];
  private readonly observer: (events: Y.YEvent<Y.AbstractType<unknown>>[], tr: Y.Transaction) => void;

  constructor(doc: Y.Doc, options: BindingOptions) {
    this.doc = doc;
    this.onRemote = options.onRemote;
    this.text = markdownOf(doc);
    const blocks = blocksOf(doc);
    this.undoManager =
      options.undo === false
        ? null
        : new Y.UndoManager(blocks, { trackedOrigins: new Set([this.origin]), captureTimeout: 500 });
    this.blocks = this.readBlocks();
    this.observer = (events, tr) => {
      if (tr.origin === this.origin) return;
      this.sync(events);
    };
    blocks.observeDeep(this.observer);
  }

  /** The markdown as the editor should show it. */
  get value(): string {
    return this.text;
  }

  /**
   * Brings the editor up to the document (used by the observer; callable after a reconnect).
   * The changes are each block's own, so a cursor elsewhere stays where it is: the exact edits
   * of a text when the transaction's events say them, else the block's text diffed.
   */
  sync(events: readonly Y.YEvent<Y.AbstractType<unknown>>[] = []): void {
    const prevBlocks = this.blocks;
    const nextBlocks = this.readBlocks();
    const next = nextBlocks.map((b) => b.str).join('');
    const prev = this.text;
    this.blocks = nextBlocks;
    if (next === prev) return;
    this.text = next;
    const deltas = new Map<BlockMap, readonly Delta[]>();
    for (const event of events) {
      if (event.target instanceof Y.Text && event.target.parent instanceof Y.Map) {
        deltas.set(event.target.parent, event.delta as Delta[]);
      }
    }
    this.onRemote(blockChanges(prevBlocks, nextBlocks, deltas) ?? [diff(prev, next)], next);
  }

  /** The live blocks' texts, in order. */
  private readBlocks(): BlockText[] {
    const out: BlockText[] = [];
    for (const map of blocksOf(this.doc)) {
      if (isLive(map)) out.push({ map, str: (map.get('text') as Y.Text).toString() });
    }
    return out;
  }

  /** The live blocks with where each starts in the markdown. */
  private spans(): Span[] {
    const out: Span[] = [];
    let start = 0;
    for (const map of blocksOf(this.doc)) {
      if (!isLive(map)) continue;
      const text = map.get('text') as Y.Text;
      const str = text.toString();
      out.push({ text, str, start });
      start += str.length;
    }
    return out;
  }

  /**
   * Applies the editor's changes (sorted, not overlapping, in the coordinates of the text before
   * them) to the blocks, in one transaction of this binding's origin.
   */
  applyLocal(changes: readonly TextChange[]): void {
    if (changes.length === 0) return;
    this.doc.transact(() => {
      // Last first: earlier positions stay where they were.
      for (let i = changes.length - 1; i >= 0; i--) this.applyOne(changes[i]!);
    }, this.origin);
    this.blocks = this.readBlocks();
    this.text = this.blocks.map((b) => b.str).join('');
  }

  private applyOne({ from, to, insert }: TextChange): void {
    let spans = this.spans();
    if (to > from) {
      for (let i = spans.length - 1; i >= 0; i--) {
        const s = spans[i]!;
        const a = Math.max(from, s.start);
        const b = Math.min(to, s.start + s.str.length);
        if (a < b) deleteRange(s.text, a - s.start, b - s.start, s.str);
      }
      if (insert === '') return;
      spans = this.spans();
    }
    // At a boundary the block before it takes the text (the first block that reaches it).
    const target = spans.find((s) => from >= s.start && from <= s.start + s.str.length);
    if (!target) {
      // No live block at all: a new one, with an id of its own.
      const map = new Y.Map<unknown>();
      map.set('id', freshBlockId());
      map.set('text', new Y.Text(insert));
      blocksOf(this.doc).push([map]);
      return;
    }
    target.text.insert(yIndex(target.text, from - target.start, target.str), insert);
  }

  destroy(): void {
    blocksOf(this.doc).unobserveDeep(this.observer);
    this.undoManager?.destroy();
  }
}
