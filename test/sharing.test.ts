import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { JSDOM } from 'jsdom';
import { REFUSED } from '../src/collab/socket.ts';
import { documentHtml } from '../src/http/routes/sharing.ts';
import { unpackText } from '../src/storage/packed.ts';
import { DATABASES } from './support/databases.ts';
import { blockTextIn, openLive, until, type Editor } from './support/collab.ts';

for (const db of DATABASES) {
  describe(`sharing and export on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    const tokens = new Map<string, string>();

    before(async () => {
      live = await openLive(db);
      for (const email of ['ada@acme.test', 'bob@acme.test', 'cy@acme.test', 'dee@acme.test']) {
        tokens.set(email, await live.tokenFor(email));
      }
    });
    after(() => live.close());

    const services = () => live.services();
    const actor = (email: string) => live.h.actor(email);
    const personId = (email: string) => actor(email).personId;

    /** A request to the JSON API as this person (a personal access token). */
    async function api(email: string, method: string, path: string, body?: unknown) {
      const response = await fetch(new URL(`/api${path}`, live.server.url), {
        method,
        headers: {
          authorization: `Bearer ${tokens.get(email)}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await response.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return {
        status: response.status,
        json: json as Record<string, unknown>,
        text,
        headers: response.headers,
      };
    }

    async function ownDocument(
      markdown = '# Notes\n\nFirst line.\n',
      title = 'Shared notes',
    ): Promise<string> {
      const made = await services().documents.create(actor('bob@acme.test'), {
        title,
        scope: 'user',
        content_markdown: markdown,
      });
      return made.document_id;
    }
    const share = (id: string, body: unknown, as = 'bob@acme.test') =>
      api(as, 'PUT', `/artifacts/${id}/sharing`, body);

    it('shows sharing only to its owner and admins; everyone else reads it as not found', async () => {
      const id = await ownDocument();
      await share(id, {
        scope: 'user',
        people: [{ user_id: personId('cy@acme.test'), role: 'commenter' }],
      });
      const owner = await api('bob@acme.test', 'GET', `/artifacts/${id}/sharing`);
      assert.equal(owner.status, 200);
      assert.deepEqual(owner.json, {
        scope: 'user',
        scope_role: 'editor',
        people: [{ user_id: personId('cy@acme.test'), name: 'Cy Young', role: 'commenter' }],
      });
      const admin = await api('ada@acme.test', 'GET', `/artifacts/${id}/sharing`);
      assert.equal(admin.status, 404, 'an admin who cannot open it does not see its sharing');
      const made = await api('bob@acme.test', 'GET', '/artifacts/doc_made_up/sharing');
      for (const [email, method] of [
        ['cy@acme.test', 'GET'],
        ['cy@acme.test', 'PUT'],
        ['dee@acme.test', 'GET'],
      ] as const) {
        const r = await api(
          email,
          method,
          `/artifacts/${id}/sharing`,
          method === 'PUT' ? { scope: 'org' } : undefined,
        );
        assert.equal(r.status, 404, `${email} ${method}`);
        assert.deepEqual(r.json, made.json, 'the same answer as a made-up id');
      }
      // An admin who can open it may share it.
      await share(id, { scope: 'org', scope_role: 'viewer', people: [] });
      assert.equal((await api('ada@acme.test', 'GET', `/artifacts/${id}/sharing`)).status, 200);
      const byAdmin = await share(id, { scope: 'user', people: [] }, 'ada@acme.test');
      assert.equal(byAdmin.status, 200);
      assert.equal((await api('ada@acme.test', 'GET', `/artifacts/${id}/sharing`)).status, 404);
    });

    it('refuses a wrong body in one sentence and changes nothing', async () => {
      const id = await ownDocument();
      const before = await api('bob@acme.test', 'GET', `/artifacts/${id}/sharing`);
      const wrong: [unknown, RegExp][] = [
        [{ scope: 'everyone' }, /^scope must be user, pod or org$/],
        [{ scope: 'org', scope_role: 'owner' }, /^scope_role must be editor, commenter or viewer$/],
        [{ scope: 'pod' }, /^pod_id is required for scope pod$/],
        [{ scope: 'pod', pod_id: live.h.ids.Acme!.pods.ops }, /^pod_id must be a pod the owner belongs to$/],
        [{ scope: 'user', people: [{ user_id: personId('bob@acme.test'), role: 'viewer' }] }, /owner/],
        [{ scope: 'user', people: [{ user_id: personId('cy@acme.test'), role: 'owner' }] }, /role must be/],
        [
          {
            scope: 'user',
            people: [
              { user_id: personId('cy@acme.test'), role: 'viewer' },
              { user_id: personId('cy@acme.test'), role: 'editor' },
            ],
          },
          /named twice/,
        ],
        [
          { scope: 'user', people: [{ user_id: live.h.actor('eve@other.test').personId, role: 'viewer' }] },
          /not in this workspace/,
        ],
      ];
      for (const [body, message] of wrong) {
        const r = await share(id, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.match(String(r.json.message), message);
        assert.ok(!String(r.json.message).includes('\n'));
      }
      assert.deepEqual((await api('bob@acme.test', 'GET', `/artifacts/${id}/sharing`)).json, before.json);
    });

    it('gives each audience its role at once, through the tools too, and takes it away', async () => {
      const id = await ownDocument();
      const cy = await live.h.as('cy@acme.test');
      const dee = await live.h.as('dee@acme.test');
      const notFound = async (caller: typeof cy) => {
        const r = await caller.call('read_document', { document_id: id });
        assert.ok(r.isError);
        assert.match(r.text, /Artifact not found/);
      };
      await notFound(cy);
      await notFound(dee);

      // Everyone in the workspace may comment.
      await share(id, { scope: 'org', scope_role: 'commenter', people: [] });
      assert.ok(!(await dee.call('read_document', { document_id: id })).isError);
      assert.ok(!(await dee.call('add_comment', { document_id: id, body_markdown: 'Looks good.' })).isError);
      const write = await dee.call('edit_document', {
        document_id: id,
        mode: 'append',
        content_markdown: 'Dee was here.\n',
      });
      assert.ok(write.isError, 'a commenter does not write');
      const listed = await dee.call('list_documents', { scope: 'org' });
      const row = (listed.structured?.documents as { document_id: string; role: string }[]).find(
        (d) => d.document_id === id,
      );
      assert.equal(row?.role, 'commenter');

      // The Design pod (Bob and Ada) may view; Cy is added by name as an editor.
      const design = live.h.ids.Acme!.pods.design!;
      await share(id, {
        scope: 'pod',
        pod_id: design,
        scope_role: 'viewer',
        people: [{ user_id: personId('cy@acme.test'), role: 'editor' }],
      });
      await notFound(dee);
      const ada = await live.h.as('ada@acme.test');
      assert.ok(!(await ada.call('read_document', { document_id: id })).isError);
      assert.ok((await ada.call('add_comment', { document_id: id, body_markdown: 'Hm.' })).isError);
      assert.ok(
        !(await cy.call('edit_document', { document_id: id, mode: 'append', content_markdown: 'Cy.\n' }))
          .isError,
      );

      // Only people added, and nobody added: only Bob.
      await share(id, { scope: 'user', people: [] });
      await notFound(cy);
      await notFound(ada);
      const sharing = await api('bob@acme.test', 'GET', `/artifacts/${id}/sharing`);
      assert.deepEqual(sharing.json, { scope: 'user', scope_role: 'editor', people: [] });
    });

    it('drops notifications about what a person can no longer open', async () => {
      const id = await ownDocument();
      await share(id, { scope: 'user', people: [{ user_id: personId('ada@acme.test'), role: 'viewer' }] });
      const bob = await live.h.as('bob@acme.test');
      const said = await bob.call('add_comment', { document_id: id, body_markdown: '@ada a secret plan' });
      assert.equal(said.structured?.notified, 1);
      const about = async () =>
        (await services().notifications.list(actor('ada@acme.test'))).filter((n) => n.artifact_id === id);
      assert.equal((await about()).length, 1);
      await share(id, { scope: 'user', people: [] });
      assert.deepEqual(await about(), []);
      const inbox = await api('ada@acme.test', 'GET', '/notifications');
      assert.ok(!inbox.text.includes('a secret plan'));
    });

    async function connected(id: string, email: string): Promise<Editor> {
      const editor = live.editor(id, tokens.get(email)!);
      await editor.ready;
      return editor;
    }

    it('makes an editor read-only on an open socket, and disconnects one who loses access, at once', async () => {
      const id = await ownDocument('# Live\n\nIntro.\n\nBye.\n');
      await share(id, { scope: 'user', people: [{ user_id: personId('cy@acme.test'), role: 'editor' }] });
      const owner = await connected(id, 'bob@acme.test');
      const cy = await connected(id, 'cy@acme.test');
      const told: string[] = [];
      cy.provider.on('stateless', ({ payload }: { payload: string }) => told.push(payload));
      let closedWith: string | undefined;
      cy.provider.on('close', ({ event }: { event: { reason: string } }) => (closedWith = event.reason));
      blockTextIn(cy.doc, 'Intro.').insert(0, 'Cy edits. ');
      const serverText = () => services().documents.store.currentMarkdown(id, null);
      await until(async () => (await serverText()).includes('Cy edits.'), 'an editor’s edit lands');

      const started = Date.now();
      await share(id, { scope: 'user', people: [{ user_id: personId('cy@acme.test'), role: 'commenter' }] });
      await until(
        () => told.includes(JSON.stringify({ access: 'readonly' })),
        'Cy is told he is read-only',
        2000,
      );
      const toldAfter = Date.now() - started;
      assert.ok(toldAfter < 2000, `told within ${toldAfter} ms`);
      blockTextIn(cy.doc, 'Bye.').insert(0, 'Not stored. ');
      blockTextIn(owner.doc, 'Intro.').insert(0, 'Owner. ');
      await until(() => blockTextIn(cy.doc, 'Intro.').toString().includes('Owner.'), 'Cy still follows');
      assert.ok(!(await serverText()).includes('Not stored.'), 'a commenter’s edit does not land');

      await share(id, { scope: 'user', people: [{ user_id: personId('cy@acme.test'), role: 'editor' }] });
      await until(() => told.includes(JSON.stringify({ access: 'read-write' })), 'Cy may edit again', 2000);

      const count = live.server.collab.connectionCount();
      await share(id, { scope: 'user', people: [] });
      await until(() => closedWith === REFUSED.notFound, 'Cy is disconnected', 2000);
      assert.equal(live.server.collab.connectionCount(), count - 1);
      const ticket = await api('cy@acme.test', 'POST', '/collab/tickets', { document_id: id });
      assert.equal(ticket.status, 404, 'and cannot connect again');
    });

    it('never offers a socket for a table or a page', async () => {
      const acme = live.h.ids.Acme!;
      for (const id of [acme.artifacts.landing!, acme.artifacts.budget!]) {
        const r = await api('ada@acme.test', 'POST', '/collab/tickets', { document_id: id });
        assert.equal(r.status, 404);
      }
    });

    describe('export', () => {
      const versionsOf = async (email: string, id: string) => {
        const caller = await live.h.as(email);
        const r = await caller.call('get_document_versions', { document_id: id });
        return r.structured?.versions as {
          version_id: string;
          doc_version: number;
          reason: string;
          author_label?: string;
        }[];
      };
      const lastExport = async (id: string) =>
        services()
          .deps.db.selectFrom('checkpoints')
          .selectAll()
          .where('artifact_id', '=', id)
          .where('reason', '=', 'export')
          .orderBy('id', 'desc')
          .executeTakeFirstOrThrow();

      async function readWhole(email: string, id: string) {
        const caller = await live.h.as(email);
        const r = await caller.call('read_document', { document_id: id });
        assert.equal(r.structured?.truncated, false);
        return { markdown: String(r.structured?.markdown), version: Number(r.structured?.version) };
      }

      it('exports a document as Markdown: the file is what read_document returns at that version', async () => {
        const id = await ownDocument(
          '# Budget notes\n\n- one\n- two\n\n**Bold** and `code`.\n',
          'Notes: Q3/Q4',
        );
        await share(id, { scope: 'user', people: [{ user_id: personId('cy@acme.test'), role: 'viewer' }] });
        // Edits made live and not stored yet are part of the export.
        const editor = await connected(id, 'bob@acme.test');
        blockTextIn(editor.doc, 'Bold').insert(0, 'Typed live. ');
        await until(
          async () => (await services().documents.store.currentMarkdown(id, null)).includes('Typed live.'),
          'the edit reached the server',
        );
        const file = await api('cy@acme.test', 'GET', `/artifacts/${id}/export?format=markdown`);
        assert.equal(file.status, 200);
        assert.match(file.headers.get('content-type') ?? '', /^text\/markdown/);
        assert.match(
          file.headers.get('content-disposition') ?? '',
          /^attachment; filename\*=UTF-8''Notes%20Q3Q4\.md$/,
        );
        const read = await readWhole('cy@acme.test', id);
        assert.ok(file.text.includes('Typed live. **Bold**'));
        assert.equal(file.text, read.markdown);
        const row = await lastExport(id);
        assert.equal(row.doc_version, read.version);
        assert.equal(unpackText(row.content!), file.text);
        const versions = await versionsOf('cy@acme.test', id);
        const shown = versions.find((v) => v.version_id === row.id);
        assert.ok(shown, 'the export row appears in get_document_versions');
        assert.equal(shown.reason, 'export');
        assert.equal(shown.doc_version, read.version);
        assert.equal(shown.author_label, 'Cy Young');
      });

      it('exports a document as HTML: its markdown at that version, rendered as the read view does', async () => {
        const id = await ownDocument(
          '# Plan <b>x</b>\n\n1. first\n2. second\n\n<script>alert(1)</script>\n\n[home](/)\n',
        );
        const file = await api('bob@acme.test', 'GET', `/artifacts/${id}/export?format=html`);
        assert.equal(file.status, 200);
        assert.match(file.headers.get('content-type') ?? '', /^text\/html/);
        assert.match(file.headers.get('content-security-policy') ?? '', /sandbox/);
        const read = await readWhole('bob@acme.test', id);
        assert.equal(
          file.text,
          await documentHtml('Shared notes', read.markdown, `${new URL(live.server.url).origin}/`),
        );
        const dom = new JSDOM(file.text).window.document;
        assert.equal(dom.title, 'Shared notes');
        assert.equal(dom.querySelector('h1')?.textContent, 'Plan x');
        assert.equal(dom.querySelectorAll('ol li').length, 2);
        assert.equal(dom.querySelector('script'), null);
        const row = await lastExport(id);
        assert.equal(row.doc_version, read.version);
        assert.equal(unpackText(row.content!), read.markdown);
        const shown = (await versionsOf('bob@acme.test', id)).find((v) => v.version_id === row.id);
        assert.equal(shown?.reason, 'export');
        assert.equal(shown?.author_label, 'Bob Stone');
      });

      it('exports a page as HTML: exactly what read_page returns at that version', async () => {
        const acme = live.h.ids.Acme!;
        const id = acme.artifacts.landing!;
        const file = await api('cy@acme.test', 'GET', `/artifacts/${id}/export?format=html`);
        assert.equal(file.status, 200);
        const caller = await live.h.as('cy@acme.test');
        const page = await caller.call('read_page', { page_id: id });
        assert.equal(file.text, page.structured?.html);
        const row = await lastExport(id);
        assert.equal(row.doc_version, page.structured?.version);
        const shown = (await versionsOf('cy@acme.test', id)).find((v) => v.version_id === row.id);
        assert.equal(shown?.reason, 'export');
        assert.equal(shown?.author_label, 'Cy Young');

        const markdown = await api('cy@acme.test', 'GET', `/artifacts/${id}/export?format=markdown`);
        assert.equal(markdown.status, 400);
        assert.match(String(markdown.json.message), /^A page exports as HTML only; use format=html$/);
      });

      it('is not found for anyone who cannot open it, and records nothing', async () => {
        const id = await ownDocument();
        const before = (await versionsOf('bob@acme.test', id)).length;
        const made = await api('dee@acme.test', 'GET', '/artifacts/doc_made_up/export?format=markdown');
        const r = await api('dee@acme.test', 'GET', `/artifacts/${id}/export?format=markdown`);
        assert.equal(r.status, 404);
        assert.deepEqual(r.json, made.json);
        const wrong = await api('bob@acme.test', 'GET', `/artifacts/${id}/export?format=pdf`);
        assert.equal(wrong.status, 400);
        assert.equal((await versionsOf('bob@acme.test', id)).length, before);
      });
    });
  });
}
