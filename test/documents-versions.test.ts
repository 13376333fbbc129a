import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as Y from 'yjs';
import { newId } from '../src/ids.ts';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople } from './support/people.ts';
import { ok, refused } from './support/results.ts';
import { createDocument, readDocument } from './support/documents.ts';
import { personUpdate as replicaUpdate } from './support/replica.ts';

interface VersionRow {
  version_id: string;
  doc_version: number;
  reason: 'agent_edit' | 'edit' | 'restore' | 'export' | 'named';
  label: string | null;
  pinned: boolean;
  author_label?: string;
  instruction?: string;
  created_at: number;
  kept_blocks?: { count: number; excerpts: string[] };
}

const NOT_FOUND = 'Tool failed: Artifact not found';
const NO_VERSIONS = 'No versions yet.';
const MADE_UP_DOC = 'doc_0000000000zzzzzzzzzzzzzzzz';
const ROW_FIELDS = ['version_id', 'doc_version', 'reason', 'label', 'pinned', 'created_at'];

for (const db of DATABASES) {
  describe(`get_document_versions on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;
    let bob: ToolCaller;
    let cy: ToolCaller;
    let dee: ToolCaller;
    let eve: ToolCaller;

    before(async () => {
      h = await setup(db);
      ({ ada, bob, cy, dee, eve } = await connectPeople(h));
    });
    after(() => h.close());

    const sql = () => h.services.deps.db;
    const art = (key: string) => acme(h).artifacts[key]!;

    /** The version rows, checking the text form and the fields every row carries on the way. */
    async function versions(caller: ToolCaller, id: string): Promise<VersionRow[]> {
      const r = await caller.call('get_document_versions', { document_id: id });
      const s = ok(r);
      assert.equal(s.document_id, id);
      const rows = s.versions as VersionRow[];
      if (rows.length === 0) assert.equal(r.text, NO_VERSIONS);
      else {
        const lines = r.text.split('\n');
        assert.equal(lines.length, rows.length, `one line per row:\n${r.text}`);
        rows.forEach((v, i) => {
          assert.ok(lines[i]!.includes(v.version_id), `line ${i} names its row: ${lines[i]}`);
          assert.ok(lines[i]!.includes(v.reason), `line ${i} gives the reason: ${lines[i]}`);
        });
      }
      for (const v of rows) {
        for (const field of ROW_FIELDS) assert.ok(field in v, `every row has ${field}`);
        assert.equal(typeof v.version_id, 'string');
        assert.ok(Number.isInteger(v.doc_version));
        assert.equal(typeof v.pinned, 'boolean');
        assert.ok(
          Number.isInteger(v.created_at) && v.created_at > Date.UTC(2020, 0, 1) && v.created_at <= Date.now(),
        );
      }
      assert.equal(new Set(rows.map((v) => v.version_id)).size, rows.length, 'version ids are distinct');
      for (let i = 1; i < rows.length; i++)
        assert.ok(rows[i - 1]!.created_at >= rows[i]!.created_at, 'newest first');
      return rows;
    }

    async function create(caller: ToolCaller, args: Record<string, unknown>): Promise<string> {
      return (await createDocument(caller, { title: 'Versioned', scope: 'org', ...args })).id;
    }

    async function edit(caller: ToolCaller, args: Record<string, unknown>) {
      return ok(await caller.call('edit_document', args));
    }

    async function markdown(id: string): Promise<{ text: string; version: number }> {
      const { markdown: text, version } = await readDocument(ada, id);
      return { text, version };
    }

    async function storedCheckpoints(id: string) {
      return sql()
        .selectFrom('checkpoints')
        .selectAll()
        .where('artifact_id', '=', id)
        .orderBy('id', 'desc')
        .execute();
    }

    /** A person's update made on a replica of the live document, as the live socket delivers it. */
    async function personUpdate(
      id: string,
      change: (blocks: Y.Array<Y.Map<unknown>>) => void,
    ): Promise<Uint8Array> {
      return replicaUpdate(h, id, (replica) => change(replica.getArray<Y.Map<unknown>>('blocks')));
    }

    async function personEdit(email: string, id: string, change: (blocks: Y.Array<Y.Map<unknown>>) => void) {
      await h.services.documents.applyPersonUpdate(h.actor(email), id, await personUpdate(id, change));
    }

    const textOf = (blocks: Y.Array<Y.Map<unknown>>, i: number) => blocks.get(i).get('text') as Y.Text;

    it('has no rows for a document nothing was written to', async () => {
      const id = await create(ada, {});
      assert.deepEqual(await versions(ada, id), []);
      assert.deepEqual(await versions(dee, id), []);
    });

    it('checkpoints every agent write before it lands, newest first', async () => {
      const started = Date.now();
      const id = await create(ada, { content_markdown: 'Intro.\n\nMiddle part.\n' });
      const texts: string[] = ['', 'Intro.\n\nMiddle part.\n'];

      const appended = await edit(bob, { document_id: id, mode: 'append', content_markdown: 'Appended.\n' });
      assert.equal(appended.new_version, 2);
      texts.push((await markdown(id)).text);

      const replaced = await edit(ada, {
        document_id: id,
        mode: 'replace_section',
        section_excerpt: 'Middle part.',
        content_markdown: 'New middle.\n\n',
      });
      assert.equal(replaced.new_version, 3);
      texts.push((await markdown(id)).text);

      const all = await edit(bob, {
        document_id: id,
        mode: 'replace_all',
        expected_version: 3,
        content_markdown: 'Everything new.\n',
      });
      assert.equal(all.new_version, 4);

      const rows = await versions(cy, id);
      assert.deepEqual(
        rows.map((v) => [v.reason, v.doc_version, v.author_label]),
        [
          ['agent_edit', 3, 'Bob Stone'],
          ['agent_edit', 2, 'Ada Lovelace'],
          ['agent_edit', 1, 'Bob Stone'],
          ['agent_edit', 0, 'Ada Lovelace'],
        ],
      );
      const instructions = rows.map((v) => v.instruction ?? '');
      assert.match(instructions[0]!, /edit_document/);
      assert.match(instructions[0]!, /replace_all/);
      assert.match(instructions[1]!, /edit_document/);
      assert.match(instructions[1]!, /replace_section/);
      assert.match(instructions[2]!, /edit_document/);
      assert.match(instructions[2]!, /append/);
      assert.match(instructions[3]!, /create_document/);
      for (const v of rows) {
        assert.equal(v.pinned, false);
        assert.equal(v.label, null);
        assert.equal(v.kept_blocks, undefined, 'no one edited during these writes');
        assert.ok(v.created_at >= started);
      }

      // Each row holds the document as it was at the version it captured, before the write.
      const stored = await storedCheckpoints(id);
      assert.deepEqual(
        stored.map((c) => [c.doc_version, c.content]),
        [
          [3, texts[3]],
          [2, texts[2]],
          [1, texts[1]],
          [0, texts[0]],
        ],
      );
      assert.deepEqual(
        stored.map((c) => c.id),
        rows.map((v) => v.version_id),
      );
    });

    it('checkpoints fill_empty too', async () => {
      const id = await create(ada, {});
      const s = await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: 'Filled.\n' });
      assert.equal(s.new_version, 1);
      const rows = await versions(ada, id);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.reason, 'agent_edit');
      assert.equal(rows[0]!.doc_version, 0);
      assert.match(rows[0]!.instruction ?? '', /edit_document.*fill_empty/);
    });

    it('leaves no row for refused writes or dry runs', async () => {
      const id = await create(ada, { content_markdown: 'Only text.\n' });
      const before = await versions(ada, id);
      assert.equal(before.length, 1);
      const attempts: Record<string, unknown>[] = [
        { mode: 'replace_all', expected_version: 0, content_markdown: 'x' },
        { mode: 'fill_empty', content_markdown: 'x' },
        { mode: 'replace_section', section_excerpt: 'not in there at all', content_markdown: 'x' },
        { mode: 'append', content_markdown: 'x', dry_run: true },
        { mode: 'replace_all', expected_version: 1, content_markdown: 'x', dry_run: true },
      ];
      for (const args of attempts) await ada.call('edit_document', { document_id: id, ...args });
      refused(
        await cy.call('edit_document', { document_id: art('plan'), mode: 'append', content_markdown: 'x' }),
        'Tool failed: This document is read-only for you',
      );
      assert.deepEqual(await versions(ada, id), before);
      assert.deepEqual(await versions(ada, art('plan')), []);
      assert.equal((await markdown(id)).version, 1);
    });

    it('records a person’s edits as edit rows once they are stored', async () => {
      const id = await create(ada, { content_markdown: 'Shared text.\n' });
      await personEdit('bob@acme.test', id, (blocks) => textOf(blocks, 0).insert(12, ' Bob adds this.'));
      assert.equal(await h.services.documents.store.flush(id), true);
      const rows = await versions(ada, id);
      assert.equal(rows.length, 2);
      const [edited, created] = rows;
      assert.equal(edited!.reason, 'edit');
      assert.equal(edited!.doc_version, 2, 'an edit row captures the version the edit made');
      assert.equal(edited!.author_label, 'Bob Stone');
      assert.equal(edited!.pinned, false);
      assert.equal(edited!.label, null);
      assert.ok(edited!.instruction);
      assert.equal(created!.reason, 'agent_edit');
      const stored = await storedCheckpoints(id);
      assert.equal(stored[0]!.content, 'Shared text. Bob adds this.\n');
      assert.deepEqual(await markdown(id), { text: 'Shared text. Bob adds this.\n', version: 2 });

      // The next agent write captures the version the person's edit made.
      await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Agent again.\n' });
      const after = await versions(ada, id);
      assert.deepEqual(
        after.map((v) => [v.reason, v.doc_version]),
        [
          ['agent_edit', 2],
          ['edit', 2],
          ['agent_edit', 0],
        ],
      );
    });

    it('coalesces edits within the quiet period into one row, without an author when several people edited', async () => {
      const id = await create(ada, { content_markdown: 'One.\n\nTwo.\n' });
      await personEdit('bob@acme.test', id, (blocks) => textOf(blocks, 0).insert(4, ' (bob)'));
      await personEdit('bob@acme.test', id, (blocks) => textOf(blocks, 0).insert(0, '» '));
      assert.equal(await h.services.documents.store.flush(id), true);
      const one = await versions(ada, id);
      assert.deepEqual(
        one.map((v) => [v.reason, v.doc_version, v.author_label]),
        [
          ['edit', 2, 'Bob Stone'],
          ['agent_edit', 0, 'Ada Lovelace'],
        ],
      );

      await personEdit('bob@acme.test', id, (blocks) => textOf(blocks, 1).insert(0, 'Bob: '));
      await personEdit('cy@acme.test', id, (blocks) => textOf(blocks, 1).insert(0, 'Cy: '));
      assert.equal(await h.services.documents.store.flush(id), true);
      assert.equal(await h.services.documents.store.flush(id), false, 'nothing left to store');
      const rows = await versions(ada, id);
      assert.equal(rows.length, 3);
      assert.equal(rows[0]!.reason, 'edit');
      assert.equal(rows[0]!.doc_version, 3);
      assert.equal(rows[0]!.author_label, undefined, 'no single author');
      assert.ok(rows[0]!.instruction);
    });

    it('names the human edits kept during an agent write in kept_blocks', async () => {
      const id = await create(ada, { content_markdown: 'Keep me.\n\nSecond block.\n' });
      const live = await h.services.documents.store.open(id);
      const update = await personUpdate(id, (blocks) => textOf(blocks, 0).insert(8, ' (Bob typed)'));
      const bobId = h.actor('bob@acme.test').personId;
      let sent = false;
      // Bob's edit arrives while the agent's replace_all is landing: just after it removed his block.
      const during = (tr: Y.Transaction) => {
        if (sent || tr.origin !== h.services.documents.store.agentOrigin) return;
        sent = true;
        void h.services.documents.store.applyPersonUpdate(id, bobId, update);
      };
      live.doc.on('afterTransaction', during);
      let result: Record<string, unknown>;
      try {
        result = await edit(ada, {
          document_id: id,
          mode: 'replace_all',
          expected_version: 1,
          content_markdown: 'Rewritten.\n',
        });
      } finally {
        live.doc.off('afterTransaction', during);
      }
      assert.ok(sent, 'the person edit was sent during the write');
      assert.deepEqual(result.kept_blocks, { count: 1, excerpts: ['Keep me. (Bob typed)'] });
      await h.services.documents.store.flush(id);

      const rows = await versions(ada, id);
      const agentRows = rows.filter((v) => v.reason === 'agent_edit');
      assert.equal(agentRows.length, 2);
      const [write, created] = agentRows;
      assert.equal(write!.doc_version, 1);
      assert.deepEqual(write!.kept_blocks, { count: 1, excerpts: ['Keep me. (Bob typed)'] });
      assert.equal(created!.kept_blocks, undefined);
      const r = await ada.call('get_document_versions', { document_id: id });
      const line = r.text.split('\n').find((l) => l.includes(write!.version_id));
      assert.match(line ?? '', /kept 1/);

      const text = (await markdown(id)).text;
      assert.ok(text.includes('Rewritten.'), text);
      assert.ok(text.includes('Keep me. (Bob typed)'), text);
      assert.ok(!text.includes('Second block.'), text);
    });

    it('lists the 20 most recent rows, newest first', async () => {
      const id = await create(ada, { content_markdown: 'Start.\n' });
      for (let i = 1; i <= 24; i++)
        await edit(ada, { document_id: id, mode: 'append', content_markdown: `Step ${i}.\n` });
      assert.equal((await storedCheckpoints(id)).length, 25);
      const rows = await versions(ada, id);
      assert.equal(rows.length, 20);
      assert.deepEqual(
        rows.map((v) => v.doc_version),
        Array.from({ length: 20 }, (_, i) => 24 - i),
      );
      const stored = await storedCheckpoints(id);
      assert.deepEqual(
        rows.map((v) => v.version_id),
        stored.slice(0, 20).map((c) => c.id),
      );
    });

    it('shows named, restore and export rows with their label and pin', async () => {
      const id = await create(ada, { content_markdown: 'Draft one.\n' });
      const at = Date.now();
      const rows: { reason: string; label: string | null; pinned: number; author: string | null }[] = [
        { reason: 'named', label: 'Launch copy', pinned: 1, author: h.actor('bob@acme.test').personId },
        { reason: 'export', label: null, pinned: 0, author: h.actor('ada@acme.test').personId },
        { reason: 'restore', label: null, pinned: 0, author: null },
      ];
      for (const [i, r] of rows.entries()) {
        await sql()
          .insertInto('checkpoints')
          .values({
            id: newId('ver'),
            artifact_id: id,
            doc_version: 1,
            reason: r.reason,
            label: r.label,
            pinned: r.pinned,
            author_id: r.author,
            instruction: null,
            content: 'Draft one.\n',
            kept_json: null,
            blocks_json: null,
            created_at: at + i,
          })
          .execute();
      }
      // The rows were stamped up to 2 ms ahead; list them once that time has come.
      await new Promise((resolve) => setTimeout(resolve, 5));
      const listed = await versions(cy, id);
      assert.equal(listed.length, 4);
      const [restore, exported, named] = listed;
      assert.equal(restore!.reason, 'restore');
      assert.equal(restore!.author_label, undefined, 'no author when none is known');
      assert.equal(restore!.instruction, undefined);
      assert.equal(exported!.reason, 'export');
      assert.equal(exported!.author_label, 'Ada Lovelace');
      assert.equal(exported!.pinned, false);
      assert.equal(named!.reason, 'named');
      assert.equal(named!.label, 'Launch copy');
      assert.equal(named!.pinned, true);
      assert.equal(named!.author_label, 'Bob Stone');
      assert.equal(named!.created_at, at);
      const r = await cy.call('get_document_versions', { document_id: id });
      const line = r.text.split('\n').find((l) => l.includes(named!.version_id))!;
      assert.match(line, /Launch copy/);
      assert.match(line, /pinned/);
    });

    it('answers for pages too, with the checkpoints write_page keeps', async () => {
      const made = ok(await ada.call('create_page', { title: 'Page', html: '<p>one</p>', scope: 'org' }));
      const pageId = made.page_id as string;
      assert.deepEqual(await versions(ada, pageId), []);
      ok(await bob.call('write_page', { page_id: pageId, html: '<p>two</p>', expected_version: 1 }));
      ok(await ada.call('write_page', { page_id: pageId, html: '<p>three</p>', expected_version: 2 }));
      // A refused write keeps nothing.
      await ada.call('write_page', { page_id: pageId, html: '<p>stale</p>', expected_version: 1 });
      const rows = await versions(dee, pageId);
      assert.deepEqual(
        rows.map((v) => [v.reason, v.doc_version, v.author_label]),
        [
          ['agent_edit', 2, 'Ada Lovelace'],
          ['agent_edit', 1, 'Bob Stone'],
        ],
      );
      for (const v of rows) assert.match(v.instruction ?? '', /write_page/);
      const stored = await storedCheckpoints(pageId);
      assert.deepEqual(
        stored.map((c) => c.content),
        ['<p>two</p>', '<p>one</p>'],
      );
      assert.deepEqual(await versions(ada, art('landing')), []);
    });

    it('answers for tables and archived artifacts', async () => {
      assert.deepEqual(await versions(dee, art('budget')), []);
      assert.deepEqual(await versions(ada, art('notes')), []);
      assert.deepEqual(await versions(dee, art('archived_page')), []);
    });

    it('lists only the rows of the document asked about', async () => {
      const a = await create(ada, { content_markdown: 'A.\n' });
      const b = await create(ada, { content_markdown: 'B.\n' });
      await edit(ada, { document_id: b, mode: 'append', content_markdown: 'More B.\n' });
      const rowsA = await versions(ada, a);
      assert.equal(rowsA.length, 1);
      const idsA = new Set(rowsA.map((v) => v.version_id));
      for (const v of await versions(ada, b)) assert.ok(!idsA.has(v.version_id));
      assert.equal((await versions(ada, b)).length, 2);
    });

    it('answers anyone with a role, and reads as not found for anyone else', async () => {
      const id = await create(ada, { scope: 'user', content_markdown: 'Private.\n' });
      await sql()
        .insertInto('artifact_roles')
        .values([
          { artifact_id: id, person_id: h.actor('bob@acme.test').personId, role: 'commenter' },
          { artifact_id: id, person_id: h.actor('cy@acme.test').personId, role: 'viewer' },
        ])
        .execute();
      for (const caller of [ada, bob, cy]) assert.equal((await versions(caller, id)).length, 1);
      const unreachable: [ToolCaller, unknown][] = [
        [dee, id],
        [eve, id],
        [cy, art('pod_page')],
        [dee, art('plan')],
        [ada, other(h).artifacts.eve_doc],
        [ada, MADE_UP_DOC],
        [ada, ''],
      ];
      for (const [caller, documentId] of unreachable)
        refused(await caller.call('get_document_versions', { document_id: documentId }), NOT_FOUND);
    });

    it('needs the documents:read scope', async () => {
      const writer = await h.as('ada@acme.test', ['documents:write']);
      refused(
        await writer.call('get_document_versions', { document_id: art('roadmap') }),
        'Tool failed: get_document_versions needs the documents:read scope, which this connection was not granted',
      );
    });
  });
}
