import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { REFUSED } from '../src/collab/socket.ts';
import { collabTickets, USED_KEEP_MS } from '../src/collab/tickets.ts';
import { DATABASES } from './support/databases.ts';
import { blockTextIn, openLive, until, type Editor } from './support/collab.ts';

const DOC = '# Plan\n\nIntro.\n\n## Steps\n\nStep one.\n\nStep two.\n\n## End\n\nBye.\n';

for (const db of DATABASES) {
  describe(`the live socket on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    let adaToken: string;
    let bobToken: string;

    before(async () => {
      live = await openLive(db);
      adaToken = await live.tokenFor('ada@acme.test');
      bobToken = await live.tokenFor('bob@acme.test');
    });
    after(() => live.close());

    const docs = () => live.services().documents;
    const ada = () => live.h.actor('ada@acme.test');
    const acme = () => live.h.ids.Acme!;

    async function create(content = DOC): Promise<string> {
      const made = await docs().create(ada(), { title: 'Live', scope: 'org', content_markdown: content });
      return made.document_id;
    }
    const read = async (id: string) => docs().read(ada(), { document_id: id });
    const versions = async (id: string) => (await docs().versions(ada(), { document_id: id })).versions;
    /** The server's live copy, without storing anything (a read stores pending edits first). */
    const serverText = async (id: string) => (await docs().store.currentMarkdown(id, null)) ?? '';

    async function connected(id: string, token: string): Promise<Editor> {
      const editor = live.editor(id, token);
      await editor.ready;
      return editor;
    }

    /**
     * Everything the editor sent before now was handled: messages of one connection are handled
     * in order, so once another editor sees this one's next awareness, the server has the rest.
     */
    async function handled(editor: Editor, witness: Editor): Promise<void> {
      const mark = `m${Math.random()}`;
      editor.provider.setAwarenessField('mark', mark);
      await until(
        () => [...witness.provider.awareness!.getStates().values()].some((s) => s.mark === mark),
        'the witness sees the mark',
      );
    }

    it('gives a connecting editor the document read_document reads', async () => {
      const id = await create();
      const editor = await connected(id, bobToken);
      assert.equal(editor.text(), (await read(id)).markdown);
      assert.equal(editor.provider.authorizedScope, 'read-write');
    });

    it('stores a person’s edit in their name within two seconds of their last change', async () => {
      const id = await create();
      const before = (await versions(id)).length;
      const editor = await connected(id, bobToken);
      blockTextIn(editor.doc, 'Step one.').insert('Step one'.length, ', by Bob');
      await until(
        async () => (await serverText(id)).includes('Step one, by Bob.'),
        'the server has the edit',
      );
      const typed = Date.now();
      await until(async () => (await versions(id)).length > before, 'a version row', 4000);
      const stored = Date.now() - typed;
      assert.ok(stored <= 2500, `stored ${stored} ms after the change`);
      const [row] = await versions(id);
      assert.equal(row!.reason, 'edit');
      assert.equal(row!.author_label, 'Bob Stone');
      assert.ok((await read(id)).markdown.includes('Step one, by Bob.'));
      assert.equal(editor.acknowledged(), true);
    });

    it('lets read_document read a person’s edit at once', async () => {
      const id = await create();
      const editor = await connected(id, bobToken);
      blockTextIn(editor.doc, 'Bye.').insert(0, 'Good');
      await until(async () => (await serverText(id)).includes('GoodBye.'), 'the server has the edit');
      const r = await read(id);
      assert.ok(r.markdown.includes('GoodBye.'), r.markdown);
      // Reading stored it, so the version read is the one the next write checks.
      assert.equal((await versions(id))[0]!.doc_version, r.version);
    });

    it('brings an agent’s append to connected editors within a second', async () => {
      const id = await create();
      const editors = await Promise.all([connected(id, bobToken), connected(id, adaToken)]);
      const started = Date.now();
      await docs().edit(ada(), {
        document_id: id,
        mode: 'append',
        content_markdown: 'Added by the agent.\n',
      });
      await until(
        () => editors.every((e) => e.text().includes('Added by the agent.')),
        'editors see it',
        1000,
      );
      assert.ok(Date.now() - started < 1000);
      assert.equal(editors[0]!.text(), (await read(id)).markdown);
    });

    it('connects viewers, commenters and read-only tokens read-only, and changes nothing they send', async () => {
      const id = acme().artifacts.plan!;
      const before = await read(id);
      const rows = (await versions(id)).length;
      const readers = await Promise.all([
        connected(id, bobToken), // commenter
        connected(id, await live.tokenFor('cy@acme.test')), // viewer
        connected(id, await live.tokenFor('ada@acme.test', ['documents:read'])), // the owner, reading only
      ]);
      const owner = await connected(id, adaToken);
      for (const [i, reader] of readers.entries()) {
        assert.equal(reader.provider.authorizedScope, 'readonly');
        blockTextIn(reader.doc, 'Draft').insert(0, `Reader ${i} `);
        await handled(reader, owner);
      }
      assert.deepEqual(await read(id), before);
      assert.equal((await versions(id)).length, rows);
      assert.equal(owner.text(), before.markdown);
      for (const reader of readers) assert.equal(reader.acknowledged(), false, 'nothing acknowledged');
    });

    it('refuses a made-up id, another workspace’s document, a page and a document without a role alike', async () => {
      const dee = await live.tokenFor('dee@acme.test');
      const attempts = [
        live.editor('doc_made_up_0000000000000000', adaToken),
        live.editor(live.h.ids.Other!.artifacts.eve_doc!, adaToken),
        live.editor(acme().artifacts.landing!, adaToken),
        live.editor(acme().artifacts.plan!, dee),
      ];
      const reasons = await Promise.all(
        attempts.map((e) =>
          e.ready.then(
            () => 'connected',
            (r: Error) => r.message,
          ),
        ),
      );
      assert.deepEqual(reasons, [REFUSED.notFound, REFUSED.notFound, REFUSED.notFound, REFUSED.notFound]);
      const id = acme().artifacts.roadmap!;
      const wrong = await live.editor(id, 'tdm_not_a_token').ready.then(
        () => 'connected',
        (r: Error) => r.message,
      );
      assert.equal(wrong, REFUSED.credential);
      const automationsOnly = await live.tokenFor('ada@acme.test', ['automations:read']);
      const scoped = await live.editor(id, automationsOnly).ready.then(
        () => 'connected',
        (r: Error) => r.message,
      );
      assert.equal(scoped, REFUSED.scope);
    });

    it('brings two people typing into one block to the same text', async () => {
      const id = await create();
      const [a, b] = await Promise.all([connected(id, adaToken), connected(id, bobToken)]);
      const words = ['alpha', 'beta', 'gamma', 'delta'];
      for (const word of words) {
        blockTextIn(a.doc, 'Intro').insert(0, `${word} `);
        const t = blockTextIn(b.doc, 'Intro');
        t.insert(t.length - 1, ` ${word.toUpperCase()}`);
      }
      await until(
        () => a.text() === b.text() && words.every((w) => a.text().includes(w.toUpperCase())),
        'same text',
      ).catch(async (error: unknown) => {
        console.log({ a: a.text(), b: b.text(), server: await serverText(id) });
        throw error;
      });
      await until(async () => (await serverText(id)) === a.text(), 'the server has it too');
      assert.equal((await read(id)).markdown, a.text());
    });

    it('keeps a person’s edit in a section an agent replaces, reported in kept_blocks', async () => {
      const id = await create();
      const bob = await connected(id, bobToken);
      docs().hooks.beforeLanding = async () => {
        docs().hooks.beforeLanding = undefined;
        blockTextIn(bob.doc, 'Step one.').insert('Step one'.length, ', edited live');
        await until(async () => (await serverText(id)).includes('Step one, edited live.'), 'the edit landed');
      };
      const result = await docs().edit(ada(), {
        document_id: id,
        mode: 'replace_section',
        section_excerpt: 'Step one.\n\nStep two.',
        content_markdown: 'New steps.\n\n',
      });
      assert.deepEqual((result as { kept_blocks?: unknown }).kept_blocks, {
        count: 1,
        excerpts: ['Step one, edited live.'],
      });
      const expected =
        '# Plan\n\nIntro.\n\n## Steps\n\nStep one, edited live.\n\nNew steps.\n\n## End\n\nBye.\n';
      assert.equal((await read(id)).markdown, expected);
      await until(() => bob.text() === expected, 'the editor has the result');
    });

    it('shows the writing agent, for whom and where, while it writes', async () => {
      const id = await create();
      const bob = await connected(id, bobToken);
      const agents = () =>
        [...bob.provider.awareness!.getStates().values()].filter(
          (s) => (s.user as { agent?: boolean } | undefined)?.agent === true,
        );
      let seen: unknown[] = [];
      docs().hooks.beforeLanding = async () => {
        docs().hooks.beforeLanding = undefined;
        await until(() => agents().length === 1, 'the editor sees the agent');
        seen = agents();
      };
      await docs().edit(ada(), {
        document_id: id,
        mode: 'replace_section',
        section_excerpt: 'Bye.',
        content_markdown: 'Farewell.\n',
      });
      const [state] = seen as { user: Record<string, unknown>; writing: string[] }[];
      assert.deepEqual(state!.user, { name: 'Agent', agent: true, for: 'Ada Lovelace' });
      assert.equal(state!.writing.length, 1);
      await until(() => agents().length === 0, 'the agent is gone once the write is done');
    });

    it('gives people the name they signed in with, never an agent’s', async () => {
      const id = await create();
      const [a, b] = await Promise.all([connected(id, adaToken), connected(id, bobToken)]);
      b.provider.setAwarenessField('user', { name: 'Not Bob', agent: true, for: 'Ada', color: '#f00' });
      await until(
        () => [...a.provider.awareness!.getStates().values()].some((s) => s.user?.color === '#f00'),
        'Ada sees Bob',
      );
      const bob = [...a.provider.awareness!.getStates().values()].find((s) => s.user?.color === '#f00');
      assert.deepEqual(bob!.user, { name: 'Bob Stone', color: '#f00' });
    });

    it('shows an editor that reconnects after its connection dropped', async () => {
      const id = await create();
      const ada = await connected(id, adaToken);
      const first = await connected(id, bobToken);
      const sees = (mark: string) => () =>
        [...ada.provider.awareness!.getStates().values()].some((s) => s.mark === mark);
      first.provider.setAwarenessField('mark', 'before');
      await until(sees('before'), 'Ada sees Bob');
      // Bob's network drops; his editor connects again, the same replica and awareness.
      const socket = first.provider.configuration.websocketProvider;
      socket.disconnect();
      await until(() => !sees('before')(), 'Bob left');
      first.provider.setAwarenessField('mark', 'after');
      await socket.connect();
      await until(sees('after'), 'Ada sees Bob again');
    });

    it('keeps comment anchors on their text while people type before it', async () => {
      const id = await create();
      await live.services().comments.add(ada(), {
        document_id: id,
        body_markdown: 'Why two?',
        anchor_excerpt: 'Step two.',
      });
      const bob = await connected(id, bobToken);
      blockTextIn(bob.doc, 'Step two.').insert(0, 'Then: ');
      blockTextIn(bob.doc, 'Intro.').insert(0, 'A longer ');
      await until(async () => (await serverText(id)).includes('Then: Step two.'), 'the server has the edits');
      const { threads } = await live.services().comments.read(ada(), { document_id: id });
      assert.equal(threads[0]!.anchor_excerpt, 'Step two.');
    });

    it('opens a document for a signed-in browser with a one-minute ticket for that document only', async () => {
      const id = acme().artifacts.roadmap!;
      const [member] = await live.services().accounts.memberships('bob@acme.test');
      const { secret } = await live.services().sessions.create(member!);
      const origin = new URL(live.server.url).origin;
      const ticketFor = (documentId: string, cookie: string | null = `tandem_session=${secret}`) =>
        fetch(`${live.server.url}/api/collab/tickets`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', origin, ...(cookie ? { cookie } : {}) },
          body: JSON.stringify({ document_id: documentId }),
        });
      const answer = await ticketFor(id);
      assert.equal(answer.status, 200);
      const { ticket, expires_at } = (await answer.json()) as { ticket: string; expires_at: number };
      assert.ok(expires_at > Date.now() && expires_at <= Date.now() + 60_000);
      const editor = await connected(id, ticket);
      assert.equal(editor.provider.authorizedScope, 'read-write');

      const elsewhere = live.editor(acme().artifacts.plan!, ticket);
      await assert.rejects(elsewhere.ready, { message: REFUSED.credential });
      const tampered = `${ticket.slice(0, -3)}${ticket.endsWith('AAA') ? 'BBB' : 'AAA'}`;
      await assert.rejects(live.editor(id, tampered).ready, { message: REFUSED.credential });

      assert.equal((await ticketFor(id, null)).status, 401);
      const hidden = await ticketFor(acme().artifacts.landing!);
      const madeUp = await ticketFor('doc_made_up_0000000000000000');
      assert.equal(hidden.status, 404);
      assert.deepEqual(await hidden.json(), await madeUp.json());
    });

    it('opens one connection per ticket: used again, at once or later, it is refused as an invalid one', async () => {
      const id = await create();
      const bob = live.h.actor('bob@acme.test');
      const tickets = collabTickets(live.services().deps.db);
      const { ticket } = await tickets.issue(bob, id);
      const editor = await connected(id, ticket);
      assert.equal(editor.provider.authorizedScope, 'read-write');

      await assert.rejects(live.editor(id, ticket).ready, { message: REFUSED.credential });
      // Another spelling of the same signature (its unused low bits, or padding) is the same ticket.
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const respelled = ticket.slice(0, -1) + alphabet[alphabet.indexOf(ticket.at(-1)!) ^ 1]!;
      for (const again of [respelled, `${ticket}=`])
        await assert.rejects(live.editor(id, again).ready, { message: REFUSED.credential });
      await docs().edit(ada(), { document_id: id, mode: 'append', content_markdown: 'Still here.\n' });
      await until(() => editor.text().includes('Still here.'), 'the first connection stays open');

      // Two connections racing with one ticket: exactly one opens.
      const fresh = (await tickets.issue(bob, id)).ticket;
      const outcomes = await Promise.allSettled([live.editor(id, fresh).ready, live.editor(id, fresh).ready]);
      assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
      const refused = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
      assert.equal((refused?.reason as Error).message, REFUSED.credential);

      // What is kept of used tickets stays small: uses of tickets long expired are pruned.
      const sql = live.services().deps.db;
      const stale = Date.now() - USED_KEEP_MS - 1000;
      await sql.insertInto('collab_ticket_uses').values({ ticket: 'stale', expires_at: stale }).execute();
      const another = collabTickets(sql);
      assert.ok(await another.redeem((await another.issue(bob, id)).ticket, id));
      const left = await sql
        .selectFrom('collab_ticket_uses')
        .select('ticket')
        .where('ticket', '=', 'stale')
        .execute();
      assert.deepEqual(left, []);
    });

    it('makes a connection read-only when its role drops or the document is archived, and closes it when access ends', async () => {
      const id = await create();
      const sql = live.services().deps.db;
      await sql.updateTable('artifacts').set({ scope: 'user' }).where('id', '=', id).execute();
      await sql
        .insertInto('artifact_roles')
        .values({ artifact_id: id, person_id: live.h.actor('bob@acme.test').personId, role: 'editor' })
        .execute();
      const owner = await connected(id, adaToken);
      const bob = await connected(id, bobToken);
      blockTextIn(bob.doc, 'Intro.').insert(0, 'Editing. ');
      await until(async () => (await serverText(id)).includes('Editing. Intro.'), 'an editor’s edit lands');

      await sql.updateTable('artifact_roles').set({ role: 'viewer' }).where('artifact_id', '=', id).execute();
      await live.server.collab.recheck(id);
      blockTextIn(bob.doc, 'Bye.').insert(0, 'Viewing. ');
      await handled(bob, owner);
      assert.ok(!(await serverText(id)).includes('Viewing.'), 'a viewer’s edit does not land');

      await sql.updateTable('artifact_roles').set({ role: 'editor' }).where('artifact_id', '=', id).execute();
      await sql.updateTable('artifacts').set({ status: 'archived' }).where('id', '=', id).execute();
      await live.server.collab.recheck(id);
      blockTextIn(owner.doc, 'Bye.').insert(0, 'Archived. ');
      await handled(owner, bob);
      assert.ok(!(await serverText(id)).includes('Archived.'), 'nobody edits an archived document');

      const count = live.server.collab.connectionCount();
      await sql.deleteFrom('artifact_roles').where('artifact_id', '=', id).execute();
      await live.server.collab.recheck(id);
      assert.equal(live.server.collab.connectionCount(), count - 1, 'Bob is disconnected');
    });
  });
}

describe('the live documents kept in memory', () => {
  const db = DATABASES[0]!;
  let live: Awaited<ReturnType<typeof openLive>>;
  before(async () => {
    live = await openLive(db, { documents: { maxLoaded: 1 } });
  });
  after(() => live.close());

  it('keeps a document people are connected to, while the cap bounds those nobody is', async () => {
    const docs = live.services().documents;
    const ada = live.h.actor('ada@acme.test');
    const make = async (title: string) =>
      (await docs.create(ada, { title, scope: 'org', content_markdown: `# ${title}\n` })).document_id;
    const followed = await make('Followed');
    const editor = live.editor(followed, await live.tokenFor('bob@acme.test'));
    await editor.ready;
    for (const title of ['One', 'Two', 'Three']) await docs.read(ada, { document_id: await make(title) });
    await until(() => docs.store.loadedCount() === 2, 'one document nobody follows, and the followed one');
    const before = await docs.store.open(followed);
    await docs.edit(ada, { document_id: followed, mode: 'append', content_markdown: 'Still live.\n' });
    await until(() => editor.text().includes('Still live.'), 'the editor sees the write');
    assert.equal(await docs.store.open(followed), before, 'the same live document all along');
  });
});
