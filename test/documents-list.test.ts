import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import { newId } from '../src/ids.ts';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type CallResult, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople } from './support/people.ts';
import { ok, refused } from './support/results.ts';

interface Row {
  document_id: string;
  title: string;
  type: 'document' | 'html_app' | 'table';
  status: 'active' | 'archived';
  characters?: number;
  created_at: number;
  last_edited_at: number;
  version: number;
  conversation_id?: string;
  pod_id?: string;
  scope: 'user' | 'pod' | 'org';
  role: 'owner' | 'editor' | 'commenter' | 'viewer';
  owner_label?: string;
}

interface Listing {
  documents: Row[];
  next_cursor: string | null;
  truncated: boolean;
}

const NOT_FOUND = 'Tool failed: Artifact not found';
const ONE_SELECTOR = 'Tool failed: Pass only one of conversation_id, pod_id or scope';
const BAD_SCOPE = 'Tool failed: scope must be mine, shared, pod or org';
const NONE = 'No documents found.';
const MADE_UP_POD = 'pod_0000000000zzzzzzzzzzzzzzzz';
const MADE_UP_ROOM = 'cnv_0000000000zzzzzzzzzzzzzzzz';
const BUDGET_MARKDOWN = '| Item | Cost |\n| --- | --- |\n| Laptop | 1200 |\n';

/** A cursor refusal: the spec fixes only that it is refused, with the usual prefix, about the cursor. */
function cursorRefused(r: CallResult): void {
  assert.equal(r.isError, true, `expected the cursor to be refused, got: ${r.text}`);
  assert.match(r.text, /^Tool failed: .*cursor/);
}

async function list(caller: ToolCaller, args: Record<string, unknown> = {}): Promise<Listing> {
  const r = await caller.call('list_documents', args);
  const s = ok(r) as unknown as Listing;
  // The text form is one line per row, or the spec's sentence when there are none.
  if (s.documents.length === 0) assert.equal(r.text, NONE);
  else {
    const lines = r.text.split('\n');
    assert.equal(lines.length, s.documents.length, `one line per row:\n${r.text}`);
    s.documents.forEach((row, i) => {
      assert.ok(lines[i]!.includes(row.document_id), `line ${i} names ${row.document_id}: ${lines[i]}`);
      assert.ok(lines[i]!.includes(row.title), `line ${i} names ${row.title}: ${lines[i]}`);
    });
  }
  // Paged or not, a string cursor always means more rows were left.
  if (s.next_cursor !== null) assert.equal(s.truncated, true);
  return s;
}

/** Title → role, the shape most assertions compare. */
const roles = (rows: Row[]) => Object.fromEntries(rows.map((r) => [r.title, r.role]));
const titles = (rows: Row[]) => rows.map((r) => r.title).sort();

/** Most recently edited first; rows edited in the same millisecond in a stable order. */
function assertNewestFirst(rows: Row[]): void {
  for (let i = 1; i < rows.length; i++) {
    const a = rows[i - 1]!;
    const b = rows[i]!;
    assert.ok(
      a.last_edited_at > b.last_edited_at ||
        (a.last_edited_at === b.last_edited_at && a.document_id > b.document_id),
      `row ${i - 1} (${a.title}) should come before row ${i} (${b.title})`,
    );
  }
}

/** Follows next_cursor to the end, checking each page's shape on the way. */
async function allPages(
  caller: ToolCaller,
  args: Record<string, unknown>,
  pageSize: number,
): Promise<{ rows: Row[]; pages: number[] }> {
  const rows: Row[] = [];
  const pages: number[] = [];
  let cursor: string | null = null;
  for (let i = 0; i < 100; i++) {
    const page: Listing = await list(caller, { ...args, limit: pageSize, ...(cursor ? { cursor } : {}) });
    assert.ok(page.documents.length <= pageSize);
    assert.equal(page.truncated, page.next_cursor !== null, 'paged: truncated equals a string next_cursor');
    rows.push(...page.documents);
    pages.push(page.documents.length);
    cursor = page.next_cursor;
    if (cursor === null) return { rows, pages };
    assert.equal(typeof cursor, 'string');
  }
  assert.fail('paging did not end');
}

for (const db of DATABASES) {
  describe(`list_documents on ${db.name}`, () => {
    describe('over the fixture', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      let dee: ToolCaller;
      let eve: ToolCaller;
      let startedAt: number;

      before(async () => {
        startedAt = Date.now();
        h = await setup(db);
        ({ ada, bob, cy, dee, eve } = await connectPeople(h));
      });
      after(() => h.close());

      const art = (key: string) => acme(h).artifacts[key]!;

      it('with no selector merges everything each person can reach, with the role each holds', async () => {
        const expected: [ToolCaller, Record<string, string>][] = [
          [
            ada,
            {
              Roadmap: 'owner',
              'Private plan': 'owner',
              Landing: 'owner',
              Empty: 'owner',
              'Pod page': 'owner',
              'Room page': 'owner',
              'Org page': 'owner',
              Budget: 'owner',
            },
          ],
          [
            bob,
            {
              Roadmap: 'editor',
              'Private plan': 'commenter',
              Landing: 'commenter',
              'Pod page': 'editor',
              'Room page': 'editor',
              'Org page': 'editor',
              Budget: 'editor',
            },
          ],
          [
            cy,
            {
              Roadmap: 'editor',
              'Private plan': 'viewer',
              Landing: 'viewer',
              'Org page': 'editor',
              Budget: 'editor',
            },
          ],
          [dee, { Roadmap: 'editor', 'Org page': 'editor', Budget: 'editor' }],
          [eve, { 'Eve page': 'owner', 'Eve doc': 'owner' }],
        ];
        for (const [caller, want] of expected) {
          const s = await list(caller);
          assert.deepEqual(roles(s.documents), want);
          assert.equal(s.documents.length, Object.keys(want).length, 'each artifact is listed once');
          assert.equal(s.next_cursor, null, 'the merged listing is not paged');
          assert.equal(s.truncated, false);
          assertNewestFirst(s.documents);
        }
      });

      it('fills every row field the spec lists, times in milliseconds since the epoch', async () => {
        const s = await list(bob, { include_archived: true });
        const stored = await h.services.deps.db
          .selectFrom('artifacts')
          .selectAll()
          .where('workspace_id', '=', acme(h).id)
          .execute();
        const byId = new Map(s.documents.map((r) => [r.document_id, r]));
        const want: Record<string, Partial<Row>> = {
          roadmap: { type: 'document', scope: 'org', role: 'editor', characters: 20, version: 1 },
          plan: { type: 'document', scope: 'user', role: 'commenter', characters: 'Draft.\n'.length },
          landing: { type: 'html_app', scope: 'user', role: 'commenter' },
          pod_page: { type: 'html_app', scope: 'pod', role: 'editor', pod_id: acme(h).pods.design },
          room_page: {
            type: 'html_app',
            scope: 'user',
            role: 'editor',
            conversation_id: acme(h).conversations.general,
          },
          budget: { type: 'table', scope: 'org', role: 'editor', characters: BUDGET_MARKDOWN.length },
          notes: { type: 'document', scope: 'pod', status: 'archived', pod_id: acme(h).pods.design },
          archived_page: { type: 'html_app', scope: 'org', status: 'archived' },
        };
        for (const [key, fields] of Object.entries(want)) {
          const row = byId.get(art(key));
          assert.ok(row, `${key} is listed for Bob`);
          const a = stored.find((x) => x.id === art(key))!;
          const text = a.type === 'table' ? BUDGET_MARKDOWN : a.content;
          const expected: Row = {
            document_id: a.id,
            title: a.title,
            type: a.type as Row['type'],
            status: a.status as Row['status'],
            ...(text !== null ? { characters: text.length } : {}),
            created_at: a.created_at,
            last_edited_at: a.updated_at,
            version: a.version,
            ...(a.conversation_id ? { conversation_id: a.conversation_id } : {}),
            ...(a.pod_id ? { pod_id: a.pod_id } : {}),
            scope: a.scope as Row['scope'],
            role: fields.role ?? (row.role as Row['role']),
            owner_label: 'Ada Lovelace',
          };
          assert.deepEqual(row, expected, key);
          for (const [field, value] of Object.entries(fields))
            assert.deepEqual(row[field as keyof Row], value, `${key}.${field}`);
          for (const t of [row.created_at, row.last_edited_at]) {
            assert.ok(Number.isInteger(t));
            assert.ok(t >= startedAt && t <= Date.now(), `${t} is a time in ms since the epoch`);
          }
        }
        assert.equal(byId.get(art('roadmap'))!.conversation_id, undefined);
        assert.equal(byId.get(art('roadmap'))!.pod_id, undefined);
      });

      it('leaves characters out, not zero, when an artifact has no projection yet', async () => {
        const s = await list(ada);
        const empty = s.documents.find((r) => r.document_id === art('empty_page'));
        assert.ok(empty);
        assert.equal('characters' in empty, false);
        assert.equal(empty.version, 0);
        const landing = s.documents.find((r) => r.document_id === art('landing'))!;
        assert.equal(landing.characters, '<h1>Hi</h1>\n<p>Welcome</p>\n<p>Welcome</p>\n'.length);
      });

      it('mine lists what the caller owns; shared what they hold a role on without owning it', async () => {
        const adaMine = await list(ada, { scope: 'mine' });
        assert.equal(adaMine.documents.length, 8);
        assert.ok(adaMine.documents.every((r) => r.role === 'owner'));
        assertNewestFirst(adaMine.documents);
        assert.deepEqual((await list(ada, { scope: 'shared' })).documents, []);

        assert.deepEqual((await list(bob, { scope: 'mine' })).documents, []);
        const bobShared = await list(bob, { scope: 'shared' });
        assert.deepEqual(roles(bobShared.documents), {
          Roadmap: 'editor',
          'Private plan': 'commenter',
          Landing: 'commenter',
          'Pod page': 'editor',
          'Room page': 'editor',
          'Org page': 'editor',
          Budget: 'editor',
        });
        assert.equal(bobShared.truncated, false);
        assert.equal(bobShared.next_cursor, null);
        assert.deepEqual(roles((await list(cy, { scope: 'shared' })).documents), {
          Roadmap: 'editor',
          'Private plan': 'viewer',
          Landing: 'viewer',
          'Org page': 'editor',
          Budget: 'editor',
        });
        assert.deepEqual(titles((await list(dee, { scope: 'shared' })).documents), [
          'Budget',
          'Org page',
          'Roadmap',
        ]);
        assert.deepEqual(titles((await list(eve, { scope: 'mine' })).documents), ['Eve doc', 'Eve page']);
        assert.deepEqual((await list(eve, { scope: 'shared' })).documents, []);
      });

      it('org lists the org-wide artifacts of the caller’s workspace only', async () => {
        for (const caller of [ada, bob, dee]) {
          const s = await list(caller, { scope: 'org' });
          assert.deepEqual(titles(s.documents), ['Budget', 'Org page', 'Roadmap']);
          assert.ok(s.documents.every((r) => r.scope === 'org'));
        }
        assert.ok((await list(ada, { scope: 'org' })).documents.every((r) => r.role === 'owner'));
        assert.ok((await list(dee, { scope: 'org' })).documents.every((r) => r.role === 'editor'));
        assert.deepEqual(titles((await list(eve, { scope: 'org' })).documents), ['Eve doc', 'Eve page']);
      });

      it('scope pod lists the artifacts of every pod the caller is in, without a cursor', async () => {
        const bobPods = await list(bob, { scope: 'pod' });
        assert.deepEqual(roles(bobPods.documents), { 'Pod page': 'editor' });
        assert.equal(bobPods.documents[0]!.pod_id, acme(h).pods.design);
        assert.equal(bobPods.next_cursor, null);
        assert.equal(bobPods.truncated, false);
        assert.deepEqual((await list(cy, { scope: 'pod' })).documents, []);
        assert.deepEqual((await list(dee, { scope: 'pod' })).documents, []);
        assert.deepEqual((await list(eve, { scope: 'pod' })).documents, []);
      });

      it('pod_id lists one pod to its members and reads as not found to anyone else', async () => {
        const design = acme(h).pods.design!;
        assert.deepEqual(roles((await list(ada, { pod_id: design })).documents), { 'Pod page': 'owner' });
        const forBob = await list(bob, { pod_id: design });
        assert.deepEqual(roles(forBob.documents), { 'Pod page': 'editor' });
        assert.equal(forBob.next_cursor, null);
        assert.equal(forBob.truncated, false);
        assert.deepEqual((await list(cy, { pod_id: acme(h).pods.ops })).documents, []);

        const unreachable: [ToolCaller, string][] = [
          [cy, design],
          [dee, design],
          [eve, design],
          [ada, acme(h).pods.ops!],
          [ada, other(h).pods.eves!],
          [ada, MADE_UP_POD],
        ];
        for (const [caller, podId] of unreachable)
          refused(await caller.call('list_documents', { pod_id: podId }), NOT_FOUND);
      });

      it('conversation_id lists a room to its participants and reads as not found to anyone else', async () => {
        const general = acme(h).conversations.general!;
        for (const [caller, role] of [
          [ada, 'owner'],
          [bob, 'editor'],
        ] as const) {
          const s = await list(caller, { conversation_id: general });
          assert.deepEqual(roles(s.documents), { 'Room page': role });
          assert.equal(s.documents[0]!.conversation_id, general);
          assert.equal(s.next_cursor, null);
        }
        // A participant may still list an archived room.
        assert.deepEqual((await list(ada, { conversation_id: acme(h).conversations.old })).documents, []);

        const unreachable: [ToolCaller, string][] = [
          [cy, general],
          [dee, general],
          [eve, general],
          [ada, acme(h).conversations.cyroom!],
          [ada, other(h).conversations.evroom!],
          [dee, acme(h).conversations.old!],
          [ada, MADE_UP_ROOM],
        ];
        for (const [caller, conversationId] of unreachable)
          refused(await caller.call('list_documents', { conversation_id: conversationId }), NOT_FOUND);
      });

      it('leaves archived artifacts out unless include_archived is true', async () => {
        const active = await list(ada);
        assert.ok(active.documents.every((r) => r.status === 'active'));
        assert.deepEqual(await list(ada, { include_archived: false }), active);

        const r = await ada.call('list_documents', { include_archived: true });
        const all = ok(r) as unknown as Listing;
        assert.equal(all.documents.length, active.documents.length + 2);
        const archived = all.documents.filter((d) => d.status === 'archived');
        assert.deepEqual(titles(archived), ['Archived page', 'Pod notes']);
        for (const row of archived) {
          const line = r.text.split('\n').find((l) => l.includes(row.document_id));
          assert.ok(line && /archived/.test(line), `the line for ${row.title} says it is archived`);
        }

        assert.deepEqual(titles((await list(bob, { scope: 'pod', include_archived: true })).documents), [
          'Pod notes',
          'Pod page',
        ]);
        assert.deepEqual(
          titles((await list(bob, { pod_id: acme(h).pods.design, include_archived: true })).documents),
          ['Pod notes', 'Pod page'],
        );
        assert.deepEqual(titles((await list(dee, { scope: 'org', include_archived: true })).documents), [
          'Archived page',
          'Budget',
          'Org page',
          'Roadmap',
        ]);
        assert.deepEqual(titles((await list(ada, { scope: 'mine', include_archived: true })).documents), [
          'Archived page',
          'Budget',
          'Empty',
          'Landing',
          'Org page',
          'Pod notes',
          'Pod page',
          'Private plan',
          'Roadmap',
          'Room page',
        ]);
      });

      it('query keeps rows whose title or body contains it, ignoring case', async () => {
        const cases: [ToolCaller, Record<string, unknown>, string[]][] = [
          [ada, { query: 'ROAD' }, ['Roadmap']],
          [ada, { query: 'ship IT' }, ['Roadmap']],
          [ada, { query: 'wElCoMe' }, ['Landing']],
          [ada, { query: 'laptop' }, ['Budget']],
          [ada, { query: 'draft.' }, ['Private plan']],
          [ada, { query: 'page' }, ['Org page', 'Pod page', 'Room page']],
          [ada, { query: 'page', scope: 'org' }, ['Org page']],
          [ada, { query: 'old notes', include_archived: true }, ['Pod notes']],
          [ada, { query: 'old notes' }, []],
          [dee, { query: 'welcome' }, []],
          [eve, { query: 'roadmap', scope: 'org' }, []],
          [ada, { query: 'no such words anywhere' }, []],
        ];
        for (const [caller, args, want] of cases)
          assert.deepEqual(titles((await list(caller, args)).documents), want, JSON.stringify(args));
        assert.deepEqual(await list(ada, { query: '' }), await list(ada));
      });

      it('clamps limit to 1–50 and refuses anything not a number', async () => {
        const all = (await list(ada)).documents;
        assert.equal(all.length, 8);
        const cases: [unknown, number][] = [
          [0, 1],
          [-7, 1],
          [1, 1],
          [3, 3],
          [2.9, 2],
          [8, 8],
          [50, 8],
          [51, 8],
          [100000, 8],
        ];
        for (const [limit, count] of cases) {
          const s = await list(ada, { limit });
          assert.equal(s.documents.length, count, `limit ${JSON.stringify(limit)}`);
          assert.deepEqual(s.documents, all.slice(0, count), 'the newest rows come first');
          assert.equal(s.truncated, count < all.length, `limit ${JSON.stringify(limit)} truncated`);
          assert.equal(s.next_cursor, null, 'the merged listing never gives a cursor');
        }
        for (const limit of ['3', true, {}])
          refused(
            await ada.call('list_documents', { limit }),
            'Tool failed: limit must be a number from 1 to 50',
          );
      });

      it('refuses more than one of scope, conversation_id and pod_id', async () => {
        const general = acme(h).conversations.general!;
        const design = acme(h).pods.design!;
        const combos: Record<string, unknown>[] = [
          { scope: 'mine', pod_id: design },
          { scope: 'pod', pod_id: design },
          { scope: 'org', conversation_id: general },
          { conversation_id: general, pod_id: design },
          { scope: 'shared', conversation_id: general, pod_id: design },
          // Even when one of them could not be reached, the combination is what is refused.
          { scope: 'mine', pod_id: MADE_UP_POD },
        ];
        for (const args of combos) refused(await ada.call('list_documents', args), ONE_SELECTOR);
      });

      it('refuses a scope other than mine, shared, pod or org', async () => {
        for (const scope of ['user', 'all', 'MINE', 'Org', 'pods', 7, true])
          refused(await ada.call('list_documents', { scope }), BAD_SCOPE);
      });

      it('treats null arguments as not given', async () => {
        assert.deepEqual(
          await list(ada, { scope: null, pod_id: null, conversation_id: null, cursor: null, limit: null }),
          await list(ada),
        );
      });

      it('drops rows the caller holds no role on', async () => {
        const dao = h.services.deps.db;
        const deeId = h.actor('dee@acme.test').personId;
        // A role row this version does not know gives no role: the artifact is read, then dropped.
        await dao
          .insertInto('artifact_roles')
          .values({ artifact_id: art('plan'), person_id: deeId, role: 'former-member' })
          .execute();
        try {
          for (const args of [{}, { scope: 'shared' }, { query: 'draft' }]) {
            const s = await list(dee, args);
            assert.ok(
              s.documents.every((r) => r.document_id !== art('plan')),
              `${JSON.stringify(args)} leaves the plan out`,
            );
            assert.ok(s.documents.every((r) => ['owner', 'editor', 'commenter', 'viewer'].includes(r.role)));
          }
          refused(await dee.call('read_document', { document_id: art('plan') }), NOT_FOUND);
        } finally {
          await dao
            .deleteFrom('artifact_roles')
            .where('artifact_id', '=', art('plan'))
            .where('person_id', '=', deeId)
            .execute();
        }
      });

      it('needs the documents:read scope', async () => {
        const writer = await h.as('ada@acme.test', ['documents:write']);
        refused(
          await writer.call('list_documents', {}),
          'Tool failed: list_documents needs the documents:read scope, which this connection was not granted',
        );
      });
    });

    describe('paging', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      const notes: string[] = [];
      const needles: string[] = [];
      const designDocs: string[] = [];

      before(async () => {
        h = await setup(db);
        ada = await h.as('ada@acme.test');
        bob = await h.as('bob@acme.test');
        cy = await h.as('cy@acme.test');
        // Bob joins Ops too, so a pod_id cursor can be tried on a second pod he may list.
        await h.services.deps.db
          .insertInto('pod_members')
          .values({ pod_id: acme(h).pods.ops!, person_id: h.actor('bob@acme.test').personId })
          .execute();
        const made: { i: number; id: string }[] = [];
        for (let start = 1; start <= 120; start += 20) {
          const batch = await Promise.all(
            Array.from({ length: 20 }, async (_, k) => {
              const i = start + k;
              const s = ok(
                await bob.call('create_document', {
                  title: `Note ${String(i).padStart(3, '0')}`,
                  content_markdown: i % 10 === 0 ? `Holds the NEEDLE ${i}.\n` : `Plain ${i}.\n`,
                }),
              );
              return { i, id: s.document_id as string };
            }),
          );
          made.push(...batch);
        }
        for (const { i, id } of made) {
          notes.push(id);
          if (i % 10 === 0) needles.push(id);
        }
        for (let i = 0; i < 5; i++) {
          const s = ok(
            await bob.call('create_document', {
              title: `Design ${i}`,
              scope: 'pod',
              pod_id: acme(h).pods.design,
            }),
          );
          designDocs.push(s.document_id as string);
        }
      });
      after(() => h.close());

      it('pages through mine with opaque cursors, every row exactly once, newest first', async () => {
        const first = await list(bob, { scope: 'mine' });
        assert.equal(first.documents.length, 50, 'limit defaults to 50');
        assert.equal(typeof first.next_cursor, 'string');
        assert.equal(first.truncated, true);

        const { rows, pages } = await allPages(bob, { scope: 'mine' }, 50);
        assert.deepEqual(pages, [50, 50, 25]);
        assert.deepEqual(rows.slice(0, 50), first.documents);
        const ids = rows.map((r) => r.document_id);
        assert.equal(new Set(ids).size, ids.length, 'no row repeats across pages');
        assert.deepEqual([...ids].sort(), [...notes, ...designDocs].sort());
        assertNewestFirst(rows);
        assert.ok(rows.every((r) => r.role === 'owner' && r.owner_label === 'Bob Stone'));
      });

      it('pages with small limits and ends with a null cursor exactly when the rows run out', async () => {
        const { rows, pages } = await allPages(bob, { scope: 'mine' }, 25);
        assert.deepEqual(pages, [25, 25, 25, 25, 25]);
        assert.equal(rows.length, 125);
        const seven = await allPages(bob, { scope: 'mine' }, 7);
        assert.equal(seven.pages.length, 18);
        assert.deepEqual(
          seven.rows.map((r) => r.document_id),
          rows.map((r) => r.document_id),
        );
      });

      it('clamps limit on paged listings too', async () => {
        assert.equal((await list(bob, { scope: 'mine', limit: 500 })).documents.length, 50);
        const one = await list(bob, { scope: 'mine', limit: 0 });
        assert.equal(one.documents.length, 1);
        assert.equal(typeof one.next_cursor, 'string');
        const next = await list(bob, { scope: 'mine', limit: -1, cursor: one.next_cursor });
        assert.equal(next.documents.length, 1);
        assert.notEqual(next.documents[0]!.document_id, one.documents[0]!.document_id);
      });

      it('a cursor reused with the same arguments gives the same page again', async () => {
        const first = await list(bob, { scope: 'mine', limit: 10 });
        const again = await list(bob, { scope: 'mine', limit: 10, cursor: first.next_cursor });
        assert.deepEqual(await list(bob, { scope: 'mine', limit: 10, cursor: first.next_cursor }), again);
        // An explicit include_archived false and an empty query are the same listing.
        assert.deepEqual(
          await list(bob, {
            scope: 'mine',
            limit: 10,
            cursor: first.next_cursor,
            include_archived: false,
            query: '',
          }),
          again,
        );
      });

      it('refuses a cursor passed with another scope, pod_id, query or include_archived', async () => {
        const mine = await list(bob, { scope: 'mine', limit: 10 });
        const cursor = mine.next_cursor!;
        assert.equal(typeof cursor, 'string');
        const others: Record<string, unknown>[] = [
          { scope: 'shared' },
          { scope: 'org' },
          { pod_id: acme(h).pods.design },
          { scope: 'mine', query: 'needle' },
          { scope: 'mine', include_archived: true },
        ];
        for (const args of others) cursorRefused(await bob.call('list_documents', { ...args, cursor }));

        const inPod = await list(bob, { pod_id: acme(h).pods.design, limit: 2 });
        assert.equal(typeof inPod.next_cursor, 'string');
        cursorRefused(
          await bob.call('list_documents', { pod_id: acme(h).pods.ops, cursor: inPod.next_cursor }),
        );
        cursorRefused(await bob.call('list_documents', { scope: 'mine', cursor: inPod.next_cursor }));

        const queried = await list(bob, { scope: 'mine', query: 'needle', limit: 10 });
        assert.equal(typeof queried.next_cursor, 'string');
        for (const query of ['NEEDLE 1', 'plain', undefined]) {
          cursorRefused(
            await bob.call('list_documents', { scope: 'mine', query, cursor: queried.next_cursor }),
          );
        }
        const withArchived = await list(bob, { scope: 'mine', include_archived: true, limit: 10 });
        cursorRefused(await bob.call('list_documents', { scope: 'mine', cursor: withArchived.next_cursor }));
      });

      it('refuses a cursor presented by another person', async () => {
        const orgOfAda = await list(ada, { scope: 'org', limit: 1 });
        assert.equal(typeof orgOfAda.next_cursor, 'string');
        for (const caller of [bob, cy])
          cursorRefused(
            await caller.call('list_documents', { scope: 'org', limit: 1, cursor: orgOfAda.next_cursor }),
          );
        const mine = await list(bob, { scope: 'mine', limit: 5 });
        cursorRefused(await ada.call('list_documents', { scope: 'mine', cursor: mine.next_cursor }));
        const inPod = await list(bob, { pod_id: acme(h).pods.design, limit: 2 });
        cursorRefused(
          await ada.call('list_documents', { pod_id: acme(h).pods.design, cursor: inPod.next_cursor }),
        );
      });

      it('refuses a cursor it did not give out', async () => {
        const mine = await list(bob, { scope: 'mine', limit: 5 });
        const cursor = mine.next_cursor!;
        const [payload, mac] = cursor.split('.') as [string, string];
        const body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
          string,
          unknown
        >;
        const forged = Buffer.from(JSON.stringify({ ...body, u: 0 })).toString('base64url');
        const flipped = mac.slice(0, -1) + (mac.endsWith('A') ? 'B' : 'A');
        for (const bad of ['abc', 'a.b', `${forged}.${mac}`, `${payload}.${flipped}`, `${payload}.`, 42])
          cursorRefused(await bob.call('list_documents', { scope: 'mine', cursor: bad }));
      });

      it('refuses a cursor on a listing that is not paged', async () => {
        const mine = await list(bob, { scope: 'mine', limit: 5 });
        for (const args of [{}, { scope: 'pod' }, { conversation_id: acme(h).conversations.general }])
          cursorRefused(await bob.call('list_documents', { ...args, cursor: mine.next_cursor }));
      });

      it('applies query to the rows read, so a page may be empty and still have a next_cursor', async () => {
        // The newest five rows are Bob's design documents, none of them a needle.
        const newest = await list(bob, { scope: 'mine', limit: 5 });
        assert.deepEqual(newest.documents.map((r) => r.document_id).sort(), [...designDocs].sort());
        const empty = await list(bob, { scope: 'mine', limit: 5, query: 'needle' });
        assert.deepEqual(empty.documents, []);
        assert.equal(typeof empty.next_cursor, 'string');
        assert.equal(empty.truncated, true);

        const { rows } = await allPages(bob, { scope: 'mine', query: 'NeEdLe' }, 8);
        assert.deepEqual(rows.map((r) => r.document_id).sort(), [...needles].sort());
        // Filtering by body: every needle note says so in its body, not its title.
        assert.ok(rows.every((r) => /^Note \d{3}$/.test(r.title)));
        assertNewestFirst(rows);
      });

      it('pages shared, org and pod_id listings', async () => {
        const shared = await allPages(ada, { scope: 'shared' }, 2);
        assert.deepEqual(titles(shared.rows), titles((await list(ada, { scope: 'shared' })).documents));
        assert.deepEqual(
          [...shared.rows.map((r) => r.document_id)].sort(),
          [...designDocs].sort(),
          "Ada holds a role on Bob's pod documents, and no other of his",
        );
        assert.ok(shared.rows.every((r) => r.role === 'editor' && r.owner_label === 'Bob Stone'));

        const org = await allPages(bob, { scope: 'org' }, 1);
        assert.deepEqual(org.pages, [1, 1, 1]);
        assert.deepEqual(titles(org.rows), ['Budget', 'Org page', 'Roadmap']);

        const pod = await allPages(ada, { pod_id: acme(h).pods.design }, 2);
        assert.deepEqual(pod.pages, [2, 2, 2]);
        assert.deepEqual(
          pod.rows.map((r) => r.document_id).sort(),
          [...designDocs, acme(h).artifacts.pod_page!].sort(),
        );
        assertNewestFirst(pod.rows);
      });

      it('keeps every row exactly once when many were edited in the same millisecond', async () => {
        const dao = h.services.deps.db;
        const cyId = h.actor('cy@acme.test').personId;
        const at = Date.now() - 60_000;
        const ids: string[] = [];
        for (let i = 0; i < 30; i++) {
          const id = newId('doc');
          ids.push(id);
          await dao
            .insertInto('artifacts')
            .values({
              id,
              workspace_id: acme(h).id,
              type: 'document',
              title: `Tied ${i}`,
              owner_id: cyId,
              scope: 'user',
              pod_id: null,
              conversation_id: null,
              chat_id: null,
              status: 'active',
              version: 1,
              content: `Tied ${i}.\n`,
              table_json: null,
              created_at: at,
              updated_at: at,
            })
            .execute();
        }
        for (const size of [1, 4, 7, 29, 30]) {
          const { rows } = await allPages(cy, { scope: 'mine' }, size);
          assert.deepEqual(
            rows.map((r) => r.document_id),
            [...ids].reverse(),
            `pages of ${size}: ties come in one stable order`,
          );
        }
      });

      it('never gives a cursor on the merged listing, scope pod or conversation_id; truncated says rows were left', async () => {
        const merged = await list(bob, { limit: 5 });
        assert.equal(merged.documents.length, 5);
        assert.equal(merged.next_cursor, null);
        assert.equal(merged.truncated, true);
        const everything = await list(bob);
        assert.equal(everything.documents.length, 50);
        assert.equal(everything.next_cursor, null);
        assert.equal(everything.truncated, true);

        const pods = await list(bob, { scope: 'pod', limit: 3 });
        assert.equal(pods.documents.length, 3);
        assert.equal(pods.next_cursor, null);
        assert.equal(pods.truncated, true);
        const allPods = await list(bob, { scope: 'pod' });
        assert.equal(allPods.documents.length, 6);
        assert.equal(allPods.truncated, false);

        const general = acme(h).conversations.general!;
        for (let i = 0; i < 2; i++)
          ok(await ada.call('create_document', { title: `Room doc ${i}`, conversation_id: general }));
        const room = await list(bob, { conversation_id: general, limit: 2 });
        assert.equal(room.documents.length, 2);
        assert.equal(room.next_cursor, null);
        assert.equal(room.truncated, true);
        const wholeRoom = await list(bob, { conversation_id: general });
        assert.deepEqual(titles(wholeRoom.documents), ['Room doc 0', 'Room doc 1', 'Room page']);
        assert.equal(wholeRoom.truncated, false);
      });

      it('on a paged listing, a last page that is exactly full ends with a null cursor', async () => {
        const shared = (await list(ada, { scope: 'shared' })).documents.length;
        const exact = await list(ada, { scope: 'shared', limit: shared });
        assert.equal(exact.documents.length, shared);
        assert.equal(exact.next_cursor, null);
        assert.equal(exact.truncated, false);
      });

      it('moves a document written to, by an agent or a person, to the top with its new version', async () => {
        const oldest = notes[0]!;
        const before = (await list(bob, { scope: 'mine', query: 'Note 001' })).documents;
        assert.equal(before.length, 0, 'the oldest note is not among the first rows read');
        const editedAt = Date.now();
        ok(
          await bob.call('edit_document', {
            document_id: oldest,
            mode: 'append',
            content_markdown: 'More.\n',
          }),
        );
        const [top] = (await list(bob, { scope: 'mine', limit: 1 })).documents;
        assert.equal(top!.document_id, oldest);
        assert.equal(top!.version, 2);
        assert.equal(top!.characters, 'Plain 1.\nMore.\n'.length);
        assert.ok(top!.last_edited_at >= editedAt, 'last_edited_at is the time of the write');
        assert.ok(top!.created_at < editedAt);

        const second = notes[1]!;
        const live = await h.services.documents.store.open(second);
        const replica = new Y.Doc();
        Y.applyUpdate(replica, Y.encodeStateAsUpdate(live.doc));
        (replica.getArray<Y.Map<unknown>>('blocks').get(0).get('text') as Y.Text).insert(0, 'Edited: ');
        await h.services.documents.applyPersonUpdate(
          h.actor('bob@acme.test'),
          second,
          Y.encodeStateAsUpdate(replica, Y.encodeStateVector(live.doc)),
        );
        await h.services.documents.store.flush(second);
        const [first, next] = (await list(bob, { scope: 'mine', limit: 2 })).documents;
        assert.equal(first!.document_id, second);
        assert.equal(first!.version, 2);
        assert.equal(first!.characters, 'Edited: Plain 2.\n'.length);
        assert.equal(next!.document_id, oldest);
      });
    });

    describe('the listing over all pods', () => {
      let h: Harness;
      let dee: ToolCaller;
      const podIds = Array.from({ length: 52 }, (_, i) => `pod_t${String(i).padStart(3, '0')}`);
      const docIn: Record<number, string> = {};

      before(async () => {
        h = await setup(db);
        dee = await h.as('dee@acme.test');
        const dao = h.services.deps.db;
        const deeId = h.actor('dee@acme.test').personId;
        const adaId = h.actor('ada@acme.test').personId;
        const now = Date.now();
        await dao
          .insertInto('pods')
          .values(
            podIds.map((id, i) => ({ id, workspace_id: acme(h).id, name: `Pod ${i}`, created_at: now })),
          )
          .execute();
        // Dee is in the first 51 pods (by id); the last one is not hers.
        await dao
          .insertInto('pod_members')
          .values(podIds.slice(0, 51).map((pod_id) => ({ pod_id, person_id: deeId })))
          .execute();
        for (const i of [0, 49, 50, 51]) {
          const id = newId('doc');
          docIn[i] = id;
          await dao
            .insertInto('artifacts')
            .values({
              id,
              workspace_id: acme(h).id,
              type: 'document',
              title: `In pod ${i}`,
              owner_id: adaId,
              scope: 'pod',
              pod_id: podIds[i]!,
              conversation_id: null,
              chat_id: null,
              status: 'active',
              version: 1,
              content: `Pod ${i}.\n`,
              table_json: null,
              created_at: now,
              updated_at: now + i,
            })
            .execute();
        }
      });
      after(() => h.close());

      it('stops after 50 pods and says so with truncated, still without a cursor', async () => {
        const s = await list(dee, { scope: 'pod' });
        assert.deepEqual(titles(s.documents), ['In pod 0', 'In pod 49']);
        assert.ok(s.documents.every((r) => r.role === 'editor'));
        assert.equal(s.truncated, true, 'the 51st pod was not read');
        assert.equal(s.next_cursor, null);
      });

      it('pod_id still reaches a pod past the first 50', async () => {
        const s = await list(dee, { pod_id: podIds[50] });
        assert.deepEqual(titles(s.documents), ['In pod 50']);
        assert.equal(s.truncated, false);
        refused(await dee.call('list_documents', { pod_id: podIds[51] }), NOT_FOUND);
      });

      it('with 50 pods, lists them all and is not truncated', async () => {
        await h.services.deps.db
          .deleteFrom('pod_members')
          .where('pod_id', '=', podIds[10]!)
          .where('person_id', '=', h.actor('dee@acme.test').personId)
          .execute();
        const s = await list(dee, { scope: 'pod' });
        assert.deepEqual(titles(s.documents), ['In pod 0', 'In pod 49', 'In pod 50']);
        assert.equal(s.truncated, false);
        assert.equal(s.next_cursor, null);
        assert.ok(s.documents.every((r) => r.document_id !== docIn[51]));
      });
    });
  });
}
