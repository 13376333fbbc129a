import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import { blockArray } from '../src/domains/documents/model.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices } from '../src/services.ts';
import { dropPgSchema } from '../src/storage/db.ts';
import { DATABASES, PG_URL } from './support/databases.ts';
import { testFixture } from './support/fixture.ts';
import { connect, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok } from './support/results.ts';
import { createDocument, readDocument } from './support/documents.ts';
import { personEdit as personEditAs } from './support/replica.ts';

const DOC = '# Plan\n\nThe quick brown fox jumps.\n\nSecond paragraph here.\n\nThird one.\n';

interface ThreadView {
  thread_id: string;
  status: 'open' | 'resolved';
  anchor_excerpt?: string;
  body: string;
}

/** The live blocks of a replica, by a piece of their text. */
function blockWith(doc: Y.Doc, containing: string): { map: Y.Map<unknown>; index: number; text: Y.Text } {
  const all = blockArray(doc).toArray();
  const index = all.findIndex(
    (m) => m.get('deleted') !== true && (m.get('text') as Y.Text).toString().includes(containing),
  );
  assert.ok(index >= 0, `a block containing ${JSON.stringify(containing)}`);
  const map = all[index]!;
  return { map, index, text: map.get('text') as Y.Text };
}

for (const db of DATABASES) {
  describe(`comment anchors on live documents on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;
    let bob: ToolCaller;

    before(async () => {
      h = await setup(db);
      ada = await h.as('ada@acme.test');
      bob = await h.as('bob@acme.test');
    });
    after(() => h.close());

    const sql = () => h.services.deps.db;

    async function create(content = DOC): Promise<string> {
      return (await createDocument(ada, { title: 'Anchored', scope: 'org', content_markdown: content })).id;
    }

    async function markdown(id: string): Promise<string> {
      return (await readDocument(ada, id)).markdown;
    }

    async function anchor(id: string, excerpt: string, body = `on ${excerpt}`): Promise<string> {
      const s = ok(
        await ada.call('add_comment', { document_id: id, body_markdown: body, anchor_excerpt: excerpt }),
      );
      assert.equal(s.anchored, true, `anchored to ${JSON.stringify(excerpt)}`);
      return s.thread_id as string;
    }

    async function thread(id: string, threadId: string, includeResolved = false): Promise<ThreadView> {
      const r = await bob.call('read_comments', { document_id: id, include_resolved: includeResolved });
      const found = (ok(r).threads as ThreadView[]).find((t) => t.thread_id === threadId);
      assert.ok(found, `thread ${threadId} is listed`);
      return found;
    }

    /** A person's edit on a replica of the live document, sent through the live update path. */
    async function personEdit(id: string, change: (doc: Y.Doc) => void): Promise<void> {
      await personEditAs(h, 'bob@acme.test', id, change);
    }

    async function agentEdit(id: string, args: Record<string, unknown>): Promise<void> {
      ok(await ada.call('edit_document', { document_id: id, ...args }));
    }

    async function storedAnchor(threadId: string) {
      return sql()
        .selectFrom('threads')
        .select(['anchor_excerpt', 'anchor_start', 'anchor_rel_start', 'anchor_rel_end'])
        .where('id', '=', threadId)
        .executeTakeFirstOrThrow();
    }

    it('anchors a new thread to a passage of the live text and shows it', async () => {
      const id = await create();
      const t = await anchor(id, 'quick brown fox');
      const view = await thread(id, t);
      assert.equal(view.anchor_excerpt, 'quick brown fox');
      const stored = await storedAnchor(t);
      assert.equal(stored.anchor_excerpt, 'quick brown fox');
      assert.equal(stored.anchor_start, DOC.indexOf('quick brown fox'));
      assert.ok(stored.anchor_rel_start && stored.anchor_rel_end, 'stored as positions in the live model');
      const r = await bob.call('read_comments', { document_id: id });
      assert.match(r.text, /on “quick brown fox”/);
    });

    it('anchors to text a person typed that is not stored yet', async () => {
      const id = await create();
      await personEdit(id, (doc) => blockWith(doc, 'Third one.').text.insert(0, 'Freshly typed. '));
      const t = await anchor(id, 'Freshly typed.');
      assert.equal((await thread(id, t)).anchor_excerpt, 'Freshly typed.');
    });

    it('follows its passage when agents and people add and replace blocks before it', async () => {
      const id = await create();
      const t = await anchor(id, 'Second paragraph');
      await agentEdit(id, {
        mode: 'replace_section',
        section_excerpt: '# Plan',
        content_markdown: '# Plan, revised\n\nA new introduction.\n\nAnd another line of it.\n\n',
      });
      await personEdit(id, (doc) => {
        const fox = blockWith(doc, 'quick brown fox');
        const map = new Y.Map<unknown>();
        map.set('id', 'blk_person_inserted');
        map.set('text', new Y.Text('A paragraph Bob added.\n\n'));
        blockArray(doc).insert(fox.index, [map]);
      });
      await agentEdit(id, { mode: 'append', content_markdown: 'Second paragraph, not this one.\n' });
      assert.match(
        await markdown(id),
        /Bob added\.\n\nThe quick brown fox jumps\.\n\nSecond paragraph here\./,
      );
      // The quote now occurs twice, but the thread follows the passage it was made on.
      assert.equal((await thread(id, t)).anchor_excerpt, 'Second paragraph');
    });

    it('shows the current excerpt after a person edits inside it; text typed at either edge stays outside', async () => {
      const id = await create();
      const t = await anchor(id, 'quick brown fox');
      await personEdit(id, (doc) => {
        const { text } = blockWith(doc, 'quick brown fox');
        text.insert(text.toString().indexOf('brown'), 'very ');
        text.insert(text.toString().indexOf(' jumps'), ' cub');
        text.insert(text.toString().indexOf('quick'), 'Hey, ');
      });
      assert.match(await markdown(id), /The Hey, quick very brown fox cub jumps\./);
      assert.equal((await thread(id, t)).anchor_excerpt, 'quick very brown fox');
    });

    it('follows a passage that spans two blocks', async () => {
      const id = await create();
      const t = await anchor(id, 'jumps.\n\nSecond');
      await agentEdit(id, {
        mode: 'replace_section',
        section_excerpt: '# Plan',
        content_markdown: '# Retitled\n\n',
      });
      await personEdit(id, (doc) => blockWith(doc, 'Second paragraph').text.insert(0, '>> '));
      assert.equal((await thread(id, t)).anchor_excerpt, 'jumps.\n\n>> Second');
    });

    it('is found again by its quote when an agent rewrites the block it was in, and then follows that text', async () => {
      const id = await create();
      const t = await anchor(id, 'quick brown fox');
      const before = await storedAnchor(t);
      await agentEdit(id, {
        mode: 'replace_section',
        section_excerpt: 'The quick brown fox jumps.',
        content_markdown: 'Rewritten: a quick brown fox sleeps.\n\n',
      });
      assert.equal((await thread(id, t)).anchor_excerpt, 'quick brown fox');
      const after = await storedAnchor(t);
      assert.notEqual(after.anchor_rel_start, before.anchor_rel_start, 'the new place is stored');
      assert.equal(after.anchor_start, (await markdown(id)).indexOf('quick brown fox'));

      // From now on it follows the rewritten text.
      await personEdit(id, (doc) => {
        const { text } = blockWith(doc, 'sleeps');
        text.insert(text.toString().indexOf('brown'), 'red ');
      });
      assert.equal((await thread(id, t)).anchor_excerpt, 'quick red brown fox');
    });

    it('is found again by its quote after replace_all keeps the passage', async () => {
      const id = await create();
      const t = await anchor(id, 'Third one.');
      const version = ok(await ada.call('read_document', { document_id: id })).version;
      await agentEdit(id, {
        mode: 'replace_all',
        expected_version: version,
        content_markdown: '# New\n\nAll else changed.\n\nThird one.\n',
      });
      assert.equal((await thread(id, t)).anchor_excerpt, 'Third one.');
    });

    it('is shown unanchored when the rewrite no longer has the quote, and stays listed', async () => {
      const id = await create();
      const t = await anchor(id, 'Second paragraph here.', 'Needs work');
      await agentEdit(id, {
        mode: 'replace_section',
        section_excerpt: 'Second paragraph here.',
        content_markdown: 'Entirely different words.\n\n',
      });
      const view = await thread(id, t);
      assert.equal('anchor_excerpt' in view, false);
      assert.equal(view.body, 'Needs work');
      const r = await bob.call('read_comments', { document_id: id });
      assert.match(r.text, /on the whole artifact/);
    });

    it('is shown unanchored when the quote occurs twice after the rewrite', async () => {
      const id = await create();
      const t = await anchor(id, 'Third one.');
      await agentEdit(id, {
        mode: 'replace_section',
        section_excerpt: 'Third one.',
        content_markdown: 'Third one. Or rather: Third one.\n',
      });
      assert.equal('anchor_excerpt' in (await thread(id, t)), false);
    });

    it('is shown unanchored when a person deletes the passage', async () => {
      const id = await create();
      const t = await anchor(id, 'brown fox');
      await personEdit(id, (doc) => {
        const { text } = blockWith(doc, 'brown fox');
        text.delete(text.toString().indexOf('brown fox'), 'brown fox'.length);
      });
      assert.equal(await markdown(id), DOC.replace('brown fox', ''));
      assert.equal('anchor_excerpt' in (await thread(id, t)), false);
    });

    it('is shown unanchored when a person removes the block, and found again if the quote returns', async () => {
      const id = await create();
      const t = await anchor(id, 'Third one.');
      await personEdit(id, (doc) => blockArray(doc).delete(blockWith(doc, 'Third one.').index, 1));
      assert.equal('anchor_excerpt' in (await thread(id, t)), false);
      await agentEdit(id, { mode: 'append', content_markdown: 'Third one.\n' });
      assert.equal((await thread(id, t)).anchor_excerpt, 'Third one.');
    });

    it('shows the current excerpt of resolved threads with include_resolved', async () => {
      const id = await create();
      const t = await anchor(id, 'Second paragraph here.');
      ok(await ada.call('resolve_comment', { document_id: id, thread_id: t, resolved: true }));
      await personEdit(id, (doc) => {
        const { text } = blockWith(doc, 'Second paragraph');
        text.insert(text.toString().indexOf('here'), 'right ');
      });
      const view = await thread(id, t, true);
      assert.equal(view.status, 'resolved');
      assert.equal(view.anchor_excerpt, 'Second paragraph right here.');
    });

    it('takes up a thread stored with only an offset, then follows the text', async () => {
      const id = await create();
      const t = 'thr_00000000000000offsetonly0';
      const quote = 'Second paragraph';
      await sql()
        .insertInto('threads')
        .values({
          id: t,
          artifact_id: id,
          author_id: h.actor('ada@acme.test').personId,
          body: 'Older thread',
          anchor_excerpt: quote,
          anchor_start: DOC.indexOf(quote),
          anchor_rel_start: null,
          anchor_rel_end: null,
          status: 'open',
          resolved_by: null,
          resolved_at: null,
          created_at: Date.now(),
        })
        .execute();
      assert.equal((await thread(id, t)).anchor_excerpt, quote);
      const stored = await storedAnchor(t);
      assert.ok(
        stored.anchor_rel_start && stored.anchor_rel_end,
        'now stored as positions in the live model',
      );

      await agentEdit(id, {
        mode: 'replace_section',
        section_excerpt: '# Plan',
        content_markdown: '# P\n\n',
      });
      await personEdit(id, (doc) => {
        const { text } = blockWith(doc, 'Second paragraph');
        text.insert(text.toString().indexOf('paragraph'), 'big ');
      });
      assert.equal((await thread(id, t)).anchor_excerpt, 'Second big paragraph');
    });

    if (db.name === 'postgres') {
      it('is followed by a server process that loads the document afresh', async () => {
        const schema = `t_${randomBytes(6).toString('hex')}`;
        const first = await openServices({ databaseUrl: PG_URL, pgSchema: schema });
        const callers: ToolCaller[] = [];
        let second: Awaited<ReturnType<typeof openServices>> | undefined;
        try {
          const { workspaces } = await importFixture(first.deps, testFixture);
          const acme = workspaces.Acme!;
          const actor = {
            personId: acme.users['ada@acme.test']!,
            workspaceId: acme.id,
            scopes: new Set(SCOPES),
          };
          const one = await connect(first, actor);
          callers.push(one);
          const id = ok(
            await one.call('create_document', { title: 'Shared', scope: 'org', content_markdown: DOC }),
          ).document_id as string;
          const t = ok(
            await one.call('add_comment', {
              document_id: id,
              body_markdown: 'here',
              anchor_excerpt: 'quick brown fox',
            }),
          ).thread_id as string;
          ok(
            await one.call('edit_document', {
              document_id: id,
              mode: 'replace_section',
              section_excerpt: '# Plan',
              content_markdown: '# Plan\n\nInserted before.\n\n',
            }),
          );
          const live = await first.documents.store.open(id);
          const replica = new Y.Doc();
          Y.applyUpdate(replica, Y.encodeStateAsUpdate(live.doc));
          const { text } = blockWith(replica, 'quick brown fox');
          text.insert(text.toString().indexOf('fox'), 'little ');
          await first.documents.applyPersonUpdate(
            { ...actor, personId: acme.users['bob@acme.test']! },
            id,
            Y.encodeStateAsUpdate(replica, Y.encodeStateVector(live.doc)),
          );
          await first.documents.store.flush(id);

          second = await openServices({ databaseUrl: PG_URL, pgSchema: schema });
          const two = await connect(second, actor);
          callers.push(two);
          const threads = ok(await two.call('read_comments', { document_id: id })).threads as ThreadView[];
          assert.equal(threads.find((x) => x.thread_id === t)?.anchor_excerpt, 'quick brown little fox');
        } finally {
          for (const c of callers) await c.close();
          await first.storage.close();
          await second?.storage.close();
          await dropPgSchema(PG_URL, schema);
        }
      });
    }
  });
}
