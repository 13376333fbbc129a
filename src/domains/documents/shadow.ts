import * as Y from 'yjs';
import { weighBlock, weightOf } from './block-shape.ts';

/** Any shared type (Yjs types its events per kind). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type YType = Y.AbstractType<any>;

/** The blocks a transaction touched, found from the types it changed. */
export interface Touched {
  /** Blocks (values of the blocks array) whose keys or text changed, or that it added. */
  owners: Set<YType>;
  /** Blocks the array gained. */
  added: YType[];
  /** The blocks array itself changed. */
  arrayChanged: boolean;
  /** Why the change is out of place (outside the blocks, keys on the array, a block's id or text changed). */
  problem: string | null;
}

const isNewIn = (tr: Y.Transaction) => (item: Y.Item) =>
  item.id.clock >= (tr.beforeState.get(item.id.client) ?? 0);

/**
 * The block holding a type: the value of the blocks array it is in; null when it is inside
 * something removed; undefined when it is outside the blocks.
 */
function ownerOf(type: YType, blocks: YType): YType | null | undefined {
  for (let t = type; ;) {
    const item = t._item;
    if (item === null) return undefined;
    if (item.deleted) return null;
    const parent = item.parent;
    if (parent === blocks) return t;
    if (!(parent instanceof Y.AbstractType)) return undefined;
    t = parent;
  }
}

/** What a transaction on a document changed among its blocks. */
export function touchedBy(tr: Y.Transaction, blocks: YType): Touched {
  const isNew = isNewIn(tr);
  const touched: Touched = { owners: new Set(), added: [], arrayChanged: false, problem: null };
  for (const [type, keys] of tr.changed) {
    if (type === blocks) {
      touched.arrayChanged = true;
      if ([...keys].some((k) => k !== null)) touched.problem ??= 'the blocks array has no keys';
      continue;
    }
    const owner = ownerOf(type, blocks);
    if (owner === undefined) {
      touched.problem ??= 'the update changes something outside the blocks';
      continue;
    }
    if (owner === null) continue;
    if (type === owner && owner instanceof Y.Map && !isNew(owner._item!)) {
      for (const key of ['id', 'text'] as const) {
        if (!keys.has(key)) continue;
        touched.problem ??=
          owner.get(key) === undefined
            ? `a block's ${key} cannot be removed`
            : `a block's ${key} is set when the block is made and never changed`;
      }
    }
    touched.owners.add(owner);
  }
  if (touched.arrayChanged) {
    // Types a transaction makes are not among its changed ones: the array's new values are found here.
    for (let item = blocks._start; item !== null; item = item.right) {
      if (item.deleted || !isNew(item)) continue;
      if (!(item.content instanceof Y.ContentType)) {
        touched.problem ??= 'a block must be a map';
        continue;
      }
      touched.owners.add(item.content.type);
      touched.added.push(item.content.type);
    }
  }
  return touched;
}

/** A block's weight for the totals, whatever it holds (a malformed one weighs its text, if any). */
export function looseWeight(block: YType): number {
  if (!(block instanceof Y.Map)) return 0;
  const weight = weighBlock(block);
  if (typeof weight !== 'string') return weightOf(weight);
  const text: unknown = block.get('text');
  return text instanceof Y.Text ? text.length : 0;
}

/** Sums the array's blocks, weighing those `known` does not hold. */
export function countBlocks(
  blocks: YType,
  known: (block: YType) => number | undefined,
): { total: number; count: number } {
  let total = 0;
  let count = 0;
  for (let item = blocks._start; item !== null; item = item.right) {
    if (item.deleted || !item.countable) continue;
    count += item.length;
    if (item.content instanceof Y.ContentType) {
      const block = item.content.type;
      total += known(block) ?? looseWeight(block);
    }
  }
  return { total, count };
}

/**
 * A copy of a live document that follows it: a person's update is applied here first and the
 * document it leaves judged, so nothing refused ever touches the live one. It keeps each block's
 * weight and the totals, updated from the blocks each change touches. A copy that took a refused
 * update is thrown away (the next is made from the live document).
 */
export class Shadow {
  readonly doc: Y.Doc;
  readonly blocks: YType;
  readonly weights = new WeakMap<YType, number>();
  total = 0;
  count = 0;
  lastUsed = Date.now();
  /** While a person's update is being judged, the totals are the judge's to set. */
  judging = false;
  readonly #live: Y.Doc;
  readonly #follow: (update: Uint8Array) => void;

  constructor(live: Y.Doc) {
    this.#live = live;
    this.doc = new Y.Doc({ gc: live.gc });
    this.blocks = this.doc.getArray('blocks') as YType;
    Y.applyUpdate(this.doc, Y.encodeStateAsUpdate(live));
    this.recount();
    this.doc.on('afterTransaction', (tr: Y.Transaction) => {
      if (!this.judging) this.settle(touchedBy(tr, this.blocks));
    });
    this.#follow = (update) => Y.applyUpdate(this.doc, update);
    live.on('update', this.#follow);
  }

  /** Block ids, once read: a block's id never changes once it exists. */
  readonly #ids = new WeakMap<YType, string>();

  idOf(block: YType): string | undefined {
    const known = this.#ids.get(block);
    if (known !== undefined) return known;
    const id: unknown = block instanceof Y.Map ? block.get('id') : undefined;
    if (typeof id !== 'string') return undefined;
    this.#ids.set(block, id);
    return id;
  }

  weightOf(block: YType): number {
    let weight = this.weights.get(block);
    if (weight === undefined) this.weights.set(block, (weight = looseWeight(block)));
    return weight;
  }

  recount(): void {
    const { total, count } = countBlocks(this.blocks, (b) => this.weightOf(b));
    this.total = total;
    this.count = count;
  }

  /** Takes in a change it did not judge (an agent's, another instance's). */
  settle(touched: Touched): void {
    for (const owner of touched.owners) {
      const before = this.weights.get(owner);
      const after = looseWeight(owner);
      this.weights.set(owner, after);
      if (!touched.arrayChanged && before !== undefined) this.total += after - before;
    }
    if (touched.arrayChanged) this.recount();
  }

  /** Stops following the live document. */
  drop(): void {
    this.#live.off('update', this.#follow);
    this.doc.destroy();
  }
}
