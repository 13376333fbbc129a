import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import { blockArray, newBlock } from '../src/domains/documents/model.ts';
import { DATABASES } from './support/databases.ts';
import { openLive, until, type Editor } from './support/collab.ts';

const DOC = '# Plan\n\nIntro.\n\n## Steps\n\nStep one.\n\nStep two.\n';
/** Small bounds, so a test can cross them without megabytes on the wire. */
const BOUNDS = { documentChars: 4_000, blockChars: 1_500, blocks: 40 };

type Poison = [name: string, edit: (doc: Y.Doc) => void, reason: RegExp];

const blocks = (doc: Y.Doc) => blockArray(doc) as Y.Array<unknown>;
const blockAt = (doc: Y.Doc, i: number) => blockArray(doc).get(i);
const textAt = (doc: Y.Doc, i: number) => blockAt(doc, i).get('text') as Y.Text;

/** Every way of leaving a block without its id string or its Y.Text text that the gate refuses. */
const POISONS: Poison[] = [
  [
    'a block added and its text deleted in one update',
    (doc) =>
      doc.transact(() => {
        const m = newBlock('Poison.\n');
        blockArray(doc).insert(0, [m]);
        m.delete('text');
      }),
    /has no text/,
  ],
  [
    'a block added and its id deleted in one update',
    (doc) =>
      doc.transact(() => {
        const m = newBlock('Poison.\n');
        blockArray(doc).insert(0, [m]);
        m.delete('id');
      }),
    /has no id/,
  ],
  [
    'a block added with its text replaced later in the update by a string',
    (doc) =>
      doc.transact(() => {
        const m = newBlock('Poison.\n');
        blockArray(doc).insert(0, [m]);
        m.set('text', 'plain string');
      }),
    /must be a Y\.Text/,
  ],
  [
    'a block added with its id replaced later in the update by a number',
    (doc) =>
      doc.transact(() => {
        const m = newBlock('Poison.\n');
        blockArray(doc).insert(0, [m]);
        m.set('id', 42);
      }),
    /non-empty string/,
  ],
  [
    'the text deleted from an existing block',
    (doc) => blockAt(doc, 1).delete('text'),
    /text cannot be removed/,
  ],
  ['the id deleted from an existing block', (doc) => blockAt(doc, 1).delete('id'), /id cannot be removed/],
  [
    "an existing block's text replaced by another Y.Text",
    (doc) => blockAt(doc, 1).set('text', new Y.Text('Other.\n')),
    /text is set when/,
  ],
  [
    "an existing block's text replaced by a map",
    (doc) => blockAt(doc, 1).set('text', new Y.Map()),
    /text is set when/,
  ],
  ['a text in place of a block', (doc) => blocks(doc).insert(0, [new Y.Text('x')]), /must be a map/],
  [
    'a plain value in place of a block',
    (doc) => blocks(doc).insert(0, [{ id: 'x', text: 'y' }]),
    /must be a map/,
  ],
  [
    'a new block whose text is a map',
    (doc) => {
      const m = new Y.Map<unknown>();
      m.set('id', 'blk_typed');
      m.set('text', new Y.Map());
      blockArray(doc).insert(0, [m]);
    },
    /must be a Y\.Text/,
  ],
  [
    'a map embedded in a text',
    (doc) => textAt(doc, 1).insertEmbed(0, new Y.Map()),
    /characters, formatting and embeds/,
  ],
  ['keys set on a text', (doc) => textAt(doc, 1).setAttribute('x', 1), /text has no keys/],
  [
    'a type as a plain value of a block',
    (doc) => blockAt(doc, 1).set('nested', new Y.Array()),
    /plain values/,
  ],
  ['a U+0000 typed into a text', (doc) => textAt(doc, 1).insert(0, 'nul\u0000'), /cannot hold U\+0000/],
  ['a change outside the blocks', (doc) => doc.getMap('elsewhere').set('x', 1), /outside the blocks/],
];

/** Changes that would take the document past one of BOUNDS. */
const OVERSIZED: Poison[] = [
  [
    'a block past its characters',
    (doc) => textAt(doc, 2).insert(0, 'x'.repeat(1_600)),
    /block would hold 1,6\d\d characters; the limit is 1,500/,
  ],
  [
    'the document past its characters across blocks',
    (doc) =>
      blockArray(doc).insert(
        0,
        Array.from({ length: 4 }, () => newBlock('y'.repeat(1_200))),
      ),
    /document would hold [\d,]+ characters; the limit is 4,000/,
  ],
  [
    'too many blocks',
    (doc) =>
      blockArray(doc).insert(
        0,
        Array.from({ length: 40 }, () => newBlock('z\n')),
      ),
    /would have \d+ blocks; the limit is 40/,
  ],
  [
    'an embed past a block',
    (doc) => textAt(doc, 2).insertEmbed(0, { big: 'e'.repeat(2_000) }),
    /block would hold/,
  ],
  [
    'formatting past a block',
    (doc) => textAt(doc, 2).format(0, 3, { note: 'f'.repeat(2_000) }),
    /block would hold/,
  ],
  ['a plain value past a block', (doc) => blockAt(doc, 2).set('note', 'v'.repeat(2_000)), /block would hold/],
];

for (const db of DATABASES) {
  describe(`the live socket refuses poisoned and oversized updates on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    let bobToken: string;

    before(async () => {
      live = await openLive(db, { documents: { bounds: BOUNDS } });
      bobToken = await live.tokenFor('bob@acme.test');
    });
    after(() => live.close());

    const docs = () => live.services().documents;
    const ada = () => live.h.actor('ada@acme.test');
    const read = (id: string) => docs().read(ada(), { document_id: id });
    const versions = async (id: string) => (await docs().versions(ada(), { document_id: id })).versions;

    async function create(content = DOC): Promise<string> {
      return (await docs().create(ada(), { title: 'Live', scope: 'org', content_markdown: content }))
        .document_id;
    }

    /** An editor connected as Bob, with what the server tells it through stateless messages. */
    async function connected(id: string): Promise<Editor & { said: Record<string, string>[] }> {
      const editor = live.editor(id, bobToken);
      const said: Record<string, string>[] = [];
      editor.provider.on('stateless', ({ payload }: { payload: string }) => said.push(JSON.parse(payload)));
      await editor.ready;
      return Object.assign(editor, { said });
    }

    async function refusedWhole(name: string, edit: (doc: Y.Doc) => void, reason: RegExp) {
      const id = await create();
      const before = await read(id);
      const rows = (await versions(id)).length;
      const editor = await connected(id);
      edit(editor.doc);
      await until(() => editor.said.some((s) => s.refused), `${name}: the editor is told`);
      const refusal = editor.said.find((s) => s.refused)!.refused!;
      assert.match(refusal, reason, name);
      // Nothing of it reached the document, the store, or anyone connected after.
      const after = await read(id);
      assert.equal(after.markdown, before.markdown, name);
      assert.equal(after.version, before.version, name);
      assert.equal((await versions(id)).length, rows, name);
      const next = await connected(id);
      assert.equal(next.text(), before.markdown, name);
      // The document takes the next person's edit and stores it.
      (next.doc.getArray<Y.Map<unknown>>('blocks').get(1).get('text') as Y.Text).insert(0, 'Later ');
      await until(async () => (await read(id)).markdown.includes('Later Intro.'), `${name}: later edit`);
      await until(async () => (await versions(id)).length > rows, `${name}: later edit stored`);
      editor.close();
      next.close();
    }

    for (const [name, edit, reason] of POISONS) {
      it(`refuses ${name} whole, tells the editor why, and stores the next edit`, () =>
        refusedWhole(name, edit, reason));
    }

    for (const [name, edit, reason] of OVERSIZED) {
      it(`refuses ${name}, telling the editor the limit`, () => refusedWhole(name, edit, reason));
    }

    it('refuses removing the text of a block added in an earlier update', async () => {
      const id = await create();
      const editor = await connected(id);
      const m = newBlock('Added.\n\n');
      blockArray(editor.doc).insert(0, [m]);
      await until(async () => (await read(id)).markdown.startsWith('Added.'), 'the block lands');
      const before = await read(id);
      m.delete('text');
      await until(() => editor.said.some((s) => s.refused), 'the editor is told');
      assert.match(editor.said[0]!.refused!, /text cannot be removed/);
      assert.deepEqual(await read(id), before);
    });

    it('lets a document past its bounds shrink, and lets people write within them', async () => {
      const id = await create(`${'w'.repeat(1_400)}\n\nSmall.\n`);
      const editor = await connected(id);
      textAt(editor.doc, 1).insert(0, 'More ');
      await until(async () => (await read(id)).markdown.includes('More Small.'), 'the edit lands');
      assert.deepEqual(editor.said, []);
    });

    it('opens a document stored past its bounds read-only, with a sentence saying why', async () => {
      // Agents write in steps up to 60,000 characters; such a document is past the small bounds here.
      const id = await create(`${'a'.repeat(999)}\n\n`.repeat(5));
      const before = await read(id);
      const editor = await connected(id);
      assert.equal(editor.provider.authorizedScope, 'readonly');
      await until(() => editor.said.some((s) => s.readOnly), 'the editor is told why');
      assert.match(
        editor.said.find((s) => s.readOnly)!.readOnly!,
        /read-only here: it holds 5,005 characters, past the limit of 4,000/,
      );
      textAt(editor.doc, 0).insert(0, 'Dropped ');
      assert.equal((await read(id)).markdown, before.markdown);
      assert.equal(editor.text().startsWith('Dropped '), true, 'only the editor’s own copy has it');
    });

    it('reads, mends and edits a document whose stored blocks are malformed', async () => {
      const id = await create();
      const store = docs().store;
      const l = await store.open(id);
      // What storage may hold from before updates were judged whole: written past the gate.
      const replica = new Y.Doc();
      Y.applyUpdate(replica, Y.encodeStateAsUpdate(l.doc));
      replica.transact(() => {
        blockAt(replica, 1).delete('text');
        blockAt(replica, 2).set('id', 7);
        blocks(replica).insert(0, ['not a block']);
      });
      store.applyPersonChange(l, ada().personId, Y.encodeStateAsUpdate(replica, Y.encodeStateVector(l.doc)));
      // Reads skip what they cannot read, and storing goes on.
      const skipped = await read(id);
      assert.equal(skipped.markdown, '# Plan\n\nStep one.\n\nStep two.\n');
      assert.ok(await store.unload(id));
      // Loaded again (by the next editor), the blocks are mended: a text for the one without,
      // an id for the other, the value that was no block gone; the mended document is stored.
      const editor = await connected(id);
      const mended = await read(id);
      assert.equal(mended.markdown, '# Plan\n\n## Steps\n\nStep one.\n\nStep two.\n');
      assert.equal(editor.text(), mended.markdown);
      const texts = editor.doc.getArray<Y.Map<unknown>>('blocks').toArray();
      assert.ok(
        texts.every(
          (m) => m instanceof Y.Map && typeof m.get('id') === 'string' && m.get('text') instanceof Y.Text,
        ),
      );
      (texts[0]!.get('text') as Y.Text).insert(0, 'Edited ');
      await until(async () => (await read(id)).markdown.startsWith('Edited # Plan'), 'the edit lands');
    });
  });
}
