import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import * as Y from 'yjs';
import {
  blockArray,
  blocksChanged,
  blockText,
  compact,
  digestBlocks,
  shortId,
  docFromMarkdown,
  docFromState,
  encodeState,
  isDeleted,
  lastNonEmptyText,
  liveBlocks,
  newBlock,
  positionOf,
  projection,
  readDigest,
  storedDigest,
  digestEntries,
  digestDelta,
  readDelta,
  applyDelta,
} from './model.ts';
import { splitBlocks } from './text.ts';

const SAMPLE =
  '---\ntitle: Plan\n---\n# Plan\n\nFirst 😀 paragraph.\n\n- one\n- two\n\n```\ncode\n\nmore\n```\n';

/** Marks the live block at `i` deleted, the way an agent write removes it. */
function remove(doc: Y.Doc, i: number): void {
  const block = liveBlocks(doc)[i]!;
  doc.transact(() => block.map.set('deleted', true));
}

describe('docFromMarkdown and projection', () => {
  it('makes one block per split piece, each with its own id and its raw text', () => {
    const doc = docFromMarkdown(SAMPLE);
    const pieces = splitBlocks(SAMPLE);
    const blocks = blockArray(doc).toArray();
    assert.equal(blocks.length, pieces.length);
    assert.deepEqual(
      blocks.map((b) => blockText(b).toString()),
      pieces,
    );
    for (const b of blocks) {
      assert.match(b.get('id') as string, /^blk_/);
      assert.ok(blockText(b) instanceof Y.Text);
      assert.equal(isDeleted(b), false);
    }
    assert.equal(new Set(blocks.map((b) => b.get('id'))).size, blocks.length);
    assert.equal(projection(doc), SAMPLE);
  });

  it('makes an empty document with no blocks from empty text', () => {
    const doc = docFromMarkdown('');
    assert.equal(blockArray(doc).length, 0);
    assert.equal(projection(doc), '');
    assert.deepEqual(liveBlocks(doc), []);
  });

  it('reads back any markdown exactly', () => {
    fc.assert(
      fc.property(
        fc.string({
          unit: fc.constantFrom(
            'a',
            ' ',
            '\n',
            '\n\n',
            '# ',
            '- ',
            '```',
            '> ',
            '|',
            '😀',
            '---',
            '<div>',
            '\t',
          ),
          maxLength: 40,
        }),
        (markdown) => {
          const doc = docFromMarkdown(markdown);
          assert.equal(projection(doc), markdown);
          assert.equal(projection(docFromState(encodeState(doc))), markdown);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('leaves out blocks marked deleted', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nC\n');
    remove(doc, 1);
    assert.equal(projection(doc), '# A\n\nC\n');
    const live = liveBlocks(doc);
    assert.deepEqual(
      live.map((b) => [b.text, b.index]),
      [
        ['# A\n\n', 0],
        ['C\n', 2],
      ],
    );
    assert.equal(blockArray(doc).length, 3);
  });

  it('leaves out editor-only annotations: formatting marks such as comments, and embeds', () => {
    const doc = docFromMarkdown('Some text to comment on.\n\nNext.\n');
    const text = blockText(blockArray(doc).get(0));
    doc.transact(() => {
      text.format(5, 4, { comment: { thread: 'th_1' } });
      text.insertEmbed(9, { cursor: 'ada' });
    });
    assert.ok(text.toDelta().some((op: { attributes?: object }) => op.attributes));
    assert.equal(projection(doc), 'Some text to comment on.\n\nNext.\n');
    assert.equal(projection(docFromState(encodeState(doc))), 'Some text to comment on.\n\nNext.\n');
  });

  it('shows new blocks and edits inside blocks in order', () => {
    const doc = docFromMarkdown('# A\n\nB\n');
    doc.transact(() => {
      blockArray(doc).insert(1, [newBlock('inserted\n\n')]);
      blockText(blockArray(doc).get(2)).insert(0, 'edited ');
    });
    assert.equal(projection(doc), '# A\n\ninserted\n\nedited B\n');
  });
});

describe('what is derived from a document', () => {
  type Op =
    | { kind: 'insert'; at: number; texts: string[] }
    | { kind: 'drop'; at: number }
    | { kind: 'mark' | 'unmark' | 'rename'; at: number }
    | { kind: 'type'; at: number; offset: number; text: string }
    | { kind: 'erase'; at: number; offset: number };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      texts: fc.array(fc.constantFrom('', 'a\n', 'b\n\n', '# c\n'), { minLength: 1, maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }),
    fc.record({ kind: fc.constantFrom('mark' as const, 'unmark' as const, 'rename' as const), at: fc.nat() }),
    fc.record({
      kind: fc.constant('type' as const),
      at: fc.nat(),
      offset: fc.nat(),
      text: fc.constantFrom('x', '\n', '😀'),
    }),
    fc.record({ kind: fc.constant('erase' as const), at: fc.nat(), offset: fc.nat() }),
  );

  function run(doc: Y.Doc, o: Op): void {
    const blocks = blockArray(doc);
    const n = blocks.length;
    if (o.kind === 'insert') return blocks.insert(o.at % (n + 1), o.texts.map(newBlock));
    if (n === 0) return;
    const map = blocks.get(o.at % n);
    const text = blockText(map);
    if (o.kind === 'drop') blocks.delete(o.at % n, 1);
    else if (o.kind === 'mark') map.set('deleted', true);
    else if (o.kind === 'unmark') map.delete('deleted');
    // A block's id changes only when a malformed one is mended; its digest entry changes with it.
    else if (o.kind === 'rename') map.set('id', `blk_renamed_${o.at}`);
    else if (o.kind === 'type') text.insert(o.offset % (text.length + 1), o.text);
    else if (o.kind === 'erase' && text.length > 0) text.delete(o.offset % text.length, 1);
  }

  /** Read straight from the Yjs structures, nothing kept. */
  function plain(doc: Y.Doc) {
    const maps = blockArray(doc).toArray();
    const live = maps.filter((m) => !isDeleted(m));
    return {
      projection: live.map((m) => blockText(m).toString()).join(''),
      last: [...live].reverse().find((m) => blockText(m).length > 0),
      maps,
    };
  }

  function check(doc: Y.Doc): void {
    const want = plain(doc);
    assert.equal(projection(doc), want.projection);
    assert.equal(lastNonEmptyText(doc), want.last ? blockText(want.last) : null);
    want.maps.forEach((m, i) => assert.equal(positionOf(doc, m), i));
    // A copy read from the stored state digests the same blocks the same way.
    const copy = docFromState(encodeState(doc));
    assert.equal(storedDigest(doc), storedDigest(copy));
    assert.deepEqual(digestBlocks(doc), digestBlocks(copy));
    assert.deepEqual(readDigest(storedDigest(doc)).blocks, digestBlocks(doc));
  }

  it('follows local changes, changes in batches, and changes from other replicas', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            ops: fc.array(op, { minLength: 1, maxLength: 4 }),
            from: fc.constantFrom('here' as const, 'batch' as const, 'replica' as const),
          }),
          { maxLength: 25 },
        ),
        (steps) => {
          const doc = docFromMarkdown('# A\n\nB\n\nC\n');
          const replica = docFromState(encodeState(doc));
          check(doc);
          for (const step of steps) {
            if (step.from === 'here') for (const o of step.ops) run(doc, o);
            else if (step.from === 'batch') {
              doc.transact(() => {
                for (const o of step.ops) {
                  run(doc, o);
                  // Read within the transaction: what it has done so far.
                  assert.equal(projection(doc), plain(doc).projection);
                }
              });
            } else {
              Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc, Y.encodeStateVector(replica)));
              for (const o of step.ops) run(replica, o);
              Y.applyUpdate(doc, Y.encodeStateAsUpdate(replica, Y.encodeStateVector(doc)));
            }
            check(doc);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('stores a digest as the change from an earlier one, which gives it back whole', () => {
    fc.assert(
      fc.property(fc.array(fc.array(op, { minLength: 1, maxLength: 4 }), { maxLength: 25 }), (steps) => {
        const doc = docFromMarkdown('# A\n\nB\n\nC\n\nD\n\nE\n\nF\n');
        let then = { entries: digestEntries(doc), stored: storedDigest(doc) };
        for (const ops of steps) {
          for (const o of ops) run(doc, o);
          const change = digestDelta(7, then.entries, digestEntries(doc));
          if (change !== null) {
            const delta = readDelta(change)!;
            assert.equal(delta.base, 7);
            assert.ok(change.length < storedDigest(doc).length, 'a change is stored only when smaller');
            assert.deepEqual(applyDelta(readDigest(then.stored), delta)?.blocks, digestBlocks(doc));
          }
          then = { entries: digestEntries(doc), stored: storedDigest(doc) };
        }
      }),
      { numRuns: 300 },
    );
  });

  it('refuses a change made against a digest stored as JSON, and a malformed one', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nC\n\nD\n');
    const entries = digestEntries(doc);
    blockText(liveBlocks(doc)[1]!.map).insert(0, 'x');
    const change = readDelta(digestDelta(3, entries, digestEntries(doc))!)!;
    assert.deepEqual(change.removed, 1);
    assert.equal(applyDelta(readDigest(JSON.stringify([['a', 'b']])), change), undefined);
    assert.throws(() => readDelta('d2:3:x'), /malformed/);
  });

  it('reads digests stored as JSON, comparing them with digests made the same way', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nC\n');
    const ids = liveBlocks(doc).map((b) => shortId(b.map));
    const legacy = JSON.stringify(liveBlocks(doc).map((b) => [shortId(b.map), `legacy-${b.text.length}`]));
    const read = readDigest(legacy);
    assert.deepEqual(
      read.blocks.map(([id]) => id),
      ids,
    );
    assert.deepEqual(
      read.current(doc).map(([id]) => id),
      ids,
    );
    // Unchanged blocks hash alike in both forms of the same digest.
    const then = readDigest(JSON.stringify(read.current(doc)));
    blockText(liveBlocks(doc)[1]!.map).insert(0, 'x');
    assert.equal(blocksChanged(then.blocks, then.current(doc)), 1);
  });
});

describe('stored state', () => {
  it('round-trips ids, texts and deleted flags', () => {
    const doc = docFromMarkdown(SAMPLE);
    remove(doc, 2);
    const copy = docFromState(encodeState(doc));
    assert.equal(projection(copy), projection(doc));
    assert.deepEqual(
      blockArray(copy)
        .toArray()
        .map((b) => [b.get('id'), blockText(b).toString(), isDeleted(b)]),
      blockArray(doc)
        .toArray()
        .map((b) => [b.get('id'), blockText(b).toString(), isDeleted(b)]),
    );
  });

  it('merges a person’s edit on one replica with a removal on another', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nC\n');
    const replica = docFromState(encodeState(doc));
    blockText(blockArray(replica).get(0)).insert(3, '!');
    remove(doc, 2);
    Y.applyUpdate(doc, Y.encodeStateAsUpdate(replica));
    Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc));
    assert.equal(projection(doc), '# A!\n\nB\n\n');
    assert.equal(projection(replica), projection(doc));
  });
});

describe('digestBlocks and blocksChanged', () => {
  it('digests each live block as its short id and a hash of its text', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nB\n');
    remove(doc, 2);
    const digest = digestBlocks(doc);
    assert.deepEqual(
      digest.map(([id]) => id),
      liveBlocks(doc).map((b) => shortId(b.map)),
    );
    assert.equal(
      new Set(digest.map(([id]) => id)).size,
      digest.length,
      'distinct blocks, distinct short ids',
    );
    for (const [, hash] of digest) assert.ok(typeof hash === 'string' && hash.length > 0);
    const other = digestBlocks(docFromMarkdown('B\n\n'));
    assert.equal(other[0]![1], digest[1]![1], 'the same text hashes the same');
  });

  it('counts nothing between equal digests', () => {
    const doc = docFromMarkdown(SAMPLE);
    assert.equal(blocksChanged(digestBlocks(doc), digestBlocks(doc)), 0);
    assert.equal(blocksChanged([], []), 0);
  });

  it('counts each changed, added and removed block once', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nC\n\nD\n');
    const then = digestBlocks(doc);

    blockText(liveBlocks(doc)[1]!.map).insert(0, 'x');
    assert.equal(blocksChanged(then, digestBlocks(doc)), 1);

    blockArray(doc).push([newBlock('E\n')]);
    assert.equal(blocksChanged(then, digestBlocks(doc)), 2);

    remove(doc, 3);
    assert.equal(blocksChanged(then, digestBlocks(doc)), 3);

    // An edit undone leaves the block as it was.
    const b = blockText(liveBlocks(doc)[1]!.map);
    b.delete(0, 1);
    assert.equal(blocksChanged(then, digestBlocks(doc)), 2);

    assert.equal(blocksChanged(then, []), 4);
    assert.equal(blocksChanged([], then), 4);
  });

  it('counts a block removed and written again with the same text as two changes', () => {
    const doc = docFromMarkdown('# A\n\nB\n');
    const then = digestBlocks(doc);
    remove(doc, 1);
    blockArray(doc).push([newBlock('B\n')]);
    assert.equal(projection(doc), '# A\n\nB\n');
    assert.equal(blocksChanged(then, digestBlocks(doc)), 2);
  });
});

describe('compact', () => {
  it('drops blocks marked deleted and nothing else, keeping the projection', () => {
    const doc = docFromMarkdown('# A\n\nB\n\nC\n\nD\n');
    remove(doc, 1);
    remove(doc, 2);
    const before = projection(doc);
    const ids = liveBlocks(doc).map((b) => b.id);
    assert.equal(compact(doc), 2);
    assert.equal(blockArray(doc).length, 2);
    assert.equal(projection(doc), before);
    assert.deepEqual(
      liveBlocks(doc).map((b) => [b.id, b.index]),
      ids.map((id, index) => [id, index]),
    );
    assert.equal(compact(doc), 0);
  });

  it('leaves a document with no removed blocks alone', () => {
    const doc = docFromMarkdown(SAMPLE);
    assert.equal(compact(doc), 0);
    assert.equal(projection(doc), SAMPLE);
  });
});
