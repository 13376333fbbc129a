import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import { LEASE_WAIT_MS } from '../src/domains/documents/lease.ts';
import { blockArray, liveBlocks } from '../src/domains/documents/model.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices } from '../src/services.ts';
import { dropPgSchema } from '../src/storage/db.ts';
import { DATABASES, PG_URL } from './support/databases.ts';
import { testFixture } from './support/fixture.ts';
import { connect, setup, type CallResult, type Harness, type ToolCaller } from './support/harness.ts';
import { ok, refused } from './support/results.ts';
import { createDocument, readDocument } from './support/documents.ts';
import { replicaOf, textIn } from './support/replica.ts';

const SELECTION_GONE =
  'Tool failed: selection_gone: the section you meant to replace was removed before the write landed; nothing was written';
const ANCHOR_GONE_STEP =
  'Someone removed the section while it was being written; do not add it again. Read the document to see what stands now.';
const KEPT_ONE = 'Kept 1 block that people edited during the write, next to the new text.';

const SECTION_DOC = '# Plan\n\nIntro.\n\n## Steps\n\nStep one.\n\nStep two.\n\n## End\n\nBye.\n';

const wrote = (n: number, mode: string, v: number) =>
  `Wrote ${n} characters (${mode}); the document is now at version ${v}.`;

for (const db of DATABASES) {
  describe(`documents edited live on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;

    before(async () => {
      h = await setup(db);
      ada = await h.as('ada@acme.test');
    });
    after(() => h.close());

    const sql = () => h.services.deps.db;
    const docs = () => h.services.documents;
    const bob = () => h.actor('bob@acme.test');

    async function create(content: string): Promise<{ id: string; version: number }> {
      return createDocument(ada, { title: 'Live', scope: 'org', content_markdown: content });
    }

    async function read(id: string, caller = ada): Promise<{ markdown: string; version: number }> {
      return readDocument(caller, id);
    }

    async function storedVersion(id: string): Promise<number> {
      const row = await sql()
        .selectFrom('artifacts')
        .select('version')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.version;
    }

    /**
     * Runs `run` inside the next agent write, once it has resolved its target and checkpointed
     * the document and before any of it lands; the write waits for it. Says whether it ran (and
     * stops waiting for a write once asked).
     */
    function duringNextWrite(run: () => Promise<unknown>): () => boolean {
      const hooks = docs().hooks;
      let ran = false;
      const hook = async () => {
        hooks.beforeLanding = undefined;
        ran = true;
        await run();
      };
      hooks.beforeLanding = hook;
      return () => {
        if (hooks.beforeLanding === hook) hooks.beforeLanding = undefined;
        return ran;
      };
    }

    /** A second replica of the live document, as a person's editor holds it. */
    async function replica(id: string) {
      const r = await replicaOf(h, id);
      return {
        ...r,
        /** Sends it the way the live socket does: role check, then the live model. */
        send: () => docs().applyPersonUpdate(bob(), id, r.update()),
      };
    }

    async function agentRow(id: string, instruction: string) {
      const s = ok(await ada.call('get_document_versions', { document_id: id }));
      const rows = s.versions as { instruction?: string; kept_blocks?: unknown; doc_version: number }[];
      const row = rows.find((r) => r.instruction === instruction);
      assert.ok(row, `a version row for ${instruction}`);
      return row;
    }

    describe('a person editing while an agent writes', () => {
      it('keeps an edit that lands in the section between the write resolving it and landing', async () => {
        const { id } = await create(SECTION_DOC);
        const person = await replica(id);
        textIn(person.doc, 'Step one.').insert('Step one'.length, ', edited by Bob');
        const landed = duringNextWrite(person.send);
        const r = await ada.call('edit_document', {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Step one. Step two.',
          content_markdown: 'New steps.\n\n',
        });
        assert.ok(landed(), 'the person’s edit landed during the write');
        const s = ok(r);
        const kept = { count: 1, excerpts: ['Step one, edited by Bob.'] };
        assert.deepEqual(s.kept_blocks, kept);
        assert.equal(r.text, `${wrote(12, 'replace_section', s.new_version as number)} ${KEPT_ONE}`);
        assert.equal(
          (await read(id)).markdown,
          '# Plan\n\nIntro.\n\n## Steps\n\nStep one, edited by Bob.\n\nNew steps.\n\n## End\n\nBye.\n',
        );
        assert.deepEqual((await agentRow(id, 'edit_document replace_section')).kept_blocks, kept);
      });

      it('keeps an edit from a replica synced before the write that lands after the agent’s transaction', async () => {
        const { id } = await create(SECTION_DOC);
        const person = await replica(id);
        textIn(person.doc, 'Step two.').insert('Step two'.length, ', reworded');
        const update = person.update();
        let sent: Promise<void> | undefined;
        const onTransaction = (tr: Y.Transaction) => {
          if (tr.origin === docs().store.agentOrigin && !sent)
            sent = docs().applyPersonUpdate(bob(), id, update);
        };
        const store = docs().store;
        const persist = store.persist;
        person.live.doc.on('afterTransaction', onTransaction);
        // The write is stored only once the person's update has landed.
        store.persist = async (...args) => {
          await sent;
          return persist(...args);
        };
        let r: CallResult;
        try {
          r = await ada.call('edit_document', {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Step one.\n\nStep two.',
            content_markdown: 'New steps.\n\n',
          });
        } finally {
          store.persist = persist;
          person.live.doc.off('afterTransaction', onTransaction);
        }
        assert.ok(sent, 'the person’s update was sent during the write');
        const s = ok(r);
        const kept = { count: 1, excerpts: ['Step two, reworded.'] };
        assert.deepEqual(s.kept_blocks, kept);
        assert.ok(r.text.endsWith(KEPT_ONE), r.text);
        assert.equal(
          (await read(id)).markdown,
          '# Plan\n\nIntro.\n\n## Steps\n\nStep two, reworded.\n\nNew steps.\n\n## End\n\nBye.\n',
        );
        assert.deepEqual((await agentRow(id, 'edit_document replace_section')).kept_blocks, kept);

        // The block the agent replaced is marked deleted, not dropped, while the document is open.
        const removed = blockArray(person.live.doc)
          .toArray()
          .filter((m) => m.get('deleted') === true)
          .map((m) => (m.get('text') as Y.Text).toString());
        assert.deepEqual(removed, ['Step one.\n\n']);
      });

      it('keeps a person’s edit during replace_all as well', async () => {
        const { id, version } = await create('Old one.\n\nOld two.\n');
        const person = await replica(id);
        textIn(person.doc, 'Old two.').insert(0, 'Still ');
        const landed = duringNextWrite(person.send);
        const s = ok(
          await ada.call('edit_document', {
            document_id: id,
            mode: 'replace_all',
            content_markdown: 'All new.\n',
            expected_version: version,
          }),
        );
        assert.ok(landed(), 'the person’s edit landed during the write');
        assert.deepEqual(s.kept_blocks, { count: 1, excerpts: ['Still Old two.'] });
        assert.equal((await read(id)).markdown, 'Still Old two.\nAll new.\n');
      });

      it('keeps an edit outside the section sent right after the call starts, next to the new text', async () => {
        const { id } = await create(SECTION_DOC);
        const person = await replica(id);
        textIn(person.doc, 'Bye.').insert(0, 'Good');
        const call = ada.call('edit_document', {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Step one.',
          content_markdown: 'First step.\n\n',
        });
        await person.send();
        ok(await call);
        assert.equal(
          (await read(id)).markdown,
          '# Plan\n\nIntro.\n\n## Steps\n\nFirst step.\n\nStep two.\n\n## End\n\nGoodBye.\n',
        );
      });

      it('keeps an edit made in the section while the call waits for the lease', async () => {
        const { id, version } = await create(SECTION_DOC);
        await sql()
          .insertInto('doc_leases')
          .values({ artifact_id: id, holder: 'lease_elsewhere', expires_at: Date.now() + 800 })
          .execute();
        const call = ada.call('edit_document', {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Step one. Step two.',
          content_markdown: 'New steps.\n\n',
          expected_version: version,
        });
        await new Promise((resolve) => setTimeout(resolve, 200));
        const person = await replica(id);
        textIn(person.doc, 'Step one.').insert(0, 'Bob says: ');
        await person.send();
        const s = ok(await call);
        assert.match((await read(id)).markdown, /Bob says: Step one\.\n\nNew steps\./);
        assert.deepEqual(s.kept_blocks, { count: 1, excerpts: ['Bob says: Step one.'] });
      });

      it('stores the write’s version row first when a person’s edit is stored while the write lands', async () => {
        const { id, version } = await create('# Log\n\nKept line.\n');
        const lines = Array.from({ length: 80 }, (_, i) => `Line ${i}.\n\n`).join('');
        const person = await replica(id);
        textIn(person.doc, 'Kept line.').insert(0, 'Still ');
        const store = docs().store;
        const rowsNow = () =>
          sql()
            .selectFrom('checkpoints')
            .select(['reason', 'doc_version', 'result_version', 'instruction', 'content'])
            .where('artifact_id', '=', id)
            .where('doc_version', '>=', version)
            .orderBy('id')
            .execute();
        let stored: Promise<Awaited<ReturnType<typeof rowsNow>>> | undefined;
        // Once the write's first step of blocks has landed, the person's edit arrives and is stored.
        const onTransaction = (tr: Y.Transaction) => {
          if (tr.origin !== store.agentOrigin || stored) return;
          if (!liveBlocks(person.live.doc).some((b) => b.text.startsWith('Line '))) return;
          stored = person
            .send()
            .then(() => store.flush(id))
            .then(rowsNow);
        };
        const persist = store.persist;
        person.live.doc.on('afterTransaction', onTransaction);
        store.persist = async (...args) => {
          await stored;
          return persist(...args);
        };
        let s: Record<string, unknown>;
        try {
          s = ok(
            await ada.call('edit_document', { document_id: id, mode: 'append', content_markdown: lines }),
          );
        } finally {
          store.persist = persist;
          person.live.doc.off('afterTransaction', onTransaction);
        }
        assert.ok(stored, 'the person’s edit was stored during the write');
        assert.deepEqual(
          (await stored).map((r) => [r.reason, r.doc_version, r.result_version]),
          [
            ['agent_edit', version, null],
            ['edit', version + 1, null],
          ],
          'the store that took in part of the write stored its row too, before its blocks',
        );
        assert.equal(s.new_version, version + 2);
        const rows = await rowsNow();
        assert.deepEqual(
          rows.map((r) => [r.reason, r.doc_version, r.result_version, r.instruction]),
          [
            ['agent_edit', version, version + 2, 'edit_document append'],
            ['edit', version + 1, null, 'live edit'],
          ],
          'the write’s row, stored with the first store of its blocks, then the person’s',
        );
        assert.equal(rows[0]!.content, '# Log\n\nKept line.\n', 'the text before the write');
        assert.equal((await read(id)).markdown, `# Log\n\nStill Kept line.\n${lines}`);
      });

      it('keeps an edit from a replica that had not seen the write, arriving just after it', async () => {
        const { id } = await create(SECTION_DOC);
        const person = await replica(id);
        textIn(person.doc, 'Step two.').insert(0, 'Typed: ');
        ok(
          await ada.call('edit_document', {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Step two.',
            content_markdown: 'Second step.\n\n',
          }),
        );
        // Sent from a replica that had not yet received the write.
        await person.send();
        assert.match((await read(id)).markdown, /Typed: Step two\./);
      });

      it('stores a person’s edit before a read, so the version read is the one the next write checks', async () => {
        const { id, version } = await create('One.\n\nTwo.\n');
        const person = await replica(id);
        textIn(person.doc, 'Two.').insert(0, 'Edited ');
        await person.send();
        const now = await read(id);
        assert.equal(now.markdown, 'One.\n\nEdited Two.\n');
        assert.equal(now.version, version + 1);
        assert.equal(await storedVersion(id), now.version);
        ok(
          await ada.call('edit_document', {
            document_id: id,
            mode: 'replace_all',
            content_markdown: 'Fresh.\n',
            expected_version: now.version,
          }),
        );
      });
    });

    describe('selection_gone', () => {
      it('refuses, writing nothing, when the section is removed between the call and the landing', async () => {
        const { id } = await create(SECTION_DOC);
        const person = await replica(id);
        const blocks = blockArray(person.doc);
        const at = blocks
          .toArray()
          .findIndex((m) => (m.get('text') as Y.Text).toString() === 'Step one.\n\n');
        blocks.delete(at, 2);
        const landed = duringNextWrite(person.send);
        const r = await ada.call('edit_document', {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Step one. Step two.',
          content_markdown: 'Rewritten steps.\n\n',
        });
        assert.ok(landed(), 'the person’s deletion landed during the write');
        refused(r, SELECTION_GONE);
        assert.deepEqual(r.structured, { error: 'selection_gone' });
        // Not turned into an append: only the person's deletion stands.
        const now = await read(id);
        assert.equal(now.markdown, '# Plan\n\nIntro.\n\n## Steps\n\n## End\n\nBye.\n');
        const rows = await sql()
          .selectFrom('checkpoints')
          .select(['reason', 'instruction'])
          .where('artifact_id', '=', id)
          .execute();
        assert.deepEqual(
          rows.filter((row) => row.instruction?.startsWith('edit_document')),
          [],
          'no version row is left for a write that did not happen',
        );
        assert.equal(now.version, await storedVersion(id));
      });
    });

    describe('anchor_gone', () => {
      const many = (count: number) => Array.from({ length: count }, (_, i) => `Line ${i}.\n\n`).join('');

      /** On the agent's first step of new blocks, a person deletes exactly those blocks. */
      async function deleteFirstStep(id: string, isNew: (text: string) => boolean) {
        const live = await docs().store.open(id);
        let sent: Promise<void> | undefined;
        const onTransaction = (tr: Y.Transaction) => {
          if (tr.origin !== docs().store.agentOrigin || sent) return;
          const fresh = liveBlocks(live.doc).filter((b) => isNew(b.text));
          if (fresh.length === 0) return;
          const doc = new Y.Doc();
          Y.applyUpdate(doc, Y.encodeStateAsUpdate(live.doc));
          const arr = blockArray(doc);
          for (let i = arr.length - 1; i >= 0; i--) {
            const map = arr.get(i);
            if (map.get('deleted') !== true && isNew((map.get('text') as Y.Text).toString()))
              arr.delete(i, 1);
          }
          // The store's update path, as the socket reaches it after its role check: it lands
          // before the write takes its next step.
          sent = docs().store.applyPersonUpdate(
            id,
            bob().personId,
            Y.encodeStateAsUpdate(doc, Y.encodeStateVector(live.doc)),
          );
        };
        live.doc.on('afterTransaction', onTransaction);
        return {
          async done() {
            live.doc.off('afterTransaction', onTransaction);
            assert.ok(sent, 'the person deleted the new blocks during the write');
            await sent;
          },
        };
      }

      it('stops an append whose written blocks a person removed, and says not to add them again', async () => {
        const { id } = await create('# Log\n\nKept line.\n');
        const content = many(100);
        const person = await deleteFirstStep(id, (text) => text.startsWith('Line '));
        const r = await ada.call('edit_document', {
          document_id: id,
          mode: 'append',
          content_markdown: content,
        });
        await person.done();
        const s = ok(r);
        assert.equal(s.stopped_early, true);
        assert.equal(s.stop_reason, 'anchor_gone');
        assert.equal(s.next_step, ANCHOR_GONE_STEP);
        const written = s.written_chars as number;
        assert.ok(written > 0 && written < content.length, `wrote part of the content (${written})`);
        assert.equal(written, many(32).length, 'the first step of blocks');
        assert.equal(
          r.text,
          `${wrote(written, 'append', s.new_version as number)} Stopped early: ${ANCHOR_GONE_STEP}`,
        );
        assert.equal((await read(id)).markdown, '# Log\n\nKept line.\n');
      });

      it('stops a replace_section whose new text a person removed while it landed', async () => {
        const { id } = await create(SECTION_DOC);
        const person = await deleteFirstStep(id, (text) => text.startsWith('Line '));
        const s = ok(
          await ada.call('edit_document', {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Step one. Step two.',
            content_markdown: many(80),
          }),
        );
        await person.done();
        assert.equal(s.stop_reason, 'anchor_gone');
        assert.equal(s.stopped_early, true);
        const markdown = (await read(id)).markdown;
        assert.equal(markdown, '# Plan\n\nIntro.\n\n## Steps\n\n## End\n\nBye.\n');
      });
    });

    describe('write lease', () => {
      it('lets writers queue for at least ten seconds', () => {
        assert.ok(LEASE_WAIT_MS >= 10_000, `LEASE_WAIT_MS is ${LEASE_WAIT_MS}`);
      });

      it('lands ten agents appending at once, one after another, none lost', async () => {
        const { id, version } = await create('# Log\n');
        const emails = ['ada@acme.test', 'bob@acme.test', 'cy@acme.test', 'dee@acme.test'];
        const agents = await Promise.all(
          Array.from({ length: 10 }, (_, i) => h.as(emails[i % emails.length]!)),
        );
        const results = await Promise.all(
          agents.map((agent, i) =>
            agent.call('edit_document', {
              document_id: id,
              mode: 'append',
              content_markdown: `Entry from agent ${i}.\n`,
            }),
          ),
        );
        const landed = results.map((r, i) => ({ i, version: ok(r).new_version as number }));
        assert.deepEqual(
          landed.map((l) => l.version).sort((a, b) => a - b),
          Array.from({ length: 10 }, (_, k) => version + 1 + k),
          'each write got its own version',
        );
        const inOrder = [...landed]
          .sort((a, b) => a.version - b.version)
          .map((l) => `Entry from agent ${l.i}.`);
        const now = await read(id);
        assert.equal(now.version, version + 10);
        assert.equal(now.markdown, `# Log\n${inOrder.join('\n')}\n`, 'in the order the writes landed');
        const rows = await sql()
          .selectFrom('checkpoints')
          .select('doc_version')
          .where('artifact_id', '=', id)
          .where('instruction', '=', 'edit_document append')
          .execute();
        assert.deepEqual(
          rows.map((row) => row.doc_version).sort((a, b) => a - b),
          Array.from({ length: 10 }, (_, k) => version + k),
          'each write started from the version the one before it left',
        );
      });

      it('takes over at once a lease whose holder died', async () => {
        const { id } = await create('Body.\n');
        await sql()
          .insertInto('doc_leases')
          .values({ artifact_id: id, holder: 'lease_gone', expires_at: Date.now() - 1000 })
          .execute();
        const started = Date.now();
        ok(await ada.call('edit_document', { document_id: id, mode: 'append', content_markdown: 'More.\n' }));
        assert.ok(Date.now() - started < 2000, 'no wait for an expired lease');
        assert.equal((await read(id)).markdown, 'Body.\nMore.\n');
      });

      it('waits for a lease another process holds briefly, then writes', async () => {
        const { id } = await create('Body.\n');
        await sql()
          .insertInto('doc_leases')
          .values({ artifact_id: id, holder: 'lease_elsewhere', expires_at: Date.now() + 1500 })
          .execute();
        const started = Date.now();
        ok(
          await ada.call('edit_document', { document_id: id, mode: 'append', content_markdown: 'Waited.\n' }),
        );
        assert.ok(Date.now() - started >= 1200, 'the write waited for the lease');
        assert.equal((await read(id)).markdown, 'Body.\nWaited.\n');
      });

      it('answers write_conflict with retry_after_seconds after the wait, writing nothing', async () => {
        const { id, version } = await create('Body.\n');
        await sql()
          .insertInto('doc_leases')
          .values({ artifact_id: id, holder: 'lease_elsewhere', expires_at: Date.now() + 10 * 60_000 })
          .execute();
        const started = Date.now();
        const pending = ada.call('edit_document', {
          document_id: id,
          mode: 'append',
          content_markdown: 'Late.\n',
        });

        // Reads and dry runs do not queue for the lease.
        const quick = Date.now();
        ok(await ada.call('read_document', { document_id: id }));
        const dry = ok(
          await ada.call('edit_document', {
            document_id: id,
            mode: 'append',
            content_markdown: 'x\n',
            dry_run: true,
          }),
        );
        assert.equal(dry.current_version, version);
        assert.ok(Date.now() - quick < 2000, 'a read and a dry run answer while a writer waits');

        const r = await pending;
        const waited = Date.now() - started;
        assert.equal(r.isError, true, `expected write_conflict, got: ${r.text}`);
        const s = r.structured as { error: string; retry_after_seconds: number };
        assert.equal(s.error, 'write_conflict');
        assert.ok(
          Number.isInteger(s.retry_after_seconds) && s.retry_after_seconds >= 1,
          'retry_after_seconds',
        );
        assert.deepEqual(Object.keys(s).sort(), ['error', 'retry_after_seconds']);
        assert.match(r.text, /^Tool failed: write_conflict: /);
        assert.ok(r.text.includes(`${s.retry_after_seconds} s`), r.text);
        // The writer gives up when its next pause (at most 200 ms) would pass the wait.
        assert.ok(waited >= LEASE_WAIT_MS - 250, `refused after ${waited} ms`);
        assert.ok(waited < LEASE_WAIT_MS + 5000, `refused after ${waited} ms`);
        assert.deepEqual(await read(id), { markdown: 'Body.\n', version });

        await sql().deleteFrom('doc_leases').where('artifact_id', '=', id).execute();
        ok(await ada.call('edit_document', { document_id: id, mode: 'append', content_markdown: 'Now.\n' }));
        assert.equal((await read(id)).markdown, 'Body.\nNow.\n');
      });

      if (db.name === 'postgres') {
        it('serialises writers in two server processes on one database, none lost', async () => {
          const schema = `t_${randomBytes(6).toString('hex')}`;
          const first = await openServices({ databaseUrl: PG_URL, pgSchema: schema });
          const second = await openServices({ databaseUrl: PG_URL, pgSchema: schema });
          const callers: ToolCaller[] = [];
          try {
            const { workspaces } = await importFixture(first.deps, testFixture);
            const acme = workspaces.Acme!;
            const actor = (email: string) => ({
              personId: acme.users[email]!,
              workspaceId: acme.id,
              scopes: new Set(SCOPES),
            });
            const one = await connect(first, actor('ada@acme.test'));
            const two = await connect(second, actor('bob@acme.test'));
            callers.push(one, two);
            const made = ok(
              await one.call('create_document', {
                title: 'Shared',
                scope: 'org',
                content_markdown: '# Log\n',
              }),
            );
            const id = made.document_id as string;
            const start = made.version as number;
            // Both processes have the document open before the writes.
            await read(id, one);
            await read(id, two);

            const results = await Promise.all(
              Array.from({ length: 10 }, (_, i) =>
                (i % 2 === 0 ? one : two).call('edit_document', {
                  document_id: id,
                  mode: 'append',
                  content_markdown: `Entry ${i}.\n`,
                }),
              ),
            );
            const landed = results.map((r, i) => ({ i, version: ok(r).new_version as number }));
            assert.deepEqual(
              landed.map((l) => l.version).sort((a, b) => a - b),
              Array.from({ length: 10 }, (_, k) => start + 1 + k),
            );
            const expected = `# Log\n${[...landed]
              .sort((a, b) => a.version - b.version)
              .map((l) => `Entry ${l.i}.`)
              .join('\n')}\n`;
            const stored = await first.deps.db
              .selectFrom('artifacts')
              .select(['content', 'version'])
              .where('id', '=', id)
              .executeTakeFirstOrThrow();
            assert.deepEqual(stored, { content: expected, version: start + 10 });
            // Each process reads what both wrote.
            assert.deepEqual(await read(id, one), { markdown: expected, version: start + 10 });
            assert.deepEqual(await read(id, two), { markdown: expected, version: start + 10 });
          } finally {
            for (const c of callers) await c.close();
            await first.storage.close();
            await second.storage.close();
            await dropPgSchema(PG_URL, schema);
          }
        });
      }
    });
  });
}
