import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Lexer, type Tokens } from 'marked';
import * as Y from 'yjs';
import { newId } from '../src/ids.ts';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople, personId } from './support/people.ts';
import { ok, refused, refusedWithPrefix } from './support/results.ts';
import { createDocument } from './support/documents.ts';
import { personEdit as personEditAs } from './support/replica.ts';

interface ReadResult {
  document_id: string;
  title: string;
  type: 'document' | 'html_app' | 'table';
  markdown: string;
  version: number;
  size_chars: number;
  offset: number;
  truncated: boolean;
  archived: boolean;
  parent?: { conversation_id: string };
}

interface VersionRow {
  version_id: string;
  doc_version: number;
  reason: string;
  label: string | null;
  pinned: boolean;
  author_label?: string;
  instruction?: string;
  created_at: number;
}

const NOT_FOUND = 'Tool failed: Artifact not found';
const BOTH = 'Tool failed: Pass either conversation_id or scope, not both';
const BAD_SCOPE = 'Tool failed: scope must be user, pod or org';
const POD_REQUIRED = 'Tool failed: pod_id is required for scope pod';
const ROOM_ARCHIVED = 'That conversation is archived or gone, so nothing was created.';
const NO_TITLE = 'Tool failed: title must be a non-empty string';
const MADE_UP_DOC = 'doc_0000000000zzzzzzzzzzzzzzzz';
const MADE_UP_POD = 'pod_0000000000zzzzzzzzzzzzzzzz';
const MADE_UP_ROOM = 'cnv_0000000000zzzzzzzzzzzzzzzz';
const WINDOW_MAX = 24_000;
const CAP = 60_000;

/** A text with astral characters (each a surrogate pair) next to each other and to plain ones. */
const EMOJI = 'a😀b😀😀c👍🏽d🎉\n';
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

async function read(caller: ToolCaller, args: Record<string, unknown>): Promise<ReadResult> {
  return ok(await caller.call('read_document', args)) as unknown as ReadResult;
}

/** 50,000 characters in lines of 50, so every window boundary falls inside a line. */
const LONG = Array.from(
  { length: 1000 },
  (_, i) => `Line ${String(i).padStart(4, '0')} ${'x'.repeat(39)}\n`,
).join('');

for (const db of DATABASES) {
  describe(`read_document and create_document on ${db.name}`, () => {
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
    const person = (email: string) => personId(h, email);

    async function create(caller: ToolCaller, args: Record<string, unknown>): Promise<string> {
      const { id } = await createDocument(caller, { title: 'Scratch', ...args });
      assert.equal(typeof id, 'string');
      return id;
    }

    async function row(id: string) {
      return sql().selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    }

    async function counts() {
      const [artifacts, conversations, messages, keys, checkpoints] = await Promise.all(
        (['artifacts', 'conversations', 'messages', 'idempotency_keys', 'checkpoints'] as const).map(
          async (table) =>
            (
              await sql()
                .selectFrom(table)
                .select((eb) => eb.fn.countAll().as('n'))
                .execute()
            )[0]!.n,
        ),
      );
      return { artifacts, conversations, messages, keys, checkpoints };
    }

    async function versions(caller: ToolCaller, id: string): Promise<VersionRow[]> {
      return ok(await caller.call('get_document_versions', { document_id: id })).versions as VersionRow[];
    }

    /** A person's edit made on a replica of the live document, as the live socket delivers it. */
    async function personEdit(email: string, id: string, change: (blocks: Y.Array<Y.Map<unknown>>) => void) {
      await personEditAs(h, email, id, (replica) => change(replica.getArray<Y.Map<unknown>>('blocks')));
    }

    const blockText = (blocks: Y.Array<Y.Map<unknown>>, i: number) => blocks.get(i).get('text') as Y.Text;

    describe('read_document', () => {
      it('reads a document: markdown, version, size_chars, offset, truncated, archived', async () => {
        const markdown = '# Roadmap\n\nShip it.\n';
        for (const caller of [ada, bob, cy, dee]) {
          const s = await read(caller, { document_id: art('roadmap') });
          assert.equal(s.document_id, art('roadmap'));
          assert.equal(s.title, 'Roadmap');
          assert.equal(s.type, 'document');
          assert.equal(s.markdown, markdown);
          assert.equal(s.version, 1);
          assert.equal(s.size_chars, markdown.length);
          assert.equal(s.offset, 0);
          assert.equal(s.truncated, false);
          assert.equal(s.archived, false);
          assert.equal('parent' in s, false, 'no parent outside a conversation');
        }
        // Any role reads: Cy is only a viewer of the plan.
        assert.equal((await read(cy, { document_id: art('plan') })).markdown, 'Draft.\n');
      });

      it('returns an html_app’s HTML source', async () => {
        const html = '<h1>Hi</h1>\n<p>Welcome</p>\n<p>Welcome</p>\n';
        const s = await read(bob, { document_id: art('landing') });
        assert.equal(s.type, 'html_app');
        assert.equal(s.markdown, html);
        assert.equal(s.size_chars, html.length);
        assert.equal(s.version, 1);
        assert.equal(s.truncated, false);
      });

      it('returns a table’s markdown projection, a GFM table', async () => {
        const s = await read(dee, { document_id: art('budget') });
        assert.equal(s.type, 'table');
        assert.equal(s.size_chars, s.markdown.length);
        const tokens = new Lexer({ gfm: true }).lex(s.markdown).filter((t) => t.type !== 'space');
        assert.equal(tokens.length, 1, s.markdown);
        const table = tokens[0] as Tokens.Table;
        assert.equal(table.type, 'table');
        assert.deepEqual(
          table.header.map((c) => c.text),
          ['Item', 'Cost'],
        );
        assert.deepEqual(
          table.rows.map((r) => r.map((c) => c.text)),
          [['Laptop', '1200']],
        );
      });

      it('keeps a table a GFM table when its cells hold pipes, line breaks or nothing', async () => {
        const id = newId('tbl');
        const now = Date.now();
        await sql()
          .insertInto('artifacts')
          .values({
            id,
            workspace_id: acme(h).id,
            type: 'table',
            title: 'Awkward cells',
            owner_id: person('ada@acme.test'),
            scope: 'org',
            pod_id: null,
            conversation_id: null,
            chat_id: null,
            status: 'active',
            version: 1,
            content: null,
            table_json: JSON.stringify({
              columns: ['Name', 'Note'],
              rows: [['a|b', 'two\nlines'], ['short']],
            }),
            created_at: now,
            updated_at: now,
          })
          .execute();
        const s = await read(ada, { document_id: id });
        const tokens = new Lexer({ gfm: true }).lex(s.markdown).filter((t) => t.type !== 'space');
        assert.equal(tokens.length, 1, s.markdown);
        const table = tokens[0] as Tokens.Table;
        assert.equal(table.type, 'table');
        assert.deepEqual(
          table.header.map((c) => c.text),
          ['Name', 'Note'],
        );
        assert.equal(table.rows.length, 2);
        assert.equal(table.rows[0]![0]!.text, 'a|b');
        assert.match(table.rows[0]![1]!.text, /^two\s+lines$/);
        assert.deepEqual(
          table.rows[1]!.map((c) => c.text),
          ['short', ''],
        );
      });

      it('names the parent conversation of an artifact made in a room', async () => {
        const general = acme(h).conversations.general!;
        const page = await read(bob, { document_id: art('room_page') });
        assert.deepEqual(page.parent, { conversation_id: general });
        const id = await create(ada, {
          title: 'Minutes',
          conversation_id: general,
          content_markdown: 'Met.\n',
        });
        const doc = await read(bob, { document_id: id });
        assert.deepEqual(doc.parent, { conversation_id: general });
        assert.equal(doc.markdown, 'Met.\n');
      });

      it('reads archived artifacts and says they are archived', async () => {
        const notes = await read(bob, { document_id: art('notes') });
        assert.equal(notes.archived, true);
        assert.equal(notes.markdown, 'Old notes.\n');
        const page = await read(dee, { document_id: art('archived_page') });
        assert.equal(page.archived, true);
        assert.equal(page.markdown, '<p>old</p>');
      });

      it('gives Artifact not found, as an error result, for an artifact with no readable projection', async () => {
        const id = newId('tbl');
        const now = Date.now();
        await sql()
          .insertInto('artifacts')
          .values({
            id,
            workspace_id: acme(h).id,
            type: 'table',
            title: 'Not loaded yet',
            owner_id: person('ada@acme.test'),
            scope: 'org',
            pod_id: null,
            conversation_id: null,
            chat_id: null,
            status: 'active',
            version: 0,
            content: null,
            table_json: null,
            created_at: now,
            updated_at: now,
          })
          .execute();
        for (const target of [art('empty_page'), id]) {
          const r = await ada.call('read_document', { document_id: target });
          assert.equal(r.isError, true, `expected an error result, got: ${r.text}`);
          assert.match(r.text, /Artifact not found$/);
        }
      });

      it('reads anything the caller cannot open exactly like a made-up id', async () => {
        const unreachable: [ToolCaller, unknown][] = [
          [cy, art('pod_page')],
          [cy, art('room_page')],
          [dee, art('plan')],
          [dee, art('landing')],
          [dee, art('notes')],
          [eve, art('roadmap')],
          [ada, other(h).artifacts.eve_doc],
          [ada, MADE_UP_DOC],
          [ada, ''],
        ];
        for (const [caller, documentId] of unreachable)
          refused(await caller.call('read_document', { document_id: documentId }), NOT_FOUND);
      });

      it('pages a long document in windows of at most 24,000 characters', async () => {
        const id = await create(ada, { title: 'Long', content_markdown: LONG });
        const first = await read(ada, { document_id: id });
        assert.equal(first.size_chars, 50_000);
        assert.equal(first.markdown, LONG.slice(0, WINDOW_MAX));
        assert.equal(first.offset, 0);
        assert.equal(first.truncated, true);
        const second = await read(ada, { document_id: id, offset: WINDOW_MAX });
        assert.equal(second.markdown, LONG.slice(WINDOW_MAX, 2 * WINDOW_MAX));
        assert.equal(second.offset, WINDOW_MAX);
        assert.equal(second.truncated, true);
        const third = await read(ada, { document_id: id, offset: 2 * WINDOW_MAX });
        assert.equal(third.markdown, LONG.slice(2 * WINDOW_MAX));
        assert.equal(third.truncated, false);
        assert.equal(first.markdown + second.markdown + third.markdown, LONG);
        for (const s of [first, second, third]) {
          assert.equal(s.version, 1, 'every read returns the version');
          assert.equal(s.size_chars, 50_000);
        }

        const middle = await read(ada, { document_id: id, offset: 1234, window: 100 });
        assert.equal(middle.markdown, LONG.slice(1234, 1334));
        assert.equal(middle.offset, 1234);
        assert.equal(middle.truncated, true);
        const end = await read(ada, { document_id: id, offset: 49_990, window: 10 });
        assert.equal(end.markdown, LONG.slice(49_990));
        assert.equal(end.truncated, false, 'a window ending exactly at the end is not truncated');
      });

      it('clamps offset and window, takes the default for null and refuses anything not a number', async () => {
        const id = await create(ada, { title: 'Long', content_markdown: LONG });
        const cases: [Record<string, unknown>, { offset: number; length: number }][] = [
          [{ offset: -5 }, { offset: 0, length: WINDOW_MAX }],
          [{ offset: -1e12 }, { offset: 0, length: WINDOW_MAX }],
          [{ offset: 0 }, { offset: 0, length: WINDOW_MAX }],
          [
            { offset: 10.8, window: 5.9 },
            { offset: 10, length: 5 },
          ],
          [{ window: 0 }, { offset: 0, length: 1 }],
          [{ window: -3 }, { offset: 0, length: 1 }],
          [{ window: 1 }, { offset: 0, length: 1 }],
          [{ window: 24_001 }, { offset: 0, length: WINDOW_MAX }],
          [{ window: 1e15 }, { offset: 0, length: WINDOW_MAX }],
          [
            { offset: 49_000, window: 1e15 },
            { offset: 49_000, length: 1000 },
          ],
          [{ offset: 50_000 }, { offset: 50_000, length: 0 }],
          [{ offset: 1e12 }, { offset: 50_000, length: 0 }],
          [
            { offset: null, window: null },
            { offset: 0, length: WINDOW_MAX },
          ],
        ];
        for (const [args, want] of cases) {
          const s = await read(ada, { document_id: id, ...args });
          const label = JSON.stringify(args);
          assert.equal(s.offset, want.offset, `${label} offset`);
          assert.equal(s.markdown.length, want.length, `${label} window`);
          assert.equal(s.markdown, LONG.slice(want.offset, want.offset + want.length), label);
          assert.equal(s.truncated, want.offset + want.length < LONG.length, `${label} truncated`);
          assert.equal(s.size_chars, LONG.length);
        }
        const notNumbers: [Record<string, unknown>, string][] = [
          [{ offset: '100' }, 'Tool failed: offset must be a non-negative number'],
          [{ window: '10' }, 'Tool failed: window must be a number from 1 to 24000'],
          [
            { offset: true, window: [10] },
            'Tool failed: offset must be a non-negative number; window must be a number from 1 to 24000',
          ],
          [{ offset: { at: 5 } }, 'Tool failed: offset must be a non-negative number'],
          [{ window: '' }, 'Tool failed: window must be a number from 1 to 24000'],
        ];
        for (const [args, text] of notNumbers)
          refused(await ada.call('read_document', { document_id: id, ...args }), text);
      });

      it('reads an empty document as empty, at version 0', async () => {
        const id = await create(ada, { title: 'Blank' });
        const s = await read(ada, { document_id: id });
        assert.equal(s.markdown, '');
        assert.equal(s.size_chars, 0);
        assert.equal(s.offset, 0);
        assert.equal(s.truncated, false);
        assert.equal(s.version, 0);
        const far = await read(ada, { document_id: id, offset: 10, window: 1 });
        assert.equal(far.markdown, '');
        assert.equal(far.truncated, false);
      });

      it('never splits a surrogate pair, whatever the offset and window', async () => {
        const id = await create(ada, { title: 'Emoji', content_markdown: EMOJI });
        for (let offset = 0; offset <= EMOJI.length + 1; offset++) {
          for (let window = 1; window <= EMOJI.length + 1; window++) {
            const s = await read(ada, { document_id: id, offset, window });
            const label = `offset ${offset}, window ${window}`;
            assert.doesNotMatch(s.markdown, LONE_SURROGATE, `${label}: ${JSON.stringify(s.markdown)}`);
            // A window ending inside a pair carries the pair's second half: one character more.
            assert.ok(
              s.markdown.length <= window + 1,
              `${label}: at most window characters, plus a pair's second half`,
            );
            // An offset inside a pair moves forward, past the half a previous window already gave.
            assert.ok(s.offset >= Math.min(offset, EMOJI.length) && s.offset <= offset + 1, label);
            assert.equal(s.markdown, EMOJI.slice(s.offset, s.offset + s.markdown.length), label);
            assert.equal(s.truncated, s.offset + s.markdown.length < EMOJI.length, label);
            assert.equal(s.size_chars, EMOJI.length);
          }
        }
        // An offset in the middle of a pair moves forward to the pair's end.
        const mid = await read(ada, { document_id: id, offset: 2, window: 2 });
        assert.equal(mid.offset, 3);
        assert.equal(mid.markdown, EMOJI.slice(3, 3 + mid.markdown.length));
        assert.ok(mid.markdown.length === 2 || mid.markdown.length === 3);
      });

      for (const window of [1, 2, 3, 4, 5, 7]) {
        it(`pages through emoji with window ${window}, offset = offset + window, losing and repeating nothing`, async () => {
          const id = await create(ada, { title: `Emoji ${window}`, content_markdown: EMOJI });
          const parts: string[] = [];
          let offset = 0;
          for (let step = 0; ; step++) {
            assert.ok(step <= EMOJI.length, `window ${window} stopped making progress at offset ${offset}`);
            const s = await read(ada, { document_id: id, offset, window });
            parts.push(s.markdown);
            if (!s.truncated) break;
            assert.ok(
              s.markdown.length > 0,
              `offset ${offset}, window ${window}: an empty window marked truncated, so offset + window never moves past ${JSON.stringify(EMOJI.slice(s.offset, s.offset + 2))}`,
            );
            offset = s.offset + window;
          }
          assert.equal(parts.join(''), EMOJI);
        });
      }

      it('sees a person’s live edit before it is stored, at the version that stores it', async () => {
        const id = await create(ada, { title: 'Live', scope: 'org', content_markdown: 'First line.\n' });
        assert.equal((await read(ada, { document_id: id })).version, 1);
        await personEdit('bob@acme.test', id, (blocks) => blockText(blocks, 0).insert(11, ' Bob was here.'));
        const s = await read(ada, { document_id: id });
        assert.equal(s.markdown, 'First line. Bob was here.\n');
        assert.equal(s.version, 2, 'the read stored the pending edit and reports its version');
        assert.equal(s.size_chars, s.markdown.length);
        assert.equal((await row(id)).content, s.markdown);
        // Reading again changes nothing more.
        assert.deepEqual(await read(ada, { document_id: id }), s);
        const [newest] = await versions(ada, id);
        assert.equal(newest!.reason, 'edit');
        assert.equal(newest!.doc_version, 2);
        assert.equal(newest!.author_label, 'Bob Stone');
      });

      it('leaves comment marks and editor-only annotations out of the markdown', async () => {
        const id = await create(ada, {
          title: 'Marked',
          scope: 'org',
          content_markdown: 'Plain words here.\n',
        });
        await personEdit('bob@acme.test', id, (blocks) => {
          const text = blockText(blocks, 0);
          text.format(0, 5, { comment: 'thr_1' });
          text.insertEmbed(6, { mention: 'ada' });
          blocks.get(0).set('comments', ['thr_1']);
        });
        const s = await read(ada, { document_id: id });
        assert.equal(s.markdown, 'Plain words here.\n');
        assert.equal(s.size_chars, 'Plain words here.\n'.length);
      });

      it('needs the documents:read scope', async () => {
        const writer = await h.as('ada@acme.test', ['documents:write']);
        refused(
          await writer.call('read_document', { document_id: art('roadmap') }),
          'Tool failed: read_document needs the documents:read scope, which this connection was not granted',
        );
      });
    });

    describe('create_document', () => {
      it('creates a personal document by default, writing the content verbatim', async () => {
        const content =
          '# Title  \n\nSome *emphasis*, a [link](https://example.test) and `code`.\n\n' +
          '- one\n-  two\n\n```js\nconst x = 1;   \n```\n\n| a | b |\n|---|:-:|\n| 1 | 2 |\n\n' +
          '<div>raw html</div>\n\nNo final newline, trailing spaces   ';
        const r = await ada.call('create_document', { title: 'My notes', content_markdown: content });
        const s = ok(r);
        const id = s.document_id as string;
        assert.match(id, /^doc_/);
        assert.deepEqual(s, {
          document_id: id,
          title: 'My notes',
          version: 1,
          deduplicated: false,
          healed: false,
        });
        assert.ok(r.text.includes(id), r.text);

        const stored = await row(id);
        assert.equal(stored.type, 'document');
        assert.equal(stored.scope, 'user');
        assert.equal(stored.pod_id, null);
        assert.equal(stored.conversation_id, null);
        assert.equal(stored.owner_id, person('ada@acme.test'));
        assert.equal(stored.status, 'active');

        const doc = await read(ada, { document_id: id });
        assert.equal(doc.markdown, content);
        assert.equal(doc.size_chars, content.length);
        assert.equal(doc.version, 1);
        for (const stranger of [bob, cy, dee, eve])
          refused(await stranger.call('read_document', { document_id: id }), NOT_FOUND);
      });

      it('keeps unicode, tabs and odd spacing exactly', async () => {
        const content = 'Ünïcödé — “quotes” 😀\n\n\tTabbed\n\n\n\nFar below.\n   \n';
        const id = await create(ada, { content_markdown: content });
        assert.equal((await read(ada, { document_id: id })).markdown, content);
      });

      it('gives a document made with a scope its own chat and posts nothing', async () => {
        const before = await counts();
        const id = await create(ada, { title: 'Own chat', scope: 'org' });
        const stored = await row(id);
        assert.ok(stored.chat_id, 'the document has its own chat');
        const chat = await sql()
          .selectFrom('conversations')
          .selectAll()
          .where('id', '=', stored.chat_id)
          .executeTakeFirstOrThrow();
        assert.equal(chat.kind, 'artifact');
        assert.equal(chat.workspace_id, acme(h).id);
        const after = await counts();
        assert.equal(after.messages, before.messages, 'no card is posted');
        assert.equal(Number(after.conversations), Number(before.conversations) + 1);
      });

      it('with scope org, every member of the workspace can edit it, and no one outside', async () => {
        const id = await create(bob, { title: 'For all', scope: 'org', content_markdown: 'Everyone.\n' });
        assert.equal((await row(id)).scope, 'org');
        for (const [caller, role] of [
          [bob, 'owner'],
          [ada, 'editor'],
          [cy, 'editor'],
          [dee, 'editor'],
        ] as const) {
          const listed = ok(await caller.call('list_documents', { scope: 'org' })).documents as {
            document_id: string;
            role: string;
          }[];
          assert.equal(listed.find((d) => d.document_id === id)?.role, role);
        }
        refused(await eve.call('read_document', { document_id: id }), NOT_FOUND);
      });

      it('with scope pod and pod_id, creates it in the pod for its members', async () => {
        const design = acme(h).pods.design!;
        const id = await create(bob, { title: 'Pod doc', scope: 'pod', pod_id: design });
        const stored = await row(id);
        assert.equal(stored.scope, 'pod');
        assert.equal(stored.pod_id, design);
        assert.equal(stored.owner_id, person('bob@acme.test'));
        assert.equal((await read(ada, { document_id: id })).version, 0);
        refused(await cy.call('read_document', { document_id: id }), NOT_FOUND);
      });

      it('refuses scope pod without pod_id, creating nothing', async () => {
        const before = await counts();
        refused(await ada.call('create_document', { title: 'Pod', scope: 'pod' }), POD_REQUIRED);
        refused(
          await ada.call('create_document', { title: 'Pod', scope: 'pod', pod_id: null }),
          POD_REQUIRED,
        );
        assert.deepEqual(await counts(), before);
      });

      it('reads a pod the caller is not in exactly like a made-up pod, creating nothing', async () => {
        const before = await counts();
        for (const podId of [acme(h).pods.ops, other(h).pods.eves, MADE_UP_POD, '']) {
          refused(
            await ada.call('create_document', { title: 'Pod', scope: 'pod', pod_id: podId }),
            NOT_FOUND,
          );
        }
        assert.deepEqual(await counts(), before);
      });

      it('with conversation_id, creates it in the room and posts one card there', async () => {
        const general = acme(h).conversations.general!;
        const before = await sql().selectFrom('messages').select('id').execute();
        const id = await create(ada, {
          title: 'Room doc',
          conversation_id: general,
          content_markdown: 'In the room.\n',
        });
        const stored = await row(id);
        assert.equal(stored.conversation_id, general);
        assert.equal(stored.chat_id, null, 'a document in a room lives in that room');
        assert.equal(stored.owner_id, person('ada@acme.test'));

        const added = (await sql().selectFrom('messages').selectAll().execute()).filter(
          (m) => !before.some((b) => b.id === m.id),
        );
        assert.equal(added.length, 1, 'exactly one message is posted');
        const card = added[0]!;
        assert.equal(card.conversation_id, general);
        assert.equal(card.kind, 'card');
        assert.equal(card.author_id, person('ada@acme.test'));
        assert.match(card.body, /Room doc/);
        const payload = JSON.parse(card.card_json!) as Record<string, unknown>;
        assert.equal(payload.artifact_id, id);
        assert.equal(payload.artifact_type, 'document');
        assert.equal(payload.title, 'Room doc');

        assert.equal((await read(bob, { document_id: id })).markdown, 'In the room.\n');
        refused(await cy.call('read_document', { document_id: id }), NOT_FOUND);
      });

      it('refuses conversation_id together with a scope, creating nothing', async () => {
        const before = await counts();
        for (const scope of ['user', 'pod', 'org', 'team']) {
          refused(
            await ada.call('create_document', {
              title: 'Both',
              conversation_id: acme(h).conversations.general,
              scope,
              ...(scope === 'pod' ? { pod_id: acme(h).pods.design } : {}),
            }),
            BOTH,
          );
        }
        assert.deepEqual(await counts(), before);
      });

      it('refuses a scope other than user, pod or org, creating nothing', async () => {
        const before = await counts();
        for (const scope of ['mine', 'shared', 'team', 'USER', '', 3, false])
          refused(await ada.call('create_document', { title: 'Bad', scope }), BAD_SCOPE);
        assert.deepEqual(await counts(), before);
      });

      it('reads a conversation the caller cannot reach exactly like a made-up one, posting nothing', async () => {
        const before = await counts();
        const unreachable: [ToolCaller, string][] = [
          [ada, acme(h).conversations.cyroom!],
          [ada, other(h).conversations.evroom!],
          [eve, acme(h).conversations.general!],
          [dee, acme(h).conversations.old!],
          [ada, MADE_UP_ROOM],
        ];
        for (const [caller, conversationId] of unreachable)
          refused(
            await caller.call('create_document', { title: 'Room', conversation_id: conversationId }),
            NOT_FOUND,
          );
        assert.deepEqual(await counts(), before);
      });

      it('refuses an archived room with the spec sentence, creating and posting nothing', async () => {
        const before = await counts();
        const r = await ada.call('create_document', {
          title: 'Late',
          conversation_id: acme(h).conversations.old,
          content_markdown: 'Too late.\n',
          idempotency_key: 'late-key',
        });
        refused(r, ROOM_ARCHIVED);
        assert.deepEqual(await counts(), before);
        assert.deepEqual(
          await sql().selectFrom('artifacts').select('id').where('title', '=', 'Late').execute(),
          [],
        );
      });

      it('refuses a missing or blank title, creating nothing', async () => {
        const before = await counts();
        for (const args of [{}, { title: '' }, { title: '   ' }, { title: 42 }])
          refused(await ada.call('create_document', { ...args, content_markdown: 'x' }), NO_TITLE);
        assert.deepEqual(await counts(), before);
      });

      it('creates an empty document at version 0 without content, or with whitespace only', async () => {
        for (const content of [undefined, '', '   ', '\n\n\t \n']) {
          const r = await ada.call('create_document', {
            title: 'Empty one',
            ...(content === undefined ? {} : { content_markdown: content }),
          });
          const s = ok(r);
          assert.equal(s.version, 0, JSON.stringify(content));
          assert.equal(s.deduplicated, false);
          const doc = await read(ada, { document_id: s.document_id });
          assert.equal(doc.version, 0);
          assert.equal(doc.markdown.trim(), '');
          const v = await ada.call('get_document_versions', { document_id: s.document_id });
          assert.deepEqual(ok(v).versions, [], 'nothing was written, so nothing was checkpointed');
          assert.equal(v.text, 'No versions yet.');
        }
      });

      it('accepts exactly 60,000 characters', async () => {
        const content = 'y'.repeat(CAP - 1) + '\n';
        const id = await create(ada, { title: 'At the cap', content_markdown: content });
        const first = await read(ada, { document_id: id });
        assert.equal(first.size_chars, CAP);
        assert.equal(first.version, 1);
        const rest = await read(ada, { document_id: id, offset: WINDOW_MAX * 2 });
        assert.equal(
          first.markdown +
            (await read(ada, { document_id: id, offset: WINDOW_MAX })).markdown +
            rest.markdown,
          content,
        );
      });

      it('refuses content over 60,000 characters with a clear error, creating nothing', async () => {
        const before = await counts();
        for (const length of [CAP + 1, 100_000]) {
          const r = await ada.call('create_document', {
            title: 'Too long',
            content_markdown: 'z'.repeat(length),
            idempotency_key: 'too-long',
          });
          refusedWithPrefix(r, /60,000/);
          assert.match(r.text, /content_markdown/);
          assert.match(r.text, /[Nn]othing was created/);
        }
        assert.deepEqual(await counts(), before);
        // The key was not used up: the same key with shorter content creates the document.
        const s = ok(
          await ada.call('create_document', {
            title: 'Shorter',
            content_markdown: 'Short.\n',
            idempotency_key: 'too-long',
          }),
        );
        assert.equal(s.deduplicated, false);
        assert.equal(s.version, 1);
      });

      it('refuses content that is not a string, creating nothing', async () => {
        const before = await counts();
        for (const content of [42, ['a'], { text: 'a' }, true])
          refusedWithPrefix(
            await ada.call('create_document', { title: 'Odd', content_markdown: content }),
            /content_markdown/,
          );
        assert.deepEqual(await counts(), before);
      });

      it('writes the first content as a checkpointed write by the caller', async () => {
        const started = Date.now();
        const id = await create(bob, { title: 'Checked', scope: 'org', content_markdown: 'Begun.\n' });
        const rows = await versions(ada, id);
        assert.equal(rows.length, 1);
        const [v] = rows;
        assert.equal(v!.reason, 'agent_edit');
        assert.equal(v!.doc_version, 0, 'captured before the fill: the empty version 0');
        assert.equal(v!.author_label, 'Bob Stone');
        assert.match(v!.instruction ?? '', /create_document/);
        assert.equal(v!.pinned, false);
        assert.equal(v!.label, null);
        assert.ok(v!.created_at >= started && v!.created_at <= Date.now());
        const checkpoint = await sql()
          .selectFrom('checkpoints')
          .selectAll()
          .where('artifact_id', '=', id)
          .executeTakeFirstOrThrow();
        assert.equal(checkpoint.author_id, person('bob@acme.test'));
        assert.equal(checkpoint.content, '');
      });

      it('needs the documents:write scope', async () => {
        const reader = await h.as('ada@acme.test', ['documents:read']);
        const before = await counts();
        refused(
          await reader.call('create_document', { title: 'No scope', content_markdown: 'x' }),
          'Tool failed: create_document needs the documents:write scope, which this connection was not granted',
        );
        assert.deepEqual(await counts(), before);
      });
    });

    describe('create_document with an idempotency_key', () => {
      async function keyed(caller: ToolCaller, key: string, args: Record<string, unknown> = {}) {
        return caller.call('create_document', { title: 'Report', idempotency_key: key, ...args });
      }

      it('returns the original document on a repeat, keyed on the key alone', async () => {
        const first = ok(await keyed(ada, 'report-1', { content_markdown: 'Body.\n' }));
        const id = first.document_id as string;
        assert.deepEqual(first, {
          document_id: id,
          title: 'Report',
          version: 1,
          deduplicated: false,
          healed: false,
        });
        const before = await counts();

        const repeats: Record<string, unknown>[] = [
          { content_markdown: 'Body.\n' },
          { title: 'A different title', content_markdown: 'Body.\n' },
          { title: 'Elsewhere', content_markdown: 'Body.\n', scope: 'org' },
          { content_markdown: 'Body.\n', conversation_id: acme(h).conversations.general },
        ];
        for (const args of repeats) {
          const r = await keyed(ada, 'report-1', args);
          assert.deepEqual(ok(r), { document_id: id, title: 'Report', deduplicated: true, healed: false });
          assert.ok(r.text.includes(id), r.text);
        }
        assert.deepEqual(await counts(), before, 'nothing new is created or posted');
        const doc = await read(ada, { document_id: id });
        assert.equal(doc.markdown, 'Body.\n');
        assert.equal(doc.version, 1);
        assert.equal((await row(id)).scope, 'user');

        const another = ok(await keyed(ada, 'report-2', { content_markdown: 'Body.\n' }));
        assert.notEqual(another.document_id, id, 'another key makes another document');
        assert.equal(another.deduplicated, false);
      });

      it('is scoped to the caller: someone else’s same key makes their own document', async () => {
        const adas = ok(await keyed(ada, 'shared-guess', { content_markdown: 'Secret.\n' }));
        const bobs = ok(await keyed(bob, 'shared-guess', { content_markdown: 'Secret.\n' }));
        assert.notEqual(bobs.document_id, adas.document_id);
        assert.equal(bobs.deduplicated, false);
        assert.equal(bobs.version, 1);
        assert.equal((await row(bobs.document_id as string)).owner_id, person('bob@acme.test'));
        refused(await bob.call('read_document', { document_id: adas.document_id }), NOT_FOUND);
        // And Bob's own repeat finds his document, not Ada's.
        const again = ok(await keyed(bob, 'shared-guess', { content_markdown: 'Secret.\n' }));
        assert.equal(again.document_id, bobs.document_id);
        assert.equal(again.deduplicated, true);
      });

      it('holds for 10 minutes; after that the key makes a new document', async () => {
        const first = ok(await keyed(ada, 'aging', { content_markdown: 'Old.\n' }));
        const age = async (ms: number) =>
          sql()
            .updateTable('idempotency_keys')
            .set({ created_at: Date.now() - ms })
            .where('person_id', '=', person('ada@acme.test'))
            .where('key', '=', 'aging')
            .execute();
        await age(9 * 60_000);
        const within = ok(await keyed(ada, 'aging', { content_markdown: 'Old.\n' }));
        assert.equal(within.document_id, first.document_id);
        assert.equal(within.deduplicated, true);

        await age(10 * 60_000 + 5_000);
        const fresh = ok(await keyed(ada, 'aging', { content_markdown: 'New.\n' }));
        assert.notEqual(fresh.document_id, first.document_id);
        assert.equal(fresh.deduplicated, false);
        assert.equal(fresh.version, 1);
        const repeat = ok(await keyed(ada, 'aging', { content_markdown: 'New.\n' }));
        assert.equal(repeat.document_id, fresh.document_id, 'the key now points at the new document');
        assert.equal((await read(ada, { document_id: first.document_id })).markdown, 'Old.\n');
      });

      it('fills the original when the first attempt left it empty, and says it healed', async () => {
        const first = ok(await keyed(ada, 'heal-me'));
        const id = first.document_id as string;
        assert.equal(first.version, 0);

        // A repeat that also has nothing to write confirms the empty original.
        assert.deepEqual(ok(await keyed(ada, 'heal-me', { content_markdown: '  \n' })), {
          document_id: id,
          title: 'Report',
          deduplicated: true,
          healed: false,
        });

        const before = await counts();
        const healed = ok(await keyed(ada, 'heal-me', { content_markdown: 'Filled in.\n' }));
        assert.deepEqual(healed, {
          document_id: id,
          title: 'Report',
          version: 1,
          deduplicated: true,
          healed: true,
        });
        const after = await counts();
        assert.equal(after.artifacts, before.artifacts, 'no second document');
        const doc = await read(ada, { document_id: id });
        assert.equal(doc.markdown, 'Filled in.\n');
        assert.equal(doc.version, 1);
        const rows = await versions(ada, id);
        assert.equal(rows.length, 1);
        assert.equal(rows[0]!.reason, 'agent_edit');
        assert.equal(rows[0]!.doc_version, 0);
        assert.equal(rows[0]!.author_label, 'Ada Lovelace');

        // Once filled, a repeat with the same content is confirmed, without a version.
        assert.deepEqual(ok(await keyed(ada, 'heal-me', { content_markdown: 'Filled in.\n' })), {
          document_id: id,
          title: 'Report',
          deduplicated: true,
          healed: false,
        });
        assert.equal((await read(ada, { document_id: id })).version, 1);
      });

      it('answers write_conflict when a repeat cannot confirm the initial content', async () => {
        const first = ok(await keyed(ada, 'conflict', { content_markdown: 'One.\n' }));
        const id = first.document_id as string;
        const before = await counts();
        const r = await keyed(ada, 'conflict', { content_markdown: 'Two.\n' });
        refusedWithPrefix(r, /write_conflict/);
        assert.equal(r.structured?.error, 'write_conflict');
        assert.equal(r.structured?.document_id, id);
        assert.deepEqual(await counts(), before);
        const doc = await read(ada, { document_id: id });
        assert.equal(doc.markdown, 'One.\n');
        assert.equal(doc.version, 1);
      });

      it('answers write_conflict when the empty original was written to before the repeat', async () => {
        // A person typed into it.
        const byPerson = ok(await keyed(ada, 'typed-into', { scope: 'org' }));
        const personDoc = byPerson.document_id as string;
        await personEdit('bob@acme.test', personDoc, (blocks) => {
          const map = new Y.Map<unknown>();
          map.set('id', 'blk_typed');
          map.set('text', new Y.Text('Typed by Bob.\n'));
          blocks.push([map]);
        });
        await h.services.documents.store.flush(personDoc);
        const r1 = await keyed(ada, 'typed-into', { scope: 'org', content_markdown: 'Planned.\n' });
        refusedWithPrefix(r1, /write_conflict/);
        assert.equal(r1.structured?.error, 'write_conflict');
        assert.equal((await read(ada, { document_id: personDoc })).markdown, 'Typed by Bob.\n');

        // An agent filled it.
        const byAgent = ok(await keyed(ada, 'filled-by-agent'));
        const agentDoc = byAgent.document_id as string;
        ok(
          await ada.call('edit_document', {
            document_id: agentDoc,
            mode: 'fill_empty',
            content_markdown: 'From elsewhere.\n',
          }),
        );
        const r2 = await keyed(ada, 'filled-by-agent', { content_markdown: 'Planned.\n' });
        refusedWithPrefix(r2, /write_conflict/);
        assert.equal(r2.structured?.error, 'write_conflict');
        assert.equal((await read(ada, { document_id: agentDoc })).markdown, 'From elsewhere.\n');
      });

      it('posts no second card when a document made in a room is created again with its key', async () => {
        const general = acme(h).conversations.general!;
        const args = { conversation_id: general, content_markdown: 'Agenda.\n' };
        const first = ok(await keyed(ada, 'room-key', args));
        const before = await counts();
        const again = ok(await keyed(ada, 'room-key', args));
        assert.equal(again.document_id, first.document_id);
        assert.equal(again.deduplicated, true);
        assert.deepEqual(await counts(), before, 'no second document, chat or card');
      });

      it('does not fill an empty original that was archived since', async () => {
        const first = ok(await keyed(ada, 'archived-since'));
        const id = first.document_id as string;
        await sql().updateTable('artifacts').set({ status: 'archived' }).where('id', '=', id).execute();
        const r = await keyed(ada, 'archived-since', { content_markdown: 'Late fill.\n' });
        // Writes to an archived artifact are refused; a healing retry is a write.
        assert.equal(r.isError, true, `expected a refusal, got: ${r.text}`);
        assert.match(r.text, /archived/);
        const doc = await read(ada, { document_id: id });
        assert.equal(doc.markdown, '');
        assert.equal(doc.version, 0);
        assert.deepEqual(await versions(ada, id), []);
      });

      it('creates one document when repeats with the same key overlap', async () => {
        const results = await Promise.all(
          Array.from({ length: 3 }, () =>
            keyed(ada, 'overlapping', { title: 'Overlap', content_markdown: 'Same.\n' }),
          ),
        );
        const made = await sql()
          .selectFrom('artifacts')
          .select('id')
          .where('title', '=', 'Overlap')
          .execute();
        assert.equal(made.length, 1, 'one document for one key');
        for (const r of results) {
          if (r.isError) {
            // A repeat that cannot be answered yet is told to come back, never a server error.
            assert.equal(r.structured?.error, 'write_conflict', r.text);
          } else assert.equal(r.structured?.document_id, made[0]!.id);
        }
        assert.ok(results.some((r) => !r.isError && r.structured?.deduplicated === false));
      });
    });
  });
}
