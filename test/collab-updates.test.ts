import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as Y from 'yjs';
import { blockArray, docFromMarkdown, newBlock, projection } from '../src/domains/documents/model.ts';
import { refusePersonUpdate } from '../src/domains/documents/person-gate.ts';

/** A person's replica of `doc`, the change they make in it, and the update it sends. */
function change(doc: Y.Doc, edit: (replica: Y.Doc) => void): Uint8Array {
  const replica = new Y.Doc();
  Y.applyUpdate(replica, Y.encodeStateAsUpdate(doc));
  edit(replica);
  return Y.encodeStateAsUpdate(replica, Y.encodeStateVector(doc));
}

const blockAt = (doc: Y.Doc, i: number) => blockArray(doc).get(i);
const textAt = (doc: Y.Doc, i: number) => blockAt(doc, i).get('text') as Y.Text;

function accepted(doc: Y.Doc, update: Uint8Array): void {
  assert.equal(refusePersonUpdate(doc, update), null);
}

function refused(doc: Y.Doc, update: Uint8Array, reason: RegExp): void {
  const before = Y.encodeStateAsUpdate(doc);
  assert.match(refusePersonUpdate(doc, update) ?? 'accepted', reason);
  assert.deepEqual(Y.encodeStateAsUpdate(doc), before, 'the check changes nothing');
}

describe("a person's update to a live document", () => {
  const doc = () => docFromMarkdown('# Title\n\nFirst paragraph.\n\nSecond paragraph.\n');

  it('may type, delete characters, mark and annotate text, and remove whole blocks', () => {
    const d = doc();
    accepted(
      d,
      change(d, (r) => textAt(r, 1).insert(5, ' typed')),
    );
    accepted(
      d,
      change(d, (r) => textAt(r, 1).delete(0, 6)),
    );
    accepted(
      d,
      change(d, (r) => textAt(r, 2).format(0, 6, { comment: 'thr_1' })),
    );
    accepted(
      d,
      change(d, (r) => textAt(r, 2).insertEmbed(0, { mention: 'ada' })),
    );
    accepted(
      d,
      change(d, (r) => blockAt(r, 2).set('comments', ['thr_1'])),
    );
    accepted(
      d,
      change(d, (r) => blockArray(r).delete(1, 1)),
    );
    accepted(
      d,
      change(d, (r) => blockAt(r, 1).set('deleted', true)),
    );
  });

  it('is judged alike on a document just loaded, whose blocks array was never asked for by name', () => {
    const loaded = new Y.Doc();
    Y.applyUpdate(loaded, Y.encodeStateAsUpdate(doc()));
    accepted(
      loaded,
      change(loaded, (r) => textAt(r, 1).insert(0, 'Typed first. ')),
    );
  });

  it('may add blocks that carry a fresh id and a text', () => {
    const d = doc();
    accepted(
      d,
      change(d, (r) => blockArray(r).insert(1, [newBlock('New.\n\n'), newBlock('Also.\n\n')])),
    );
  });

  it('may send what the server has already, and a whole replica', () => {
    const d = doc();
    accepted(d, Y.encodeStateAsUpdate(d));
    const update = change(d, (r) => textAt(r, 2).insert(0, 'x'));
    const typed = new Y.Doc();
    Y.applyUpdate(typed, Y.encodeStateAsUpdate(d));
    Y.applyUpdate(typed, update);
    accepted(d, Y.encodeStateAsUpdate(typed));
  });

  it('is refused when a new block has no id, an empty id or an id already used', () => {
    const d = doc();
    const block = (set: (m: Y.Map<unknown>) => void) =>
      change(d, (r) => {
        const m = new Y.Map<unknown>();
        set(m);
        blockArray(r).insert(1, [m]);
      });
    refused(
      d,
      block((m) => m.set('text', new Y.Text('No id.\n'))),
      /has no id/,
    );
    refused(
      d,
      block((m) => {
        m.set('id', '');
        m.set('text', new Y.Text('Empty id.\n'));
      }),
      /non-empty string/,
    );
    refused(
      d,
      block((m) => {
        m.set('id', 7);
        m.set('text', new Y.Text('Number id.\n'));
      }),
      /non-empty string/,
    );
    const taken = blockAt(d, 0).get('id') as string;
    refused(
      d,
      block((m) => {
        m.set('id', taken);
        m.set('text', new Y.Text('Copy.\n'));
      }),
      /id of another block/,
    );
    refused(
      d,
      block((m) => m.set('id', 'blk_without_text')),
      /has no text/,
    );
  });

  it("is refused when it replaces or removes a block's text or id", () => {
    const d = doc();
    refused(
      d,
      change(d, (r) => blockAt(r, 1).set('text', new Y.Text('Replaced.\n'))),
      /text is set when/,
    );
    refused(
      d,
      change(d, (r) => blockAt(r, 1).set('text', 'a string')),
      /text is set when/,
    );
    refused(
      d,
      change(d, (r) => blockAt(r, 1).delete('text')),
      /text cannot be removed/,
    );
    refused(
      d,
      change(d, (r) => blockAt(r, 1).set('id', 'blk_other')),
      /id is set when/,
    );
    refused(
      d,
      change(d, (r) => blockAt(r, 1).delete('id')),
      /id cannot be removed/,
    );
  });

  it('is refused when it puts a type in a text, anything but blocks in the array, or anything elsewhere', () => {
    const d = doc();
    refused(
      d,
      change(d, (r) => textAt(r, 1).insertEmbed(0, new Y.Map())),
      /characters, formatting and embeds/,
    );
    refused(
      d,
      change(d, (r) => blockArray(r).insert(0, ['a string'] as never)),
      /must be a map/,
    );
    refused(
      d,
      change(d, (r) => blockAt(r, 1).set('nested', new Y.Map())),
      /plain values/,
    );
    refused(
      d,
      change(d, (r) => r.getMap('elsewhere').set('x', 1)),
      /outside the blocks/,
    );
  });

  it('is refused when it cannot be decoded or refers to content the document lacks', () => {
    const d = doc();
    refused(d, new Uint8Array([1, 2, 3, 250, 251, 252]), /could not be decoded/);
    // Typing into a block the server never received.
    const elsewhere = new Y.Doc();
    Y.applyUpdate(elsewhere, Y.encodeStateAsUpdate(d));
    blockArray(elsewhere).insert(0, [newBlock('Unseen.\n')]);
    const unseen = Y.encodeStateVector(elsewhere);
    (blockArray(elsewhere).get(0).get('text') as Y.Text).insert(0, 'More ');
    refused(d, Y.encodeStateAsUpdate(elsewhere, unseen), /does not have/);
    assert.equal(projection(d), '# Title\n\nFirst paragraph.\n\nSecond paragraph.\n');
  });
});
