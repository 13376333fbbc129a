import * as Y from 'yjs';
import { blockArray, liveBlocks } from './model.ts';

type Decoded = ReturnType<typeof Y.decodeUpdate>;

/**
 * Whether a person's Yjs update keeps the document's shape: a `blocks` array of maps, each
 * with a string `id` (unique) and a `Y.Text` `text`, both set when the block is made and never
 * replaced or removed after; besides them a block holds plain values only; a text holds
 * characters, formatting and embeds (editor-only annotations, which the markdown leaves out). Returns why the update does not, or null when it does. Pure: reads
 * the document, changes nothing.
 */
export function refusePersonUpdate(doc: Y.Doc, update: Uint8Array): string | null {
  let decoded: Decoded;
  try {
    decoded = Y.decodeUpdate(update);
  } catch {
    return 'the update could not be decoded';
  }
  try {
    const check = new UpdateCheck(doc, decoded.structs);
    return check.structs() ?? check.deletions(decoded.ds);
  } catch {
    // A structure nested too deep to follow, or inconsistent in itself.
    return 'the update could not be decoded';
  }
}

/** Where a type sits in the document: the blocks array, a block, a block's text, or elsewhere. */
type Place = 'blocks' | 'block' | 'text' | 'other' | 'unknown';

interface Parent {
  place: Place;
  /** The key the item has in its parent (maps). */
  sub: string | null;
  /** The item holding the parent type; null for a root type. */
  item: Y.Item | null;
}

const UNKNOWN: Parent = { place: 'unknown', sub: null, item: null };
const key = (id: Y.ID) => `${id.client}:${id.clock}`;

class UpdateCheck {
  /** The update's items, by client, in clock order. */
  private readonly added = new Map<number, Y.Item[]>();
  private readonly parents = new Map<string, Parent>();
  private readonly places = new Map<string, Place>();
  /** Blocks the update makes, with whether it gives them an id and a text. */
  private readonly newBlocks = new Map<string, { text: boolean; id: string | undefined }>();
  private readonly doc: Y.Doc;
  /** Taken first: until a document's root is asked for by type, Yjs holds it as a plain type. */
  private readonly blocks: Y.AbstractType<unknown>;

  constructor(doc: Y.Doc, structs: Decoded['structs']) {
    this.doc = doc;
    this.blocks = blockArray(doc) as Y.AbstractType<unknown>;
    for (const s of structs) {
      if (!(s instanceof Y.Item)) continue;
      let list = this.added.get(s.id.client);
      if (!list) this.added.set(s.id.client, (list = []));
      list.push(s);
    }
    for (const list of this.added.values()) list.sort((a, b) => a.id.clock - b.id.clock);
  }

  /** Whether the document already has everything up to the end of `id`'s struct. */
  private inDoc(client: number, clockEnd: number): boolean {
    const last = this.doc.store.clients.get(client)?.at(-1);
    return last !== undefined && clockEnd <= last.id.clock + last.length;
  }

  /** The struct holding `id`: the document's, or one the update adds; null when neither has it. */
  private find(id: Y.ID): Y.Item | Y.GC | null {
    if (this.inDoc(id.client, id.clock + 1)) {
      const structs = this.doc.store.clients.get(id.client)!;
      return structs[Y.findIndexSS(structs, id.clock)] as Y.Item | Y.GC;
    }
    for (const item of this.added.get(id.client) ?? []) {
      if (id.clock >= item.id.clock && id.clock < item.id.clock + item.length) return item;
    }
    return null;
  }

  private isNew(item: Y.Item): boolean {
    return !this.inDoc(item.id.client, item.id.clock + item.length);
  }

  /**
   * Where an item's parent is and the key it has there. An item encoded without its parent has
   * the parent of the item next to it: the chain is followed without recursion.
   */
  private parentOf(item: Y.Item): Parent {
    const chain: Y.Item[] = [];
    let at = item;
    let found: Parent;
    for (;;) {
      const known = this.parents.get(key(at.id));
      if (known) {
        found = known;
        break;
      }
      if (at.parent !== null) {
        found = this.direct(at);
        break;
      }
      chain.push(at);
      const neighbour = at.origin ?? at.rightOrigin;
      const next = neighbour ? this.find(neighbour) : null;
      if (!next) {
        found = UNKNOWN;
        break;
      }
      // Next to garbage-collected content, Yjs drops an item without putting it anywhere.
      if (!(next instanceof Y.Item)) {
        found = { place: 'other', sub: null, item: null };
        break;
      }
      at = next;
    }
    for (const c of chain) this.parents.set(key(c.id), found);
    return found;
  }

  /** The parent of an item that names it (integrated, or encoded with it). */
  private direct(item: Y.Item): Parent {
    const parent = item.parent;
    if (parent instanceof Y.AbstractType) {
      if (parent._item === null) {
        const isBlocks = parent === this.blocks;
        return { place: isBlocks ? 'blocks' : 'other', sub: item.parentSub, item: null };
      }
      return { place: this.placeOf(parent._item), sub: item.parentSub, item: parent._item };
    }
    if (typeof parent === 'string') {
      return { place: parent === 'blocks' ? 'blocks' : 'other', sub: item.parentSub, item: null };
    }
    const holder = parent instanceof Y.ID ? this.find(parent) : null;
    if (!(holder instanceof Y.Item)) return UNKNOWN;
    return { place: this.placeOf(holder), sub: item.parentSub, item: holder };
  }

  /** What the type an item holds is. */
  private placeOf(typeItem: Y.Item): Place {
    const known = this.places.get(key(typeItem.id));
    if (known) return known;
    let place: Place = 'other';
    const content = typeItem.content;
    if (content instanceof Y.ContentType) {
      const parent = this.parentOf(typeItem);
      if (parent.place === 'unknown') place = 'unknown';
      else if (content.type instanceof Y.Map && parent.place === 'blocks' && parent.sub === null)
        place = 'block';
      else if (content.type instanceof Y.Text && parent.place === 'block' && parent.sub === 'text') {
        place = 'text';
      }
    }
    this.places.set(key(typeItem.id), place);
    return place;
  }

  /** Checks every item the update adds against where it goes. */
  structs(): string | null {
    for (const list of this.added.values()) {
      for (const item of list) {
        if (!this.isNew(item)) continue;
        const refusal = this.item(item);
        if (refusal) return refusal;
      }
    }
    const ids: string[] = [];
    for (const block of this.newBlocks.values()) {
      if (block.id === undefined) return 'a new block has no id';
      if (!block.text) return 'a new block has no text';
      ids.push(block.id);
    }
    if (new Set(ids).size !== ids.length) return 'two new blocks have the same id';
    if (ids.length > 0) {
      const taken = new Set(liveBlocks(this.doc).map((b) => b.id));
      if (ids.some((id) => taken.has(id))) return 'a new block has the id of another block';
    }
    return null;
  }

  private newBlock(item: Y.Item) {
    let block = this.newBlocks.get(key(item.id));
    if (!block) this.newBlocks.set(key(item.id), (block = { text: false, id: undefined }));
    return block;
  }

  private item(item: Y.Item): string | null {
    const content = item.content;
    const removed = content instanceof Y.ContentDeleted;
    const parent = this.parentOf(item);
    switch (parent.place) {
      case 'unknown':
        return 'the update refers to content the document does not have';
      case 'other':
        return 'the update changes something outside the blocks';
      case 'blocks':
        if (parent.sub !== null) return 'the blocks array has no keys';
        if (removed) return null;
        if (!(content instanceof Y.ContentType) || !(content.type instanceof Y.Map))
          return 'a block must be a map';
        this.newBlock(item);
        return null;
      case 'block':
        return this.blockEntry(item, parent);
      case 'text':
        if (parent.sub !== null) return 'a text has no keys';
        // Besides characters: formatting and embeds (comment marks, mentions), which the markdown leaves out.
        if (
          removed ||
          content instanceof Y.ContentString ||
          content instanceof Y.ContentFormat ||
          content instanceof Y.ContentEmbed
        ) {
          return null;
        }
        return "a block's text holds characters, formatting and embeds only";
    }
  }

  /** A key of a block: its id and text only when the block is made; plain values otherwise. */
  private blockEntry(item: Y.Item, parent: Parent): string | null {
    const content = item.content;
    const removed = content instanceof Y.ContentDeleted;
    const sub = parent.sub;
    if (sub !== 'id' && sub !== 'text') {
      return removed || content instanceof Y.ContentAny
        ? null
        : 'a block holds plain values besides its text';
    }
    if (!parent.item || !this.isNew(parent.item)) {
      return `a block's ${sub} is set when the block is made and never changed`;
    }
    const block = this.newBlock(parent.item);
    if (removed) return null;
    if (sub === 'id') {
      const value = content instanceof Y.ContentAny ? content.arr[0] : undefined;
      if (typeof value !== 'string' || value === '' || value.length > 200) {
        return 'a block id must be a non-empty string';
      }
      block.id = value;
      return null;
    }
    if (!(content instanceof Y.ContentType) || !(content.type instanceof Y.Text)) {
      return "a block's text must be a Y.Text";
    }
    block.text = true;
    return null;
  }

  /** Removing blocks and characters is fine; removing a block's id or text, but not the block, is not. */
  deletions(ds: Decoded['ds']): string | null {
    const removes = (id: Y.ID) =>
      (ds.clients.get(id.client) ?? []).some((r) => id.clock >= r.clock && id.clock < r.clock + r.len);
    for (const [client, ranges] of ds.clients) {
      for (const { clock, len } of ranges) {
        for (let at = clock; at < clock + len;) {
          const struct = this.find(new Y.ID(client, at));
          if (!struct) return 'the update removes content the document does not have';
          at = struct.id.clock + struct.length;
          if (!(struct instanceof Y.Item) || struct.deleted || this.isNew(struct)) continue;
          if (struct.parentSub !== 'id' && struct.parentSub !== 'text') continue;
          const type = struct.parent as Y.AbstractType<unknown> | null;
          const block = type?._item;
          // Removing a block removes its keys with it.
          if (block && !block.deleted && !removes(block.id) && this.placeOf(block) === 'block') {
            return `a block's ${struct.parentSub} cannot be removed`;
          }
        }
      }
    }
    return null;
  }
}
