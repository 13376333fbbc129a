import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import * as Y from 'yjs';
import {
  BlockBinding,
  blocksOf,
  diff,
  freshBlockId,
  markdownOf,
  type TextChange,
} from '../web/src/editor/binding.ts';

/*
 * The editor binding: replicas of one document, each with an editor (a plain string standing in
 * for CodeMirror) bound to it, random local edits, agent-style block operations and undo, and
 * updates exchanged in random orders (each sender's in the order it sent them, as over one socket,
 * the senders interleaved at random). After every step each editor shows its replica's markdown;
 * once everything is delivered every replica has the same markdown.
 */

const NET = { net: true };
const AGENT = { agent: true };

function applyChange(text: string, c: TextChange): string {
  return text.slice(0, c.from) + c.insert + text.slice(c.to);
}

interface Replica {
  doc: Y.Doc;
  binding: BlockBinding;
  editor: string;
  /** Each block's text as first seen: typing never replaces one. */
  texts: WeakMap<Y.Map<unknown>, Y.Text>;
}

function seedBlock(text: string): Y.Map<unknown> {
  const map = new Y.Map<unknown>();
  map.set('id', freshBlockId());
  map.set('text', new Y.Text(text));
  return map;
}

function network(count: number, seed: string[]) {
  const origin = new Y.Doc();
  blocksOf(origin).push(seed.map(seedBlock));
  const start = Y.encodeStateAsUpdate(origin);
  const queues = new Map<string, Uint8Array[]>();
  const replicas: Replica[] = [];
  for (let i = 0; i < count; i++) {
    const doc = new Y.Doc();
    Y.applyUpdate(doc, start, NET);
    const replica: Replica = { doc, editor: '', texts: new WeakMap(), binding: undefined as never };
    replica.binding = new BlockBinding(doc, {
      onRemote: (changes) => {
        // The changes are in the coordinates of the text before them, last first keeps them.
        for (let k = changes.length - 1; k >= 0; k--)
          replica.editor = applyChange(replica.editor, changes[k]!);
      },
    });
    replica.editor = replica.binding.value;
    doc.on('update', (update: Uint8Array, from: unknown) => {
      if (from === NET) return;
      for (let j = 0; j < count; j++) if (j !== i) queues.get(`${i}>${j}`)!.push(update);
    });
    replicas.push(replica);
    for (let j = 0; j < count; j++) if (j !== i) queues.set(`${i}>${j}`, []);
  }
  return { replicas, queues };
}

function checkShape(r: Replica) {
  const ids = new Set<string>();
  for (const map of blocksOf(r.doc)) {
    const id = map.get('id');
    assert.equal(typeof id, 'string');
    assert.ok(!ids.has(id as string), `block id ${String(id)} is unique`);
    ids.add(id as string);
    const text = map.get('text');
    assert.ok(text instanceof Y.Text);
    const first = r.texts.get(map);
    if (first) assert.equal(first, text, 'a block keeps its Y.Text');
    else r.texts.set(map, text);
  }
  assert.equal(r.editor, markdownOf(r.doc), 'the editor shows the markdown');
  assert.equal(r.binding.value, r.editor);
}

const chars = fc.constantFrom('a', 'b', ' ', '\n', '\n\n', '#', '- ', '😀', 'é', 'xyz');
const insertText = fc.array(chars, { maxLength: 4 }).map((a) => a.join(''));

type Op =
  | { kind: 'edit'; r: number; at: number; len: number; text: string }
  | { kind: 'multi'; r: number; at: number; len: number; text: string; at2: number; len2: number }
  | { kind: 'undo' | 'redo'; r: number }
  | { kind: 'agentInsert'; r: number; at: number; text: string }
  | { kind: 'agentDelete'; r: number; at: number }
  | { kind: 'agentEdit'; r: number; at: number; pos: number; len: number; text: string }
  | { kind: 'deliver'; pair: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('edit' as const),
      r: fc.nat(3),
      at: fc.nat(400),
      len: fc.nat(6),
      text: insertText,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('multi' as const),
      r: fc.nat(3),
      at: fc.nat(400),
      len: fc.nat(3),
      text: insertText,
      at2: fc.nat(400),
      len2: fc.nat(3),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('undo' as const, 'redo' as const), r: fc.nat(3) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('agentInsert' as const),
      r: fc.nat(3),
      at: fc.nat(20),
      text: insertText,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('agentDelete' as const), r: fc.nat(3), at: fc.nat(20) }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('agentEdit' as const),
      r: fc.nat(3),
      at: fc.nat(20),
      pos: fc.nat(50),
      len: fc.nat(3),
      text: insertText,
    }),
  },
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant('deliver' as const), pair: fc.nat(20) }),
  },
);

/** A position inside the editor's text that does not split a surrogate pair. */
function clampPos(text: string, at: number): number {
  let p = text.length === 0 ? 0 : at % (text.length + 1);
  if (p > 0 && p < text.length && /[\udc00-\udfff]/.test(text[p]!)) p--;
  return p;
}

function localEdit(r: Replica, changes: TextChange[]) {
  // The editor changes first, then hands the change to the binding (as CodeMirror's update does).
  let next = r.editor;
  for (let k = changes.length - 1; k >= 0; k--) next = applyChange(next, changes[k]!);
  r.editor = next;
  r.binding.applyLocal(changes);
}

function run(count: number, seed: string[], ops: Op[], orderSeed: number) {
  const { replicas, queues } = network(count, seed);
  const pairs = [...queues.keys()];
  for (const o of ops) {
    if (o.kind === 'deliver') {
      const key = pairs[o.pair % pairs.length]!;
      const queue = queues.get(key)!;
      if (queue.length === 0) continue;
      // One sender's updates arrive in the order it sent them (one socket, through the server);
      // which sender's comes next is up to the test.
      const update = queue.shift();
      const to = Number(key.split('>')[1]);
      Y.applyUpdate(replicas[to]!.doc, update!, NET);
      checkShape(replicas[to]!);
      continue;
    }
    const r = replicas[o.r % count]!;
    const live = blocksOf(r.doc)
      .toArray()
      .filter((m) => m.get('deleted') !== true);
    switch (o.kind) {
      case 'edit': {
        const from = clampPos(r.editor, o.at);
        const to = clampPos(r.editor, Math.min(r.editor.length, from + o.len));
        localEdit(r, [{ from, to: Math.max(from, to), insert: o.text }]);
        break;
      }
      case 'multi': {
        const a = clampPos(r.editor, o.at);
        const b = clampPos(r.editor, o.at2);
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        const loEnd = Math.max(lo, clampPos(r.editor, Math.min(hi, lo + o.len)));
        const hiEnd = Math.max(hi, clampPos(r.editor, Math.min(r.editor.length, hi + o.len2)));
        if (loEnd > hi) continue;
        localEdit(r, [
          { from: lo, to: loEnd, insert: o.text },
          { from: hi, to: hiEnd, insert: [...o.text][0] ?? '' },
        ]);
        break;
      }
      case 'undo':
        r.binding.undoManager!.undo();
        break;
      case 'redo':
        r.binding.undoManager!.redo();
        break;
      case 'agentInsert': {
        const all = blocksOf(r.doc);
        r.doc.transact(() => all.insert(o.at % (all.length + 1), [seedBlock(o.text || 'new\n\n')]), AGENT);
        break;
      }
      case 'agentDelete': {
        if (live.length === 0) continue;
        r.doc.transact(() => live[o.at % live.length]!.set('deleted', true), AGENT);
        break;
      }
      case 'agentEdit': {
        if (live.length === 0) continue;
        const text = live[o.at % live.length]!.get('text') as Y.Text;
        const s = text.toString();
        const pos = clampPos(s, o.pos);
        const end = clampPos(s, Math.min(s.length, pos + o.len));
        r.doc.transact(() => {
          text.delete(pos, Math.max(0, end - pos));
          text.insert(pos, o.text);
        }, AGENT);
        break;
      }
    }
    checkShape(r);
  }
  // Everything left is delivered, in an order of its own.
  const rand = fc.sample(fc.nat(1_000_000), { seed: orderSeed, numRuns: 10_000 });
  let k = 0;
  for (;;) {
    const pending = pairs.filter((p) => queues.get(p)!.length > 0);
    if (pending.length === 0) break;
    const key = pending[rand[k++ % rand.length]! % pending.length]!;
    const queue = queues.get(key)!;
    const update = queue.shift();
    Y.applyUpdate(replicas[Number(key.split('>')[1])]!.doc, update!, NET);
  }
  const expected = markdownOf(replicas[0]!.doc);
  for (const r of replicas) {
    checkShape(r);
    assert.equal(markdownOf(r.doc), expected, 'every replica has the same markdown');
    assert.equal(r.editor, expected, 'every editor shows it');
  }
  for (const r of replicas) r.binding.destroy();
}

describe('editor binding', () => {
  it('keeps replicas converged under random edits, block operations, undo and delivery orders', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 4 }),
        fc.array(insertText, { maxLength: 5 }),
        fc.array(op, { maxLength: 60 }),
        fc.integer(),
        (count, seed, ops, orderSeed) => run(count, seed, ops, orderSeed),
      ),
      { numRuns: 300 },
    );
  });

  it('maps a change across block boundaries onto each touched block, keeping ids', () => {
    const doc = new Y.Doc();
    blocksOf(doc).push([seedBlock('# Title\n\n'), seedBlock('First para.\n\n'), seedBlock('Last.\n')]);
    const ids = blocksOf(doc).map((m) => m.get('id'));
    const b = new BlockBinding(doc, { onRemote: () => assert.fail('no remote change') });
    let editor = b.value;
    const from = editor.indexOf('Title') + 2;
    const to = editor.indexOf('Last') + 2;
    b.applyLocal([{ from, to, insert: 'XY' }]);
    editor = editor.slice(0, from) + 'XY' + editor.slice(to);
    assert.equal(markdownOf(doc), editor);
    assert.deepEqual(
      blocksOf(doc).map((m) => m.get('id')),
      ids,
    );
    assert.deepEqual(
      blocksOf(doc).map((m) => (m.get('text') as Y.Text).toString()),
      ['# TiXY', '', 'st.\n'],
    );
  });

  it('adds a block with a fresh id when there is none, and undoes only its own changes', () => {
    const doc = new Y.Doc();
    let editor = '';
    const b = new BlockBinding(doc, {
      onRemote: (changes) => {
        for (const c of changes.slice().reverse()) editor = applyChange(editor, c);
      },
    });
    b.applyLocal([{ from: 0, to: 0, insert: 'Hello' }]);
    editor = 'Hello';
    assert.equal(blocksOf(doc).length, 1);
    assert.match(blocksOf(doc).get(0).get('id') as string, /^blk_/);
    b.undoManager!.stopCapturing();
    doc.transact(() => blocksOf(doc).push([seedBlock('\n\nFrom an agent.\n')]), AGENT);
    assert.equal(editor, 'Hello\n\nFrom an agent.\n');
    b.undoManager!.undo();
    assert.equal(editor, '\n\nFrom an agent.\n');
    assert.equal(markdownOf(doc), editor);
  });

  it('brings remote edits back as each block’s own exact changes, so a cursor between them stays', () => {
    const doc = new Y.Doc();
    blocksOf(doc).push([seedBlock('aa\n\n'), seedBlock('Mine.\n\n'), seedBlock('Last.\n')]);
    const seen: TextChange[][] = [];
    const b = new BlockBinding(doc, { onRemote: (changes) => seen.push(changes) });
    const [first, , last] = blocksOf(doc).map((m) => m.get('text') as Y.Text);
    // One agent write touching the first and the last block: two changes, none over "Mine."
    doc.transact(() => {
      first!.insert(1, 'a');
      last!.delete(0, 1);
      last!.insert(0, 'l');
    }, AGENT);
    assert.deepEqual(seen.pop(), [
      { from: 1, to: 1, insert: 'a' },
      { from: 11, to: 12, insert: '' },
      { from: 12, to: 12, insert: 'l' },
    ]);
    // A block removed and one added: a deletion and an insertion, the rest untouched.
    doc.transact(() => {
      blocksOf(doc).delete(0, 1);
      blocksOf(doc).push([seedBlock('New.\n')]);
    }, AGENT);
    assert.deepEqual(seen.pop(), [
      { from: 0, to: 5, insert: '' },
      { from: 18, to: 18, insert: 'New.\n' },
    ]);
    assert.equal(b.value, 'Mine.\n\nlast.\nNew.\n');
  });

  it('leaves embeds in a text alone', () => {
    const doc = new Y.Doc();
    const text = new Y.Text('ab');
    const map = new Y.Map<unknown>();
    map.set('id', 'blk_1');
    map.set('text', text);
    blocksOf(doc).push([map]);
    text.insertEmbed(1, { mark: 'x' });
    const b = new BlockBinding(doc, { onRemote: () => {} });
    assert.equal(b.value, 'ab');
    b.applyLocal([{ from: 1, to: 2, insert: 'Z' }]);
    assert.equal(markdownOf(doc), 'aZ');
    assert.equal(text.length, 3);
  });

  it('diffs without splitting surrogate pairs', () => {
    const c = diff('a😀b', 'a😃b');
    assert.equal(c.from, 1);
    assert.equal(c.to, 3);
    assert.equal(c.insert, '😃');
  });
});
