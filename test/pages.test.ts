import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type CallResult, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople, fixtureArtifact, personId } from './support/people.ts';
import { ok, refused } from './support/results.ts';
import { unpackText } from '../src/storage/packed.ts';

const NOT_FOUND = 'Tool failed: Artifact not found';
const MADE_UP = 'pg_0000000000zzzzzzzzzzzzzzzz';
const STRIPPED_NOTE =
  ' Its scripts, inline event handlers and javascript: URLs are stored as written but removed when the page is viewed.';
const BAD_VERSION = 'Tool failed: expected_version must be a non-negative integer';
const READ_ONLY = 'Tool failed: This document is read-only for you';
const COMMENT_ONLY = 'Tool failed: You can comment on this document but not edit it';
const ARCHIVED = 'Tool failed: This document is archived';

const utf8 = (s: string) => Buffer.byteLength(s, 'utf8');

for (const db of DATABASES) {
  describe(`pages on ${db.name}`, () => {
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
    const art = (key: string) => fixtureArtifact(h, key);
    const person = (email: string) => personId(h, email);

    async function create(
      caller: ToolCaller,
      args: Record<string, unknown> = {},
    ): Promise<{ id: string; version: number }> {
      const s = ok(await caller.call('create_page', { title: 'Scratch', html: '<p>scratch</p>\n', ...args }));
      assert.equal(typeof s.page_id, 'string');
      assert.equal(typeof s.version, 'number');
      return { id: s.page_id as string, version: s.version as number };
    }

    async function row(id: string) {
      return sql().selectFrom('artifacts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    }

    async function checkpoints(id: string) {
      return sql()
        .selectFrom('checkpoints')
        .selectAll()
        .where('artifact_id', '=', id)
        .orderBy('doc_version')
        .orderBy('id')
        .execute();
    }

    async function artifactCount(): Promise<number> {
      return (await sql().selectFrom('artifacts').select('id').execute()).length;
    }

    async function messageIds(): Promise<string[]> {
      return (await sql().selectFrom('messages').select('id').orderBy('id').execute()).map((m) => m.id);
    }

    /** What read_page shows the owner, to compare before and after a refused write. */
    async function snapshot(id: string) {
      const r = ok(await ada.call('read_page', { page_id: id }));
      return { html: r.html, version: r.version, checkpoints: (await checkpoints(id)).length };
    }

    describe('create_page', () => {
      it('creates a personal page by default: owner role, version 1, visible to nobody else', async () => {
        const html = '<h1>Plan</h1>\n<p>Steps</p>\n';
        const r = await ada.call('create_page', { title: 'My plan', html });
        const s = ok(r);
        const id = s.page_id as string;
        assert.match(id, /^pg_/);
        assert.deepEqual(s, {
          page_id: id,
          title: 'My plan',
          version: 1,
          byte_size: utf8(html),
          warnings: [],
        });
        assert.equal(r.text, `Created page My plan (page_id: ${id}, version 1).`);

        const stored = await row(id);
        assert.equal(stored.scope, 'user');
        assert.equal(stored.pod_id, null);
        assert.equal(stored.conversation_id, null);
        assert.equal(stored.owner_id, person('ada@acme.test'));

        const read = ok(await ada.call('read_page', { page_id: id }));
        assert.equal(read.role, 'owner');
        assert.equal(read.html, html);
        assert.equal(read.version, 1);
        for (const stranger of [bob, cy, dee, eve])
          refused(await stranger.call('read_page', { page_id: id }), NOT_FOUND);
      });

      it('scope user given explicitly behaves like the default', async () => {
        const { id } = await create(ada, { scope: 'user' });
        assert.equal((await row(id)).scope, 'user');
        refused(await bob.call('read_page', { page_id: id }), NOT_FOUND);
      });

      it('creates in a pod with scope pod and pod_id: members can edit, others cannot see it', async () => {
        const { id } = await create(ada, { scope: 'pod', pod_id: acme(h).pods.design });
        const stored = await row(id);
        assert.equal(stored.scope, 'pod');
        assert.equal(stored.pod_id, acme(h).pods.design);
        assert.equal(ok(await ada.call('read_page', { page_id: id })).role, 'owner');
        assert.equal(ok(await bob.call('read_page', { page_id: id })).role, 'editor');
        refused(await cy.call('read_page', { page_id: id }), NOT_FOUND);
        refused(await dee.call('read_page', { page_id: id }), NOT_FOUND);
      });

      it('creates an org page every member of the workspace can edit, and no one outside', async () => {
        const { id } = await create(bob, { scope: 'org' });
        assert.equal((await row(id)).scope, 'org');
        assert.equal(ok(await bob.call('read_page', { page_id: id })).role, 'owner');
        for (const member of [ada, cy, dee])
          assert.equal(ok(await member.call('read_page', { page_id: id })).role, 'editor');
        refused(await eve.call('read_page', { page_id: id }), NOT_FOUND);
      });

      it('posts nothing to any room when created with a scope', async () => {
        const before = await messageIds();
        await create(ada);
        await create(ada, { scope: 'org' });
        await create(ada, { scope: 'pod', pod_id: acme(h).pods.design });
        assert.deepEqual(await messageIds(), before);
      });

      it('with conversation_id, creates the page in the room and posts one card there', async () => {
        const general = acme(h).conversations.general!;
        const before = await messageIds();
        const { id } = await create(ada, { title: 'Room notes', conversation_id: general });

        const stored = await row(id);
        assert.equal(stored.conversation_id, general);
        assert.equal(stored.owner_id, person('ada@acme.test'));

        const added = (await sql().selectFrom('messages').selectAll().execute()).filter(
          (m) => !before.includes(m.id),
        );
        assert.equal(added.length, 1, 'exactly one message is posted');
        const card = added[0]!;
        assert.equal(card.conversation_id, general);
        assert.equal(card.kind, 'card');
        assert.equal(card.author_id, person('ada@acme.test'));
        assert.match(card.body, /Room notes/);
        assert.ok(card.card_json);
        const payload = JSON.parse(card.card_json) as Record<string, unknown>;
        assert.equal(payload.artifact_id, id);
        assert.equal(payload.artifact_type, 'html_app');
        assert.equal(payload.title, 'Room notes');

        // Participants of the room can edit it; others cannot see it.
        assert.equal(ok(await bob.call('read_page', { page_id: id })).role, 'editor');
        refused(await cy.call('read_page', { page_id: id }), NOT_FOUND);
      });

      it('refuses conversation_id together with a scope, creating nothing', async () => {
        const count = await artifactCount();
        const messages = await messageIds();
        for (const scope of ['user', 'pod', 'org', 'team']) {
          refused(
            await ada.call('create_page', {
              title: 'Both',
              html: '<p>x</p>',
              conversation_id: acme(h).conversations.general,
              scope,
              ...(scope === 'pod' ? { pod_id: acme(h).pods.design } : {}),
            }),
            'Tool failed: Pass either conversation_id or scope, not both',
          );
        }
        assert.equal(await artifactCount(), count);
        assert.deepEqual(await messageIds(), messages);
      });

      it('refuses a scope other than user, pod or org', async () => {
        const count = await artifactCount();
        for (const scope of ['team', 'USER', 'Org', 'mine', 'shared', '', 7, true]) {
          refused(
            await ada.call('create_page', { title: 'Bad scope', html: '<p>x</p>', scope }),
            'Tool failed: scope must be user, pod or org',
          );
        }
        assert.equal(await artifactCount(), count);
      });

      it('refuses scope pod without pod_id', async () => {
        const count = await artifactCount();
        refused(
          await ada.call('create_page', { title: 'Pod', html: '<p>x</p>', scope: 'pod' }),
          'Tool failed: pod_id is required for scope pod',
        );
        assert.equal(await artifactCount(), count);
      });

      it('treats a null pod_id or conversation_id as not given, as it does a null scope', async () => {
        const count = await artifactCount();
        refused(
          await ada.call('create_page', { title: 'Pod', html: '<p>x</p>', scope: 'pod', pod_id: null }),
          'Tool failed: pod_id is required for scope pod',
        );
        assert.equal(await artifactCount(), count);

        const viaScope = await create(ada, { scope: 'org', conversation_id: null });
        assert.equal((await row(viaScope.id)).scope, 'org');
        const viaRoom = await create(ada, { conversation_id: acme(h).conversations.general, scope: null });
        assert.equal((await row(viaRoom.id)).conversation_id, acme(h).conversations.general);
      });

      it('reports a pod the caller is not in exactly like a made-up pod, creating nothing', async () => {
        const count = await artifactCount();
        for (const podId of [acme(h).pods.ops, other(h).pods.eves, 'pod_0000000000zzzzzzzzzzzzzzzz']) {
          refused(
            await ada.call('create_page', { title: 'Pod', html: '<p>x</p>', scope: 'pod', pod_id: podId }),
            NOT_FOUND,
          );
        }
        assert.equal(await artifactCount(), count);
      });

      it('reports a conversation the caller cannot reach exactly like a made-up one, posting nothing', async () => {
        const count = await artifactCount();
        const messages = await messageIds();
        const unreachable: [ToolCaller, string][] = [
          [ada, acme(h).conversations.cyroom!],
          [ada, other(h).conversations.evroom!],
          [ada, 'cnv_0000000000zzzzzzzzzzzzzzzz'],
          [eve, acme(h).conversations.general!],
          // Dee is not in the archived room: she learns it is unreachable, not that it is archived.
          [dee, acme(h).conversations.old!],
        ];
        for (const [caller, conversationId] of unreachable) {
          refused(
            await caller.call('create_page', {
              title: 'Room',
              html: '<p>x</p>',
              conversation_id: conversationId,
            }),
            NOT_FOUND,
          );
        }
        assert.equal(await artifactCount(), count);
        assert.deepEqual(await messageIds(), messages);
      });

      it('refuses an archived room with the spec sentence and creates nothing', async () => {
        const count = await artifactCount();
        const messages = await messageIds();
        refused(
          await ada.call('create_page', {
            title: 'Late',
            html: '<p>x</p>',
            conversation_id: acme(h).conversations.old,
          }),
          'That conversation is archived or gone, so nothing was created.',
        );
        assert.equal(await artifactCount(), count);
        assert.deepEqual(await messageIds(), messages);
        const titled = await sql().selectFrom('artifacts').select('id').where('title', '=', 'Late').execute();
        assert.deepEqual(titled, []);
      });

      it('refuses empty or missing html and a missing title, creating nothing', async () => {
        const count = await artifactCount();
        refused(
          await ada.call('create_page', { title: 'Empty', html: '' }),
          'Tool failed: html must be a non-empty string',
        );
        refused(
          await ada.call('create_page', { title: 'Empty' }),
          'Tool failed: html must be a non-empty string',
        );
        refused(
          await ada.call('create_page', { html: '<p>x</p>' }),
          'Tool failed: title must be a non-empty string',
        );
        assert.equal(await artifactCount(), count);
      });

      it('has no idempotency: the same create twice makes two pages', async () => {
        const args = { title: 'Twice', html: '<p>twice</p>' };
        const first = await create(ada, args);
        const second = await create(ada, args);
        assert.notEqual(first.id, second.id);
        assert.equal(ok(await ada.call('read_page', { page_id: first.id })).html, '<p>twice</p>');
        assert.equal(ok(await ada.call('read_page', { page_id: second.id })).html, '<p>twice</p>');
      });

      it('needs the documents:write scope', async () => {
        const reader = await h.as('ada@acme.test', ['documents:read']);
        const count = await artifactCount();
        refused(
          await reader.call('create_page', { title: 'No scope', html: '<p>x</p>' }),
          'Tool failed: create_page needs the documents:write scope, which this connection was not granted',
        );
        assert.equal(await artifactCount(), count);
      });
    });

    describe('html is stored verbatim', () => {
      const samples: [string, string][] = [
        ['unicode', '<p>Grüße, 日本語, עברית, emoji 🎉👩🏽‍💻, combining é</p>\n'],
        ['CRLF line endings', '<html>\r\n<body>\r\n<p>one</p>\r\n<p>two</p>\r\n</body>\r\n</html>\r\n'],
        ['lone CR line endings', '<p>a</p>\r<p>b</p>\r'],
        [
          'odd whitespace',
          '\ufeff  <div>\t\u000b\f tab, vtab, form feed;\u00a0nbsp;\u2028line sep;\u2029para sep;\u3000ideographic</div>   \n\n\n',
        ],
        [
          'no trailing newline and entity text',
          '<p>&amp; &lt;b&gt; &#x1F600; "quotes" \'single\' \\backslash</p>',
        ],
        ['a fragment that is not well-formed', '<div><p>unclosed <b>bold<i>mixed</b></div></span>'],
      ];

      for (const [label, html] of samples) {
        it(`keeps ${label} byte for byte`, async () => {
          const created = ok(await ada.call('create_page', { title: label, html }));
          const id = created.page_id as string;
          assert.equal(created.byte_size, utf8(html));

          const r = await ada.call('read_page', { page_id: id });
          const read = ok(r);
          assert.equal(read.html, html);
          assert.equal(read.byte_size, utf8(html));
          assert.equal(r.text, `# ${label} (version 1)\n\n${html}`);
          assert.equal((await row(id)).content, html);
        });
      }

      it('keeps a 200 KB page byte for byte', async () => {
        const line = '<p data-n="x">Größe — 大きい 📄 &nbsp; text</p>\r\n';
        let html = '<!doctype html>\n<html><body>\n';
        while (utf8(html) < 200 * 1024) html += line;
        html += '</body></html>\n';
        assert.ok(utf8(html) >= 200 * 1024);

        const created = ok(await ada.call('create_page', { title: 'Big', html }));
        const id = created.page_id as string;
        assert.equal(created.byte_size, utf8(html));
        const read = ok(await ada.call('read_page', { page_id: id }));
        assert.equal(read.html, html);
        assert.equal(read.byte_size, utf8(html));

        const rewritten = html.replace('</body>', '<p>end</p></body>');
        const w = ok(await ada.call('write_page', { page_id: id, html: rewritten, expected_version: 1 }));
        assert.equal(w.byte_size, utf8(rewritten));
        assert.equal(ok(await ada.call('read_page', { page_id: id })).html, rewritten);
        const [cp] = await checkpoints(id);
        // Version rows keep large sources deflated; unpacked, it is the page byte for byte.
        assert.equal(unpackText(cp?.content ?? null), html);
      });

      it('keeps a title with unicode in the text form', async () => {
        const title = 'Straße — 計画 📄';
        const r = await ada.call('create_page', { title, html: '<p>x</p>' });
        const s = ok(r);
        assert.equal(s.title, title);
        assert.equal(r.text, `Created page ${title} (page_id: ${String(s.page_id)}, version 1).`);
        const read = await ada.call('read_page', { page_id: s.page_id });
        assert.equal(read.text, `# ${title} (version 1)\n\n<p>x</p>`);
      });
    });

    describe('warnings', () => {
      const active: [string, string][] = [
        ['a script element', '<p>hi</p><script>alert(1)</script>'],
        ['an uppercase script element', '<SCRIPT SRC="https://cdn.test/x.js"></SCRIPT>'],
        ['a script in svg', '<svg><script>alert(1)</script></svg>'],
        ['an inline event handler', '<img src="a.png" onerror="alert(1)">'],
        ['an uppercase inline event handler', '<body ONLOAD="go()"><p>x</p></body>'],
        ['a javascript: link', '<a href="javascript:alert(1)">click</a>'],
        ['a mixed-case javascript: link', '<a href="JaVaScRiPt:alert(1)">click</a>'],
        ['an entity-encoded javascript: link', '<a href="&#106;&#97;vascript&#58;alert(1)">click</a>'],
        ['a hex-entity javascript: link', '<a href="&#x6A;avascript&colon;alert(1)">click</a>'],
        ['a tab-obfuscated javascript: link', '<a href="java\tscript:alert(1)">click</a>'],
        ['an entity-newline-obfuscated javascript: link', '<a href="jav&#x0A;ascript:alert(1)">click</a>'],
        ['a javascript: link with leading spaces', '<a href="   javascript:alert(1)">click</a>'],
        ['a javascript: form action', '<form action="javascript:alert(1)"><button>go</button></form>'],
        ['a javascript: iframe', '<iframe src="javascript:alert(1)"></iframe>'],
        ['a script inside srcdoc', '<iframe srcdoc="&lt;script&gt;alert(1)&lt;/script&gt;"></iframe>'],
        ['a script inside a template', '<template><script>alert(1)</script></template>'],
        [
          'an svg xlink:href javascript: link',
          '<svg><a xlink:href="javascript:alert(1)"><text>x</text></a></svg>',
        ],
      ];
      for (const [label, html] of active) {
        it(`warns script_stripped for ${label}, and stores it anyway`, async () => {
          const r = await ada.call('create_page', { title: 'Active', html });
          const s = ok(r);
          assert.deepEqual(s.warnings, ['script_stripped']);
          assert.equal(
            r.text,
            `Created page Active (page_id: ${String(s.page_id)}, version 1).${STRIPPED_NOTE}`,
          );
          const read = ok(await ada.call('read_page', { page_id: s.page_id }));
          assert.equal(read.html, html, 'scripts are kept in the stored source');
        });
      }

      const harmless: [string, string][] = [
        ['plain markup', '<h1>Title</h1><p>Body</p>'],
        ['text mentioning javascript:', '<p>Links that start with javascript: are dangerous.</p>'],
        ['escaped script text', '<pre>&lt;script&gt;alert(1)&lt;/script&gt;</pre>'],
        ['an attribute named data-onload', '<div data-onload="init">x</div>'],
        ['a title attribute mentioning javascript:', '<abbr title="javascript:void(0)">JS</abbr>'],
        [
          'an https link mentioning javascript: in its query',
          '<a href="https://example.test/?q=javascript:alert(1)">search</a>',
        ],
        ['a script inside a comment', '<!-- <script>alert(1)</script> --><p>x</p>'],
        ['script text inside a textarea', '<textarea><script>alert(1)</script></textarea>'],
        ['an alt text naming an event', '<img src="a.png" alt="onerror">'],
        ['inline styles', '<p style="color: red">x</p><style>p { margin: 0 }</style>'],
      ];
      for (const [label, html] of harmless) {
        it(`gives no warning for ${label}`, async () => {
          const r = await ada.call('create_page', { title: 'Calm', html });
          const s = ok(r);
          assert.deepEqual(s.warnings, []);
          assert.equal(r.text, `Created page Calm (page_id: ${String(s.page_id)}, version 1).`);
        });
      }

      it('write_page warns for the new source, not the old one', async () => {
        const { id } = await create(ada, { html: '<script>x()</script>' });
        const calm = ok(
          await ada.call('write_page', { page_id: id, html: '<p>calm</p>', expected_version: 1 }),
        );
        assert.deepEqual(calm.warnings, []);
        const r = await ada.call('write_page', {
          page_id: id,
          html: '<p onclick="x()">hot</p>',
          expected_version: 2,
        });
        assert.deepEqual(ok(r).warnings, ['script_stripped']);
        assert.ok(r.text.endsWith(STRIPPED_NOTE), r.text);
      });
    });

    describe('read_page', () => {
      it('returns the stored source, version and a heading with title and version', async () => {
        const html = '<h1>Hi</h1>\n<p>Welcome</p>\n<p>Welcome</p>\n';
        const r = await ada.call('read_page', { page_id: art('landing') });
        assert.deepEqual(ok(r), {
          page_id: art('landing'),
          title: 'Landing',
          html,
          version: 1,
          byte_size: utf8(html),
          role: 'owner',
          archived: false,
        });
        assert.equal(r.text, `# Landing (version 1)\n\n${html}`);
      });

      it('lets every role read, reporting the role', async () => {
        assert.equal(ok(await bob.call('read_page', { page_id: art('landing') })).role, 'commenter');
        assert.equal(ok(await cy.call('read_page', { page_id: art('landing') })).role, 'viewer');
      });

      it('reads an archived page and says it is archived', async () => {
        const s = ok(await bob.call('read_page', { page_id: art('archived_page') }));
        assert.equal(s.archived, true);
        assert.equal(s.html, '<p>old</p>');
      });

      it('refuses a document, pointing to read_document', async () => {
        for (const key of ['roadmap', 'notes']) {
          const r = await ada.call('read_page', { page_id: art(key) });
          assert.equal(r.isError, true);
          assert.ok(r.text.startsWith('That artifact is a document, not an HTML page'), r.text);
          assert.match(r.text, /read_document/);
          assert.equal(r.structured, undefined);
        }
      });

      it('refuses a table', async () => {
        const r = await dee.call('read_page', { page_id: art('budget') });
        assert.equal(r.isError, true);
        assert.ok(r.text.startsWith('That artifact is a table'), r.text);
      });

      it('says a page without stored source has no content yet', async () => {
        refused(await ada.call('read_page', { page_id: art('empty_page') }), 'That page has no content yet.');
      });
    });

    describe('write_page', () => {
      it('replaces the page, returns version + 1 and keeps the previous source as a checkpoint', async () => {
        const oldHtml = '<h1>v1</h1>\n<p>first</p>\n';
        const { id } = await create(ada, { title: 'Versioned', html: oldHtml });
        const newHtml = '<h1>v2</h1>\r\n<p>second — ünïcödé</p>\n';

        const r = await ada.call('write_page', { page_id: id, html: newHtml, expected_version: 1 });
        assert.deepEqual(ok(r), { page_id: id, new_version: 2, byte_size: utf8(newHtml), warnings: [] });
        assert.equal(r.text, `Wrote page ${id}; it is now at version 2 (${utf8(newHtml)} bytes).`);

        const read = ok(await ada.call('read_page', { page_id: id }));
        assert.equal(read.html, newHtml);
        assert.equal(read.version, 2);
        assert.equal(read.title, 'Versioned');

        const cps = await checkpoints(id);
        assert.equal(cps.length, 1);
        assert.equal(cps[0]?.doc_version, 1);
        assert.equal(cps[0]?.content, oldHtml);
        assert.equal(cps[0]?.author_id, person('ada@acme.test'));

        // The next write chains from the returned version and checkpoints version 2.
        const third = ok(
          await ada.call('write_page', { page_id: id, html: '<p>3</p>', expected_version: 2 }),
        );
        assert.equal(third.new_version, 3);
        const after = await checkpoints(id);
        assert.deepEqual(
          after.map((c) => [c.doc_version, c.content]),
          [
            [1, oldHtml],
            [2, newHtml],
          ],
        );
        assert.deepEqual(await h.services.pages.sourceAt(id, 1), { title: 'Versioned', html: oldHtml });
        assert.deepEqual(await h.services.pages.sourceAt(id, 2), { title: 'Versioned', html: newHtml });
        assert.deepEqual(await h.services.pages.sourceAt(id, 3), { title: 'Versioned', html: '<p>3</p>' });
      });

      it('fills a page that had no content from version 0', async () => {
        const { id } = await create(ada, { scope: 'org' });
        await sql()
          .updateTable('artifacts')
          .set({ content: null, version: 0 })
          .where('id', '=', id)
          .execute();
        refused(await ada.call('read_page', { page_id: id }), 'That page has no content yet.');
        const w = ok(
          await ada.call('write_page', { page_id: id, html: '<p>first</p>', expected_version: 0 }),
        );
        assert.equal(w.new_version, 1);
        const read = ok(await ada.call('read_page', { page_id: id }));
        assert.equal(read.html, '<p>first</p>');
        assert.equal(read.version, 1);
      });

      it('refuses a stale expected_version with version_conflict, a diff of what moved, and changes nothing', async () => {
        const { id } = await create(ada, { html: 'A\nB\nC\n' });
        ok(await ada.call('write_page', { page_id: id, html: 'A\nB2\nC\n', expected_version: 1 }));
        const before = await snapshot(id);

        const r = await ada.call('write_page', { page_id: id, html: 'A\nmine\nC\n', expected_version: 1 });
        assert.equal(r.isError, true);
        assert.equal(
          r.text,
          'Tool failed: version_conflict: The page moved from version 1 to 2 since your read. Re-read it with read_page and retry with expected_version 2.',
        );
        assert.deepEqual(r.structured, {
          error: 'version_conflict',
          page_id: id,
          expected_version: 1,
          current_version: 2,
          diff_excerpt: '@@ -1,3 +1,3 @@\n A\n-B\n+B2\n C',
          changed_range: { start_line: 2, end_line: 2 },
        });
        assert.deepEqual(await snapshot(id), before);
        assert.equal(before.html, 'A\nB2\nC\n');
      });

      it('diffs from the version the caller read to the current one across several writes', async () => {
        const { id } = await create(ada, { html: 'one\ntwo\nthree\nfour\nfive\nsix\nseven\n' });
        ok(
          await ada.call('write_page', {
            page_id: id,
            html: 'one\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n',
            expected_version: 1,
          }),
        );
        ok(
          await ada.call('write_page', {
            page_id: id,
            html: 'ONE\ntwo\nthree\nfour\nfive\nsix\nSEVEN\n',
            expected_version: 2,
          }),
        );

        const fromOne = await ada.call('write_page', { page_id: id, html: '<p>x</p>', expected_version: 1 });
        assert.equal(fromOne.isError, true);
        assert.equal(fromOne.structured?.current_version, 3);
        assert.equal(
          fromOne.structured?.diff_excerpt,
          '@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n three\n@@ -5,3 +5,3 @@\n five\n six\n-seven\n+SEVEN',
        );
        assert.deepEqual(fromOne.structured?.changed_range, { start_line: 1, end_line: 7 });

        const fromTwo = await ada.call('write_page', { page_id: id, html: '<p>x</p>', expected_version: 2 });
        assert.equal(fromTwo.structured?.expected_version, 2);
        assert.equal(fromTwo.structured?.diff_excerpt, '@@ -1,3 +1,3 @@\n-one\n+ONE\n two\n three');
        assert.deepEqual(fromTwo.structured?.changed_range, { start_line: 1, end_line: 1 });
        assert.equal(ok(await ada.call('read_page', { page_id: id })).version, 3);
      });

      it('refuses an expected_version ahead of the page, naming the current version', async () => {
        const { id } = await create(ada, { html: '<p>v1</p>' });
        const before = await snapshot(id);
        const r = await ada.call('write_page', { page_id: id, html: '<p>x</p>', expected_version: 5 });
        assert.equal(r.isError, true);
        assert.equal(
          r.text,
          'Tool failed: version_conflict: The page is at version 1, not 5. Re-read it with read_page and retry with expected_version 1.',
        );
        assert.equal(r.structured?.error, 'version_conflict');
        assert.equal(r.structured?.expected_version, 5);
        assert.equal(r.structured?.current_version, 1);
        assert.deepEqual(await snapshot(id), before);

        const zero = await ada.call('write_page', { page_id: id, html: '<p>x</p>', expected_version: 0 });
        assert.equal(zero.structured?.error, 'version_conflict');
        assert.equal(zero.structured?.current_version, 1);
        assert.deepEqual(await snapshot(id), before);
      });

      it('refuses a bad expected_version in the spec words, never a generic validation error', async () => {
        const { id } = await create(ada, { html: '<p>v1</p>' });
        const before = await snapshot(id);
        const bad: [string, Record<string, unknown>][] = [
          ['a numeric string', { expected_version: '3' }],
          ['a string of the current version', { expected_version: '1' }],
          ['a negative number', { expected_version: -1 }],
          ['a fraction', { expected_version: 1.5 }],
          ['null', { expected_version: null }],
          ['missing', {}],
          ['a boolean', { expected_version: true }],
          ['an object', { expected_version: { version: 1 } }],
          ['an array', { expected_version: [1] }],
          ['an unsafe integer', { expected_version: 2 ** 53 }],
        ];
        for (const [label, extra] of bad) {
          const r = await ada.call('write_page', { page_id: id, html: '<p>x</p>', ...extra });
          assert.equal(r.isError, true, label);
          assert.equal(r.text, BAD_VERSION, label);
          assert.doesNotMatch(r.text, /Input validation error/, label);
        }
        assert.deepEqual(await snapshot(id), before);
      });

      it('refuses empty or missing html and changes nothing', async () => {
        const { id } = await create(ada, { html: '<p>v1</p>' });
        const before = await snapshot(id);
        refused(
          await ada.call('write_page', { page_id: id, html: '', expected_version: 1 }),
          'Tool failed: html must be a non-empty string',
        );
        refused(
          await ada.call('write_page', { page_id: id, expected_version: 1 }),
          'Tool failed: html must be a non-empty string',
        );
        assert.deepEqual(await snapshot(id), before);
      });

      it('refuses a document, pointing to edit_document, and changes nothing', async () => {
        const before = await row(art('roadmap'));
        for (const caller of [ada, dee]) {
          const r = await caller.call('write_page', {
            page_id: art('roadmap'),
            html: '<p>x</p>',
            expected_version: 1,
          });
          assert.equal(r.isError, true);
          assert.ok(r.text.startsWith('That artifact is a document, not an HTML page'), r.text);
          assert.match(r.text, /edit_document/);
        }
        const now = await row(art('roadmap'));
        assert.equal(now.content, before.content);
        assert.equal(now.version, before.version);
      });

      it('refuses a table: tables cannot be edited', async () => {
        const before = await row(art('budget'));
        const r = await ada.call('write_page', {
          page_id: art('budget'),
          html: '<p>x</p>',
          expected_version: 1,
        });
        assert.equal(r.isError, true);
        assert.ok(r.text.startsWith('That artifact is a table'), r.text);
        assert.match(r.text, /cannot be edited/);
        const now = await row(art('budget'));
        assert.equal(now.table_json, before.table_json);
        assert.equal(now.content, before.content);
        assert.equal(now.version, before.version);
      });

      it('refuses a viewer and a commenter with the role sentences and changes nothing', async () => {
        const before = await snapshot(art('landing'));
        refused(
          await cy.call('write_page', { page_id: art('landing'), html: '<p>x</p>', expected_version: 1 }),
          READ_ONLY,
        );
        refused(
          await bob.call('write_page', { page_id: art('landing'), html: '<p>x</p>', expected_version: 1 }),
          COMMENT_ONLY,
        );
        assert.deepEqual(await snapshot(art('landing')), before);
      });

      it('refuses an archived page, even for its owner, and changes nothing', async () => {
        const before = await snapshot(art('archived_page'));
        for (const caller of [ada, bob, dee]) {
          refused(
            await caller.call('write_page', {
              page_id: art('archived_page'),
              html: '<p>new</p>',
              expected_version: 1,
            }),
            ARCHIVED,
          );
        }
        assert.deepEqual(await snapshot(art('archived_page')), before);
      });

      it('needs the documents:write scope; documents:read is enough to read', async () => {
        const { id } = await create(ada, { html: '<p>v1</p>' });
        const reader = await h.as('ada@acme.test', ['documents:read']);
        assert.equal(ok(await reader.call('read_page', { page_id: id })).version, 1);
        const before = await snapshot(id);
        refused(
          await reader.call('write_page', { page_id: id, html: '<p>x</p>', expected_version: 1 }),
          'Tool failed: write_page needs the documents:write scope, which this connection was not granted',
        );
        assert.deepEqual(await snapshot(id), before);

        const writer = await h.as('ada@acme.test', ['documents:write']);
        refused(
          await writer.call('read_page', { page_id: id }),
          'Tool failed: read_page needs the documents:read scope, which this connection was not granted',
        );
      });
    });

    describe('role sources for write_page', () => {
      async function write(caller: ToolCaller, id: string, html: string): Promise<CallResult> {
        const read = await caller.call('read_page', { page_id: id });
        const version = read.isError ? 1 : (read.structured?.version as number);
        return caller.call('write_page', { page_id: id, html, expected_version: version });
      }

      it('owner: the creator can write; another person cannot even see a personal page', async () => {
        const { id } = await create(ada, { html: '<p>mine</p>' });
        assert.equal(ok(await write(ada, id, '<p>owner edit</p>')).new_version, 2);
        refused(await write(bob, id, '<p>x</p>'), NOT_FOUND);
        assert.equal(ok(await ada.call('read_page', { page_id: id })).html, '<p>owner edit</p>');

        // Ownership is the only source here: once it passes to Bob, he writes and Ada (even as admin) cannot see it.
        await sql()
          .updateTable('artifacts')
          .set({ owner_id: person('bob@acme.test') })
          .where('id', '=', id)
          .execute();
        assert.equal(ok(await bob.call('read_page', { page_id: id })).role, 'owner');
        assert.equal(ok(await write(bob, id, '<p>bob owns it</p>')).new_version, 3);
        refused(await write(ada, id, '<p>x</p>'), NOT_FOUND);
        refused(await ada.call('read_page', { page_id: id }), NOT_FOUND);
      });

      it('explicit role: editor writes, commenter and viewer are refused, no role is not found', async () => {
        const { id } = await create(ada, { html: '<p>shared</p>' });
        const deeId = person('dee@acme.test');
        refused(await write(dee, id, '<p>x</p>'), NOT_FOUND);

        await sql()
          .insertInto('artifact_roles')
          .values({ artifact_id: id, person_id: deeId, role: 'editor' })
          .execute();
        assert.equal(ok(await dee.call('read_page', { page_id: id })).role, 'editor');
        assert.equal(ok(await write(dee, id, '<p>by dee</p>')).new_version, 2);
        assert.equal((await checkpoints(id))[0]?.author_id, deeId);

        await sql()
          .updateTable('artifact_roles')
          .set({ role: 'commenter' })
          .where('artifact_id', '=', id)
          .execute();
        refused(await write(dee, id, '<p>x</p>'), COMMENT_ONLY);

        await sql()
          .updateTable('artifact_roles')
          .set({ role: 'viewer' })
          .where('artifact_id', '=', id)
          .execute();
        refused(await write(dee, id, '<p>x</p>'), READ_ONLY);

        await sql().deleteFrom('artifact_roles').where('artifact_id', '=', id).execute();
        refused(await write(dee, id, '<p>x</p>'), NOT_FOUND);
        assert.equal(ok(await ada.call('read_page', { page_id: id })).html, '<p>by dee</p>');
      });

      it('pod membership makes a member an editor; leaving the pod makes the page not found', async () => {
        const pod = acme(h).pods.design!;
        const { id } = await create(ada, { scope: 'pod', pod_id: pod, html: '<p>pod</p>' });
        assert.equal(ok(await write(bob, id, '<p>by bob</p>')).new_version, 2);
        refused(await write(dee, id, '<p>x</p>'), NOT_FOUND);

        const deeId = person('dee@acme.test');
        await sql().insertInto('pod_members').values({ pod_id: pod, person_id: deeId }).execute();
        try {
          assert.equal(ok(await write(dee, id, '<p>by dee</p>')).new_version, 3);
        } finally {
          await sql()
            .deleteFrom('pod_members')
            .where('pod_id', '=', pod)
            .where('person_id', '=', deeId)
            .execute();
        }
        refused(await write(dee, id, '<p>x</p>'), NOT_FOUND);
        assert.equal(ok(await ada.call('read_page', { page_id: id })).html, '<p>by dee</p>');
      });

      it('a commenter role does not hold back a pod member from editing', async () => {
        const { id } = await create(ada, { scope: 'pod', pod_id: acme(h).pods.design, html: '<p>pod</p>' });
        await sql()
          .insertInto('artifact_roles')
          .values({ artifact_id: id, person_id: person('bob@acme.test'), role: 'commenter' })
          .execute();
        assert.equal(ok(await bob.call('read_page', { page_id: id })).role, 'editor');
        assert.equal(ok(await write(bob, id, '<p>bob</p>')).new_version, 2);
      });

      it('the fixture pod page: Bob (member) writes, Cy (other pod) does not see it', async () => {
        const id = art('pod_page');
        assert.equal(ok(await write(bob, id, '<p>pod by bob</p>')).new_version, 2);
        refused(await write(cy, id, '<p>x</p>'), NOT_FOUND);
      });

      it('conversation participation makes a participant an editor; leaving makes the page not found', async () => {
        const room = acme(h).conversations.general!;
        const { id } = await create(ada, { conversation_id: room, html: '<p>room</p>' });
        assert.equal(ok(await write(bob, id, '<p>by bob</p>')).new_version, 2);
        refused(await write(cy, id, '<p>x</p>'), NOT_FOUND);

        const cyId = person('cy@acme.test');
        await sql()
          .insertInto('conversation_participants')
          .values({ conversation_id: room, person_id: cyId })
          .execute();
        try {
          assert.equal(ok(await cy.call('read_page', { page_id: id })).role, 'editor');
          assert.equal(ok(await write(cy, id, '<p>by cy</p>')).new_version, 3);
        } finally {
          await sql()
            .deleteFrom('conversation_participants')
            .where('conversation_id', '=', room)
            .where('person_id', '=', cyId)
            .execute();
        }
        refused(await write(cy, id, '<p>x</p>'), NOT_FOUND);
        assert.equal(ok(await ada.call('read_page', { page_id: id })).html, '<p>by cy</p>');
      });

      it('the fixture room page: Bob (participant) writes, Dee does not see it', async () => {
        const id = art('room_page');
        assert.equal(ok(await write(bob, id, '<p>room by bob</p>')).new_version, 2);
        refused(await write(dee, id, '<p>x</p>'), NOT_FOUND);
      });

      it('org scope makes every member an editor; out of org scope, or outside the workspace, it is not found', async () => {
        const { id } = await create(ada, { scope: 'org', html: '<p>org</p>' });
        let version = 1;
        for (const member of [bob, cy, dee]) {
          const w = ok(
            await member.call('write_page', {
              page_id: id,
              html: `<p>v${version + 1}</p>`,
              expected_version: version,
            }),
          );
          version += 1;
          assert.equal(w.new_version, version);
        }
        refused(await write(eve, id, '<p>x</p>'), NOT_FOUND);

        await sql().updateTable('artifacts').set({ scope: 'user' }).where('id', '=', id).execute();
        refused(await write(dee, id, '<p>x</p>'), NOT_FOUND);
        assert.equal(ok(await ada.call('read_page', { page_id: id })).html, `<p>v${version}</p>`);
      });

      it('an explicit viewer role does not demote a member of an org page', async () => {
        const id = art('org_page');
        await sql()
          .insertInto('artifact_roles')
          .values({ artifact_id: id, person_id: person('dee@acme.test'), role: 'viewer' })
          .execute();
        assert.equal(ok(await dee.call('read_page', { page_id: id })).role, 'editor');
        assert.equal(ok(await write(dee, id, '<p>org by dee</p>')).new_version, 2);
      });
    });

    describe('what the caller cannot reach reads exactly like a made-up id', () => {
      async function unreachable(): Promise<[string, ToolCaller, string][]> {
        return [
          ['a made-up id', ada, MADE_UP],
          ['an empty id', ada, ''],
          ["another workspace's page", ada, other(h).artifacts.eve_page!],
          ["another workspace's document", ada, other(h).artifacts.eve_doc!],
          ['a page Dee holds no role on', dee, art('landing')],
          ['a document Dee holds no role on', dee, art('plan')],
          ['a pod page for someone outside the pod', cy, art('pod_page')],
          ['a room page for someone outside the room', cy, art('room_page')],
          ['an archived pod document for someone outside the pod', dee, art('notes')],
          ['an org page of Acme, for Eve', eve, art('org_page')],
          ['an org document of Acme, for Eve', eve, art('roadmap')],
          ['an org table of Acme, for Eve', eve, art('budget')],
        ];
      }

      it('read_page', async () => {
        const baseline = await ada.call('read_page', { page_id: MADE_UP });
        refused(baseline, NOT_FOUND);
        assert.equal(baseline.structured, undefined);
        for (const [label, caller, id] of await unreachable()) {
          const r = await caller.call('read_page', { page_id: id });
          assert.equal(r.isError, true, label);
          assert.equal(r.text, baseline.text, label);
          assert.equal(r.structured, undefined, label);
        }
      });

      it('write_page, with a valid version and html, changing nothing', async () => {
        const landing = await snapshot(art('landing'));
        const baseline = await ada.call('write_page', {
          page_id: MADE_UP,
          html: '<p>x</p>',
          expected_version: 1,
        });
        refused(baseline, NOT_FOUND);
        for (const [label, caller, id] of await unreachable()) {
          const r = await caller.call('write_page', { page_id: id, html: '<p>x</p>', expected_version: 1 });
          assert.equal(r.isError, true, label);
          assert.equal(r.text, baseline.text, label);
          assert.equal(r.structured, undefined, label);
        }
        assert.deepEqual(await snapshot(art('landing')), landing);
        const evePage = await row(other(h).artifacts.eve_page!);
        assert.equal(evePage.content, '<p>eve</p>');
        assert.equal(evePage.version, 1);
      });

      it('write_page with empty html or a stale version still says not found, not what is wrong with the call', async () => {
        for (const [label, caller, id] of await unreachable()) {
          for (const args of [
            { html: '', expected_version: 1 },
            { html: '<p>x</p>', expected_version: 9 },
          ]) {
            const r = await caller.call('write_page', { page_id: id, ...args });
            assert.equal(r.text, NOT_FOUND, label);
            assert.equal(r.structured, undefined, label);
          }
        }
      });

      it('Eve can still read and write her own page', async () => {
        const id = other(h).artifacts.eve_page!;
        assert.equal(ok(await eve.call('read_page', { page_id: id })).html, '<p>eve</p>');
        refused(await ada.call('read_page', { page_id: id }), NOT_FOUND);
      });
    });

    describe('concurrent writes with the same expected_version', () => {
      async function race(callers: ToolCaller[]) {
        const base = '<main>\n<p>base</p>\n</main>\n';
        const { id, version } = await create(ada, { scope: 'org', title: 'Race', html: base });
        const htmlOf = (i: number) => `<main>\n<p>writer ${i} — ✍️</p>\n</main>\n`;
        const results = await Promise.all(
          callers.map((c, i) =>
            c.call('write_page', { page_id: id, html: htmlOf(i), expected_version: version }),
          ),
        );

        const winners = results.flatMap((r, i) => (r.isError ? [] : [i]));
        assert.equal(
          winners.length,
          1,
          `exactly one write succeeds: ${results.map((r) => r.text).join(' | ')}`,
        );
        const winner = winners[0]!;
        assert.equal(results[winner]?.structured?.new_version, version + 1);

        const losers = results.filter((r) => r.isError);
        assert.equal(losers.length, callers.length - 1);
        for (const r of losers) {
          assert.equal(r.structured?.error, 'version_conflict', r.text);
          assert.equal(r.structured?.expected_version, version);
          assert.equal(r.structured?.current_version, version + 1);
          assert.equal(
            r.text,
            `Tool failed: version_conflict: The page moved from version ${version} to ${version + 1} since your read. Re-read it with read_page and retry with expected_version ${version + 1}.`,
          );
        }

        const read = ok(await ada.call('read_page', { page_id: id }));
        assert.equal(read.html, htmlOf(winner));
        assert.equal(read.version, version + 1);
        const stored = await row(id);
        assert.equal(stored.content, htmlOf(winner));

        const cps = await checkpoints(id);
        assert.equal(cps.length, 1, 'exactly one checkpoint is added');
        assert.equal(cps[0]?.doc_version, version);
        assert.equal(cps[0]?.content, base);
      }

      it('20 separate clients: one wins, nineteen get version_conflict', async () => {
        const emails = ['ada@acme.test', 'bob@acme.test', 'cy@acme.test', 'dee@acme.test'];
        const callers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => h.as(emails[i % emails.length]!)),
        );
        await race(callers);
      });

      it('one client sending 20 writes in parallel: one wins, nineteen get version_conflict', async () => {
        await race(Array.from({ length: 20 }, () => ada));
      });
    });
  });
}
