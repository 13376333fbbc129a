import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { recordChanges, shownChanges, undoChanges } from './changes.ts';
import {
  blockArray,
  blockText,
  compact,
  docFromMarkdown,
  liveBlocks,
  newBlock,
  projection,
  type BlockMap,
} from './model.ts';

/** A write as an agent makes one: blocks at `from..to` marked removed, new blocks after them, a block's text changed. */
function write(
  doc: Y.Doc,
  opts: { remove?: [number, number]; add?: string[]; at?: number; change?: [number, string] },
) {
  const removed = new Set<BlockMap>();
  const added: BlockMap[] = [];
  const changed: { map: BlockMap; before: string }[] = [];
  doc.transact(() => {
    const live = liveBlocks(doc);
    if (opts.change) {
      const [i, text] = opts.change;
      const map = live[i]!.map;
      changed.push({ map, before: blockText(map).toString() });
      blockText(map).insert(blockText(map).length, text);
    }
    if (opts.remove) {
      for (let i = opts.remove[0]; i <= opts.remove[1]; i++) {
        live[i]!.map.set('deleted', true);
        removed.add(live[i]!.map);
      }
    }
    if (opts.add) {
      const maps = opts.add.map(newBlock);
      const at = opts.at ?? blockArray(doc).length;
      blockArray(doc).insert(at, maps);
      added.push(...maps);
    }
  }, 'agent');
  return recordChanges(doc, added, removed, changed);
}

describe('one write recorded and undone', () => {
  it('puts back the text of a block the write changed in place, unless it was changed since', () => {
    const doc = docFromMarkdown('# Plan\n\nIntro.');
    const record = write(doc, { change: [1, '\n'], add: ['More.\n'] });
    assert.deepEqual(record.changed, [{ id: liveBlocks(doc)[1]!.id, before: 'Intro.', after: 'Intro.\n' }]);
    const copy = new Y.Doc();
    Y.applyUpdate(copy, Y.encodeStateAsUpdate(doc));

    let undone = undoChanges(doc, record);
    assert.equal(projection(doc), '# Plan\n\nIntro.');
    assert.deepEqual(undone.kept, []);

    // Someone wrote at the end of the changed block since: it stays as they left it.
    blockText(liveBlocks(copy)[1]!.map).insert(0, 'Edited ');
    undone = undoChanges(copy, record);
    assert.equal(projection(copy), '# Plan\n\nEdited Intro.\n');
    assert.deepEqual(undone.kept, ['Edited Intro.']);
  });

  it('brings removed blocks back in order at their place after the document dropped them', () => {
    const doc = docFromMarkdown('A.\n\nB.\n\nC.\n\nD.\n');
    const record = write(doc, { remove: [1, 2], add: ['New.\n\n'], at: 3 });
    assert.equal(projection(doc), 'A.\n\nNew.\n\nD.\n');
    assert.deepEqual(shownChanges(record), { added: ['New.\n\n'], removed: ['B.\n\n', 'C.\n\n'] });
    // Loaded again later: the removed blocks are gone from the array.
    assert.equal(compact(doc), 2);
    const undone = undoChanges(doc, record);
    assert.equal(projection(doc), 'A.\n\nB.\n\nC.\n\nD.\n');
    // Undoing the undo is the same operation.
    undoChanges(doc, undone.changes);
    assert.equal(projection(doc), 'A.\n\nNew.\n\nD.\n');
  });

  it('puts a removed first block back at the top, and one whose neighbour went before the other', () => {
    const doc = docFromMarkdown('A.\n\nB.\n\nC.\n');
    const first = write(doc, { remove: [0, 0] });
    compact(doc);
    undoChanges(doc, first);
    assert.equal(projection(doc), 'A.\n\nB.\n\nC.\n');

    const middle = write(doc, { remove: [1, 1] });
    compact(doc);
    // The block before it goes too, for good.
    doc.transact(() => blockArray(doc).delete(0, 1));
    undoChanges(doc, middle);
    assert.equal(projection(doc), 'B.\n\nC.\n');
  });
});
