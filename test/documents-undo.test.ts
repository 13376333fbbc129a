import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from './support/databases.ts';
import { blockTextIn, openLive, until, type Editor } from './support/collab.ts';

const DOC = '# Plan\n\nIntro paragraph.\n\n## Steps\n\nStep one.\n\nStep two.\n\n## End\n\nClosing words.\n';

type Json = Record<string, unknown>;

for (const db of DATABASES) {
  describe(`seeing and undoing one agent write, on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    let adaToken: string;
    let bobToken: string;
    let eveToken: string;

    before(async () => {
      live = await openLive(db);
      adaToken = await live.tokenFor('ada@acme.test');
      bobToken = await live.tokenFor('bob@acme.test');
      eveToken = await live.tokenFor('eve@other.test');
    });
    after(() => live.close());

    const docs = () => live.services().documents;
    const ada = () => live.h.actor('ada@acme.test');
    const serverText = async (id: string) => (await docs().store.currentMarkdown(id, null)) ?? '';

    async function api(method: string, path: string, token = adaToken, body?: Json) {
      const response = await fetch(`${live.server.url}/api${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
      });
      return { status: response.status, body: (await response.json()) as Json };
    }

    async function create(scope = 'org'): Promise<string> {
      const made = await docs().create(ada(), { title: 'Undo me', scope, content_markdown: DOC });
      return made.document_id;
    }

    /** An agent write through the service, and its version row. */
    async function agentWrite(id: string, input: Json): Promise<{ versionId: string; version: number }> {
      const r = (await docs().edit(ada(), { document_id: id, ...input })) as { new_version: number };
      const rows = (await api('GET', `/documents/${id}/versions`)).body.versions as Json[];
      const row = rows.find((v) => v.reason === 'agent_edit' && v.made_version === r.new_version);
      assert.ok(row, `the write's row is listed: ${JSON.stringify(rows)}`);
      assert.equal(row.undoable, true);
      assert.equal(row.by, 'agent');
      return { versionId: row.version_id as string, version: r.new_version };
    }

    async function connected(id: string): Promise<Editor[]> {
      const editors = [live.editor(id, adaToken), live.editor(id, bobToken)];
      await Promise.all(editors.map((e) => e.ready));
      return editors;
    }

    async function converged(id: string, editors: Editor[]): Promise<string> {
      const text = await serverText(id);
      await until(() => editors.every((e) => e.text() === text), 'every editor shows the server text');
      return text;
    }

    it('takes out what the write added and keeps a later edit elsewhere, live in open editors', async () => {
      const id = await create();
      const editors = await connected(id);
      const { versionId, version } = await agentWrite(id, {
        mode: 'append',
        content_markdown: 'Agent paragraph A.\n\nAgent paragraph B.\n',
      });
      // Bob edits elsewhere after the write.
      blockTextIn(editors[1]!.doc, 'Step one.').insert(0, 'Bob: ');
      await until(async () => (await serverText(id)).includes('Bob: Step one.'), 'the server has Bob’s edit');

      const changes = await api('GET', `/documents/${id}/versions/${versionId}/changes`);
      assert.equal(changes.status, 200, JSON.stringify(changes.body));
      assert.deepEqual(
        (changes.body.added as string[]).map((s) => s.trim()),
        ['Agent paragraph A.', 'Agent paragraph B.'],
      );
      assert.deepEqual(changes.body.removed, []);
      assert.equal(changes.body.author_label, 'Agent');
      assert.equal(changes.body.for_label, 'Ada Lovelace');
      assert.equal(changes.body.doc_version, version);

      const undone = await api('POST', `/documents/${id}/versions/${versionId}/undo`);
      assert.equal(undone.status, 200, JSON.stringify(undone.body));
      assert.deepEqual(undone.body.kept, []);
      assert.equal(undone.body.undone_version, version);
      const text = await converged(id, editors);
      assert.equal(text, DOC.replace('Step one.', 'Bob: Step one.'));

      const rows = (await api('GET', `/documents/${id}/versions`)).body.versions as Json[];
      const restore = rows.find((v) => v.made_version === undone.body.new_version)!;
      assert.equal(restore.reason, 'restore');
      assert.equal(restore.instruction, `undid version ${version}`);
      assert.equal(restore.author_label, 'Ada Lovelace');
      assert.equal(restore.undoable, true);
    });

    it('puts back a replaced section at its place and keeps a new passage someone edited since', async () => {
      const id = await create();
      const editors = await connected(id);
      const { versionId } = await agentWrite(id, {
        mode: 'replace_section',
        section_excerpt: 'Step one.\n\nStep two.',
        content_markdown: 'New step X.\n\nNew step Y.\n\n',
      });
      await converged(id, editors);
      blockTextIn(editors[0]!.doc, 'New step Y.').insert(0, 'Edited: ');
      await until(async () => (await serverText(id)).includes('Edited: New step Y.'), 'the edit is in');

      const undone = await api('POST', `/documents/${id}/versions/${versionId}/undo`);
      assert.equal(undone.status, 200, JSON.stringify(undone.body));
      assert.deepEqual(undone.body.kept, ['Edited: New step Y.']);
      const text = await converged(id, editors);
      assert.equal(
        text,
        '# Plan\n\nIntro paragraph.\n\n## Steps\n\nStep one.\n\nStep two.\n\nEdited: New step Y.\n\n## End\n\nClosing words.\n',
      );
    });

    it('undoes a write older than the live session, and an undo is undone the same way', async () => {
      const id = await create();
      const { versionId } = await agentWrite(id, {
        mode: 'replace_section',
        section_excerpt: 'Intro paragraph.',
        content_markdown: 'A new introduction.\n\n',
      });
      const written = await serverText(id);
      // The document leaves memory: loading it again drops the blocks the write took out.
      assert.equal(await docs().store.unload(id), true);
      await docs().edit(ada(), { document_id: id, mode: 'append', content_markdown: 'Later agent text.\n' });

      const undone = await api('POST', `/documents/${id}/versions/${versionId}/undo`);
      assert.equal(undone.status, 200, JSON.stringify(undone.body));
      assert.equal(await serverText(id), DOC + 'Later agent text.\n');

      const rows = (await api('GET', `/documents/${id}/versions`)).body.versions as Json[];
      const undoRow = rows.find((v) => v.made_version === undone.body.new_version)!;
      const again = await api('POST', `/documents/${id}/versions/${undoRow.version_id as string}/undo`);
      assert.equal(again.status, 200, JSON.stringify(again.body));
      assert.equal(await serverText(id), written + 'Later agent text.\n');
    });

    it('lists the passages agents wrote in the last day, with who wrote them for whom', async () => {
      const id = await create();
      await agentWrite(id, { mode: 'append', content_markdown: 'Fresh agent words.\n' });
      const marks = await api('GET', `/documents/${id}/agent-blocks`);
      assert.equal(marks.status, 200, JSON.stringify(marks.body));
      const blocks = marks.body.blocks as { text: string; by_label: string }[];
      const fresh = blocks.find((b) => b.text.includes('Fresh agent words.'));
      assert.equal(fresh?.by_label, 'Agent for Ada Lovelace');
      // A day later, nothing is marked.
      await live.h.services.deps.db
        .updateTable('checkpoints')
        .set({ created_at: Date.now() - 25 * 3_600_000 })
        .where('artifact_id', '=', id)
        .execute();
      const later = await api('GET', `/documents/${id}/agent-blocks`);
      assert.deepEqual(later.body.blocks, []);
    });

    it('compares a version with now before anything changes', async () => {
      const id = await create();
      await docs().edit(ada(), { document_id: id, mode: 'append', content_markdown: 'Added later.\n' });
      const rows = (await api('GET', `/documents/${id}/versions`)).body.versions as Json[];
      const first = rows.find((v) => v.reason === 'agent_edit')!;
      const before = await serverText(id);
      const compared = await api(
        'GET',
        `/documents/${id}/versions/${first.version_id as string}/changes?against=now`,
      );
      assert.equal(compared.status, 200, JSON.stringify(compared.body));
      assert.deepEqual(compared.body.added, ['Added later.']);
      assert.deepEqual(compared.body.removed, []);
      assert.equal(await serverText(id), before, 'comparing changes nothing');
    });

    it('reads as not found to those who cannot open the document, and refuses bad input in one line', async () => {
      const id = await create('user');
      const { versionId } = await agentWrite(id, { mode: 'append', content_markdown: 'Private.\n' });
      for (const token of [bobToken, eveToken]) {
        const seen = await api('GET', `/documents/${id}/versions/${versionId}/changes`, token);
        assert.equal(seen.status, 404, JSON.stringify(seen.body));
        const undo = await api('POST', `/documents/${id}/versions/${versionId}/undo`, token);
        assert.equal(undo.status, 404, JSON.stringify(undo.body));
        const marks = await api('GET', `/documents/${id}/agent-blocks`, token);
        assert.equal(marks.status, 404, JSON.stringify(marks.body));
      }
      const before = await serverText(id);
      const unknown = await api('POST', `/documents/${id}/versions/ver_nope/undo`);
      assert.equal(unknown.status, 400);
      assert.match(String(unknown.body.message), /not one of this document’s versions/);
      const against = await api('GET', `/documents/${id}/versions/${versionId}/changes?against=later`);
      assert.equal(against.status, 400);
      assert.match(String(against.body.message), /against must be now or previous/);
      assert.equal(await serverText(id), before);
    });
  });
}
