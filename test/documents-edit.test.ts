import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as Y from 'yjs';
import { liveBlocks } from '../src/domains/documents/model.ts';
import { DATABASES } from './support/databases.ts';
import { other, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople, fixtureArtifact } from './support/people.ts';
import { ok, refused } from './support/results.ts';
import { createDocument, readDocument } from './support/documents.ts';
import { personEdit as personEditAs, textIn } from './support/replica.ts';

const NOT_FOUND = 'Tool failed: Artifact not found';
const MADE_UP = 'doc_0000000000zzzzzzzzzzzzzzzz';
const READ_ONLY = 'Tool failed: This document is read-only for you';
const COMMENT_ONLY = 'Tool failed: You can comment on this document but not edit it';
const ARCHIVED = 'Tool failed: This document is archived';
const IS_PAGE = 'That artifact is an HTML page, not a document. Use write_page to change it.';
const IS_TABLE = 'That artifact is a table, and tables cannot be edited with these tools.';
const BAD_MODE = 'Tool failed: mode must be append, replace_section, replace_all or fill_empty';
const NEEDS_EXCERPT = 'Tool failed: section_excerpt is required for replace_section';
const NEEDS_VERSION = 'Tool failed: expected_version is required for replace_all';
const BAD_VERSION = 'Tool failed: expected_version must be a non-negative integer';
const NOT_EMPTY = 'Tool failed: not_empty: the document already has content, so fill_empty wrote nothing';
const NOT_FOUND_EXCERPT =
  'Tool failed: excerpt_not_found: section_excerpt does not match the document; the nearest passages are listed in candidates';
const CAP = 60_000;

const conflictText = (from: number, to: number) =>
  `Tool failed: version_conflict: the document moved from version ${from} to ${to} since your read. Read it again and retry with expected_version ${to}.`;

const wrote = (n: number, mode: string, v: number) =>
  `Wrote ${n} characters (${mode}); the document is now at version ${v}.`;

/** Paragraphs `prefix 0000` … each followed by a blank line: one block apiece. */
const paragraphs = (count: number, prefix = 'para') =>
  Array.from({ length: count }, (_, i) => `${prefix} ${String(i).padStart(4, '0')}\n\n`).join('');

interface Candidate {
  excerpt: string;
  similarity: number;
}

for (const db of DATABASES) {
  describe(`edit_document on ${db.name}`, () => {
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

    /** A document every Acme member can edit (org scope), owned by Ada. */
    async function create(content = ''): Promise<{ id: string; version: number }> {
      return createDocument(ada, { title: 'Edit me', scope: 'org', content_markdown: content });
    }

    async function read(id: string): Promise<{ markdown: string; version: number }> {
      return readDocument(ada, id);
    }

    async function checkpoints(id: string) {
      return sql()
        .selectFrom('checkpoints')
        .selectAll()
        .where('artifact_id', '=', id)
        .orderBy('id')
        .execute();
    }

    /** What a refused or dry call must leave exactly as it was. */
    async function snapshot(id: string) {
      const r = await read(id);
      return { ...r, checkpoints: (await checkpoints(id)).length };
    }

    async function edit(caller: ToolCaller, args: Record<string, unknown>) {
      return caller.call('edit_document', args);
    }

    /** Ids of the live blocks, in document order, with their text. */
    async function blocks(id: string) {
      const live = await h.services.documents.store.open(id);
      return liveBlocks(live.doc).map((b) => ({ id: b.id, text: b.text }));
    }

    /** A person's edit made on a replica of the live document and sent back as a Yjs update. */
    async function personEdit(id: string, change: (text: (containing: string) => Y.Text) => void) {
      await personEditAs(h, 'bob@acme.test', id, (replica) =>
        change((containing) => textIn(replica, containing)),
      );
    }

    describe('append', () => {
      it('adds the content as a new block at the end and reports the write', async () => {
        const { id, version } = await create('# Notes\n\nFirst point.\n');
        const r = await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Second point.\n' });
        const s = ok(r);
        assert.deepEqual(s, {
          document_id: id,
          mode: 'append',
          new_version: version + 1,
          written_chars: 'Second point.\n'.length,
          stopped_early: false,
        });
        assert.equal(r.text, wrote(14, 'append', version + 1));
        assert.deepEqual(await read(id), {
          markdown: '# Notes\n\nFirst point.\nSecond point.\n',
          version: version + 1,
        });
        const texts = (await blocks(id)).map((b) => b.text);
        assert.equal(texts.at(-1), 'Second point.\n', 'the appended content is a block of its own');
      });

      it('starts on a line of its own when the document does not end with a line break, counting only the content', async () => {
        const { id, version } = await create('Last line without a break');
        const s = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Appended' }));
        assert.equal(s.written_chars, 'Appended'.length);
        assert.equal(s.new_version, version + 1);
        assert.equal((await read(id)).markdown, 'Last line without a break\nAppended');
        assert.deepEqual(
          (await blocks(id)).map((b) => b.text),
          ['Last line without a break\n', 'Appended'],
        );

        // A new block: replacing it leaves the line before it alone.
        ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Appended',
            content_markdown: 'Replaced',
          }),
        );
        assert.equal((await read(id)).markdown, 'Last line without a break\nReplaced');
      });

      it('writes the content verbatim into an empty document, with no leading line break', async () => {
        const { id, version } = await create();
        assert.equal(version, 0);
        const s = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: '# Start\n' }));
        assert.equal(s.new_version, 1);
        assert.equal((await read(id)).markdown, '# Start\n');
      });

      it('reports no drift field without expected_version, false when it is current', async () => {
        const { id, version } = await create('One.\n');
        const plain = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Two.\n' }));
        assert.equal('version_drift' in plain, false);
        assert.equal('blocks_changed_since' in plain, false);
        const current = await edit(ada, {
          document_id: id,
          mode: 'append',
          content_markdown: 'Three.\n',
          expected_version: version + 1,
        });
        const s = ok(current);
        assert.equal(s.version_drift, false);
        assert.equal('blocks_changed_since' in s, false);
        assert.equal(current.text, wrote(7, 'append', version + 2));
      });

      it('writes with a stale expected_version and reports the drift and the blocks changed since', async () => {
        const { id, version } = await create('One.\n');
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Two.\n' }));
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Three.\n' }));
        const r = await edit(ada, {
          document_id: id,
          mode: 'append',
          content_markdown: 'Four.\n',
          expected_version: version,
        });
        const s = ok(r);
        assert.equal(s.new_version, version + 3);
        assert.equal(s.version_drift, true);
        assert.equal(s.blocks_changed_since, 2, 'two blocks were added since the version read');
        assert.ok(r.text.startsWith(wrote(6, 'append', version + 3)), r.text);
        assert.equal((await read(id)).markdown, 'One.\nTwo.\nThree.\nFour.\n');
      });

      it('normalises CR and CRLF to LF and counts the characters written after that', async () => {
        const { id } = await create();
        const s = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'a\r\nb\rc\n' }));
        assert.equal(s.written_chars, 6);
        assert.equal((await read(id)).markdown, 'a\nb\nc\n');
      });
    });

    describe('replace_section', () => {
      const DOC =
        '# Plan\n\nIntro line.\n\n## Steps\n\nStep one is here.\nStill step one.\n\nStep two.\n\n## End\n\nBye.\n';

      it('matches the excerpt ignoring white space and replaces the whole blocks it covers', async () => {
        const { id, version } = await create(DOC);
        const before = await blocks(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          // Only part of the first block and part of the second, with white space reflowed.
          section_excerpt: 'is   here. Still\tstep one.\n\n\nStep',
          content_markdown: 'New steps.\n\n',
        });
        const s = ok(r);
        assert.deepEqual(s, {
          document_id: id,
          mode: 'replace_section',
          new_version: version + 1,
          written_chars: 12,
          stopped_early: false,
        });
        assert.equal(r.text, wrote(12, 'replace_section', version + 1));
        assert.equal(
          (await read(id)).markdown,
          '# Plan\n\nIntro line.\n\n## Steps\n\nNew steps.\n\n## End\n\nBye.\n',
        );
        const after = await blocks(id);
        const kept = before.filter((b) => !/Step (one|two)/.test(b.text)).map((b) => b.id);
        assert.deepEqual(
          after.filter((b) => b.text !== 'New steps.\n\n').map((b) => b.id),
          kept,
          'the blocks outside the section are the same blocks as before',
        );
      });

      it('replaces a whole block when the excerpt is only a few words inside it', async () => {
        const { id } = await create(DOC);
        ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Intro',
            content_markdown: 'Better intro.\n\n',
          }),
        );
        assert.equal(
          (await read(id)).markdown,
          '# Plan\n\nBetter intro.\n\n## Steps\n\nStep one is here.\nStill step one.\n\nStep two.\n\n## End\n\nBye.\n',
        );
      });

      it('never refuses a stale version: it writes and reports version_drift and blocks_changed_since', async () => {
        const { id, version } = await create(DOC);
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Appendix.\n' }));
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Bye.',
          content_markdown: 'Farewell.\n',
          expected_version: version,
        });
        const s = ok(r);
        assert.equal(s.new_version, version + 2);
        assert.equal(s.version_drift, true);
        assert.equal(s.blocks_changed_since, 1);
        assert.ok(r.text.startsWith(wrote(10, 'replace_section', version + 2)), r.text);
        assert.match((await read(id)).markdown, /## End\n\nFarewell\.\nAppendix\.\n$/);
      });

      it('reports version_drift false and no blocks_changed_since when expected_version is current', async () => {
        const { id, version } = await create(DOC);
        const s = ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Bye.',
            content_markdown: 'Farewell.\n',
            expected_version: version,
          }),
        );
        assert.equal(s.version_drift, false);
        assert.equal('blocks_changed_since' in s, false);
      });

      it('reports blocks_changed_since when a person edited after the agent’s own last write', async () => {
        const { id } = await create(DOC);
        const own = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Appendix.\n' }));
        await personEdit(id, (text) => text('Intro line.').insert(0, 'Edited. '));
        const s = ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'Bye.',
            content_markdown: 'Farewell.\n',
            expected_version: own.new_version,
          }),
        );
        assert.equal(s.version_drift, true);
        assert.equal(s.blocks_changed_since, 1, 'one block changed since the version the agent wrote');
      });

      it('refuses an excerpt that does not match with excerpt_not_found and the nearest passages, writing nothing', async () => {
        const { id } = await create(DOC);
        const before = await snapshot(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Step two is here.',
          content_markdown: 'Anything.\n',
          expected_version: before.version,
        });
        refused(r, NOT_FOUND_EXCERPT);
        const s = r.structured as { error: string; candidates: Candidate[] };
        assert.equal(s.error, 'excerpt_not_found');
        assert.ok(s.candidates.length >= 1 && s.candidates.length <= 3, 'a few candidates');
        for (const c of s.candidates) {
          assert.equal(typeof c.excerpt, 'string');
          assert.ok(c.similarity >= 0 && c.similarity <= 1, `similarity ${c.similarity} in 0..1`);
        }
        const sims = s.candidates.map((c) => c.similarity);
        assert.deepEqual(
          sims,
          [...sims].sort((a, b) => b - a),
          'best first',
        );
        assert.match(s.candidates[0]!.excerpt, /Step/);
        // A failed replace_section is never turned into an append: nothing changed.
        assert.deepEqual(await snapshot(id), before);
      });

      it('lists candidates that can be passed back as section_excerpt', async () => {
        const { id } = await create(DOC);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Intro lines',
          content_markdown: 'x\n\n',
          dry_run: true,
        });
        const best = (r.structured as { candidates: Candidate[] }).candidates[0]!;
        assert.equal(best.excerpt, 'Intro line.');
        ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: best.excerpt,
            content_markdown: 'Intro, fixed.\n\n',
          }),
        );
        assert.match((await read(id)).markdown, /^# Plan\n\nIntro, fixed\.\n\n## Steps/);
      });

      it('lists a long nearest passage in a form that can still be passed back as section_excerpt', async () => {
        const long = `${'The committee reviewed every line item of the budget in detail. '.repeat(8)}\n\n`;
        const { id } = await create(`# Budget\n\n${long}## Next\n\nMore.\n`);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'The committee reviewed every line item of the budgets in detail.',
          content_markdown: 'Summary.\n\n',
        });
        refused(r, NOT_FOUND_EXCERPT);
        const candidates = (r.structured as { candidates: Candidate[] }).candidates;
        const back = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: candidates[0]!.excerpt,
          content_markdown: 'Summary.\n\n',
          dry_run: true,
        });
        assert.equal(back.isError, false, `the best candidate does not resolve: ${back.text}`);
      });

      it('refuses an excerpt that matches several places with excerpt_ambiguous and their locations', async () => {
        const { id } = await create('Alpha.\n\nRepeat me.\n\nBeta.\n\nRepeat me.\n\nGamma.\n');
        const before = await snapshot(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Repeat  me.',
          content_markdown: 'Once.\n\n',
        });
        refused(
          r,
          'Tool failed: excerpt_ambiguous: section_excerpt matches 2 places; quote more of the section',
        );
        const s = r.structured as { error: string; locations: { excerpt: string }[] };
        assert.equal(s.error, 'excerpt_ambiguous');
        assert.equal(s.locations.length, 2);
        for (const l of s.locations) assert.match(l.excerpt, /Repeat me\./);
        assert.deepEqual(await snapshot(id), before);
      });

      it('answers a stale version with a missing excerpt as excerpt_not_found, not as a version conflict', async () => {
        const { id, version } = await create(DOC);
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'More.\n' }));
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'Nowhere to be found',
          content_markdown: 'x\n',
          expected_version: version,
        });
        refused(r, NOT_FOUND_EXCERPT);
      });

      it('requires a section_excerpt', async () => {
        const { id } = await create(DOC);
        const before = await snapshot(id);
        for (const excerpt of [undefined, '', '  \n\t ']) {
          refused(
            await edit(ada, {
              document_id: id,
              mode: 'replace_section',
              content_markdown: 'x\n',
              ...(excerpt === undefined ? {} : { section_excerpt: excerpt }),
            }),
            NEEDS_EXCERPT,
          );
        }
        assert.deepEqual(await snapshot(id), before);
      });
    });

    describe('replace_all', () => {
      it('requires expected_version', async () => {
        const { id } = await create('Keep.\n');
        const before = await snapshot(id);
        refused(
          await edit(ada, { document_id: id, mode: 'replace_all', content_markdown: 'x\n' }),
          NEEDS_VERSION,
        );
        refused(
          await edit(ada, { document_id: id, mode: 'replace_all', content_markdown: 'x\n', dry_run: true }),
          NEEDS_VERSION,
        );
        assert.deepEqual(await snapshot(id), before);
      });

      it('replaces everything when expected_version is current', async () => {
        const { id, version } = await create('# Old\n\nOld body.\n');
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_all',
          content_markdown: '# New\n\nNew body.\n',
          expected_version: version,
        });
        assert.deepEqual(ok(r), {
          document_id: id,
          mode: 'replace_all',
          new_version: version + 1,
          written_chars: 17,
          stopped_early: false,
          version_drift: false,
        });
        assert.equal(r.text, wrote(17, 'replace_all', version + 1));
        assert.deepEqual(await read(id), { markdown: '# New\n\nNew body.\n', version: version + 1 });
      });

      it('refuses a stale version with version_conflict, current_version and blocks_changed_since', async () => {
        const { id, version } = await create('One.\n\nTwo.\n');
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Three.\n' }));
        const before = await snapshot(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'Everything new.\n',
          expected_version: version,
        });
        refused(r, conflictText(version, version + 1));
        assert.deepEqual(r.structured, {
          error: 'version_conflict',
          expected_version: version,
          current_version: version + 1,
          blocks_changed_since: 1,
        });
        assert.deepEqual(await snapshot(id), before);
        // The retry is the same call with the current version.
        ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_all',
            content_markdown: 'Everything new.\n',
            expected_version: version + 1,
          }),
        );
        assert.equal((await read(id)).markdown, 'Everything new.\n');
      });

      it('leaves out blocks_changed_since when no checkpoint reaches back to the version given', async () => {
        const id = art('roadmap');
        assert.equal((await checkpoints(id)).length, 0, 'the imported document has no version rows');
        const before = await snapshot(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'x\n',
          expected_version: before.version - 1,
        });
        refused(r, conflictText(before.version - 1, before.version));
        assert.deepEqual(r.structured, {
          error: 'version_conflict',
          expected_version: before.version - 1,
          current_version: before.version,
        });
        assert.deepEqual(await snapshot(id), before);
      });

      it('refuses a version from the future too', async () => {
        const { id, version } = await create('One.\n');
        refused(
          await edit(ada, {
            document_id: id,
            mode: 'replace_all',
            content_markdown: 'x\n',
            expected_version: version + 5,
          }),
          conflictText(version + 5, version),
        );
      });

      it('gives blocks_changed_since when a person edited after the agent’s own last write', async () => {
        const { id } = await create('One.\n\nTwo.\n');
        const own = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Three.\n' }));
        await personEdit(id, (text) => text('Two.').insert(0, 'Edited: '));
        const now = await read(id);
        assert.equal(now.version, (own.new_version as number) + 1);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'x\n',
          expected_version: own.new_version,
        });
        refused(r, conflictText(own.new_version as number, now.version));
        assert.equal(
          (r.structured as { blocks_changed_since?: number }).blocks_changed_since,
          1,
          'a checkpoint reaches back past that version, so the change is counted',
        );
      });

      it('empties the document with empty content, after which fill_empty writes', async () => {
        const { id, version } = await create('Something.\n\nElse.\n');
        const s = ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_all',
            content_markdown: '',
            expected_version: version,
          }),
        );
        assert.equal(s.written_chars, 0);
        assert.equal((await read(id)).markdown, '');
        ok(await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: 'Fresh.\n' }));
        assert.equal((await read(id)).markdown, 'Fresh.\n');
      });
    });

    describe('fill_empty', () => {
      it('writes into an empty document', async () => {
        const { id, version } = await create();
        const r = await edit(ada, {
          document_id: id,
          mode: 'fill_empty',
          content_markdown: '# Filled\n\nBody.\n',
        });
        assert.deepEqual(ok(r), {
          document_id: id,
          mode: 'fill_empty',
          new_version: version + 1,
          written_chars: 16,
          stopped_early: false,
        });
        assert.equal(r.text, wrote(16, 'fill_empty', version + 1));
        assert.equal((await read(id)).markdown, '# Filled\n\nBody.\n');
      });

      it('counts a document of only white space as empty and replaces that white space', async () => {
        const { id, version } = await create();
        ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_all',
            content_markdown: '\n\n   \n',
            expected_version: version,
          }),
        );
        ok(await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: 'Now real.\n' }));
        assert.equal((await read(id)).markdown, 'Now real.\n');
      });

      it('refuses a document with content with not_empty and writes nothing', async () => {
        const { id } = await create('Already here.\n');
        const before = await snapshot(id);
        const r = await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: 'Other.\n' });
        refused(r, NOT_EMPTY);
        assert.deepEqual(r.structured, { error: 'not_empty' });
        assert.deepEqual(await snapshot(id), before);
      });
    });

    describe('arguments', () => {
      it('refuses a missing or unknown mode', async () => {
        const { id } = await create('Body.\n');
        const before = await snapshot(id);
        for (const mode of [undefined, 'prepend', 'APPEND', 3]) {
          refused(
            await edit(ada, {
              document_id: id,
              content_markdown: 'x\n',
              ...(mode === undefined ? {} : { mode }),
            }),
            BAD_MODE,
          );
        }
        assert.deepEqual(await snapshot(id), before);
      });

      it('refuses an expected_version that is not a non-negative integer', async () => {
        const { id } = await create('Body.\n');
        const before = await snapshot(id);
        for (const mode of ['append', 'replace_all']) {
          for (const expected of [-1, 1.5, '1']) {
            refused(
              await edit(ada, { document_id: id, mode, content_markdown: 'x\n', expected_version: expected }),
              BAD_VERSION,
            );
          }
        }
        assert.deepEqual(await snapshot(id), before);
      });

      it('refuses content_markdown that is missing or not a string', async () => {
        const { id } = await create('Body.\n');
        const before = await snapshot(id);
        for (const content of [undefined, 42]) {
          const r = await edit(ada, {
            document_id: id,
            mode: 'append',
            ...(content === undefined ? {} : { content_markdown: content }),
          });
          assert.equal(r.isError, true);
          assert.match(r.text, /^Tool failed: .*content_markdown/);
        }
        assert.deepEqual(await snapshot(id), before);
      });
    });

    describe('dry_run', () => {
      it('resolves an append without writing: no blocks replaced, the current version, drift as passed', async () => {
        const { id, version } = await create('Body.\n');
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'More.\n' }));
        const before = await snapshot(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'append',
          content_markdown: 'x\n',
          dry_run: true,
        });
        assert.deepEqual(ok(r), {
          dry_run: true,
          document_id: id,
          mode: 'append',
          resolved: true,
          block_ids: [],
          current_version: version + 1,
          version_drift: false,
        });
        const stale = ok(
          await edit(ada, {
            document_id: id,
            mode: 'append',
            content_markdown: 'x\n',
            expected_version: version,
            dry_run: true,
          }),
        );
        assert.equal(stale.version_drift, true);
        assert.equal(stale.current_version, version + 1);
        assert.deepEqual(await snapshot(id), before);
      });

      it('resolves replace_section to the ids of the blocks it covers, in order', async () => {
        const { id, version } = await create('A.\n\nB one.\n\nB two.\n\nC.\n');
        const all = await blocks(id);
        const before = await snapshot(id);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_section',
          section_excerpt: 'one. B',
          content_markdown: 'x\n',
          dry_run: true,
        });
        const s = ok(r);
        assert.deepEqual(s, {
          dry_run: true,
          document_id: id,
          mode: 'replace_section',
          resolved: true,
          block_ids: [all[1]!.id, all[2]!.id],
          current_version: version,
          version_drift: false,
        });
        assert.match(r.text, /^Dry run \(replace_section\): nothing written\./);
        assert.deepEqual(await snapshot(id), before);
      });

      it('resolves replace_all and fill_empty to every live block, and reports drift on replace_section', async () => {
        const { id, version } = await create('A.\n\nB.\n');
        const ids = (await blocks(id)).map((b) => b.id);
        const all = ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_all',
            content_markdown: 'x\n',
            expected_version: version,
            dry_run: true,
          }),
        );
        assert.deepEqual(all.block_ids, ids);
        assert.equal(all.version_drift, false);
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'C.\n' }));
        const drift = ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'B.',
            content_markdown: 'x\n',
            expected_version: version,
            dry_run: true,
          }),
        );
        assert.equal(drift.version_drift, true);
        assert.equal(drift.current_version, version + 1);

        const empty = await create();
        const fill = ok(
          await edit(ada, {
            document_id: empty.id,
            mode: 'fill_empty',
            content_markdown: 'x\n',
            dry_run: true,
          }),
        );
        assert.deepEqual(fill.block_ids, []);
        assert.equal((await read(empty.id)).markdown, '');
      });

      it('gives the same refusals as the real call', async () => {
        const { id } = await create('Same.\n\nTwice.\n\nTwice.\n');
        const cases: Record<string, unknown>[] = [
          { mode: 'fill_empty', content_markdown: 'x\n' },
          { mode: 'replace_section', section_excerpt: 'Absent passage', content_markdown: 'x\n' },
          { mode: 'replace_section', section_excerpt: 'Twice.', content_markdown: 'x\n' },
          { mode: 'replace_section', content_markdown: 'x\n' },
          { mode: 'replace_all', content_markdown: 'x\n' },
          { mode: 'sideways', content_markdown: 'x\n' },
          { mode: 'append', content_markdown: 'x\n', expected_version: -3 },
        ];
        for (const c of cases) {
          const before = await snapshot(id);
          const real = await edit(ada, { document_id: id, ...c });
          const dry = await edit(ada, { document_id: id, ...c, dry_run: true });
          assert.equal(real.isError, true, JSON.stringify(c));
          assert.deepEqual(dry, real, `dry run of ${JSON.stringify(c)}`);
          assert.deepEqual(await snapshot(id), before);
        }
      });

      it('gives the same version_conflict as the real call, blocks_changed_since included', async () => {
        const { id, version } = await create('One.\n');
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'Two.\n' }));
        const args = {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'x\n',
          expected_version: version,
        };
        const dry = await edit(ada, { ...args, dry_run: true });
        const real = await edit(ada, args);
        refused(real, conflictText(version, version + 1));
        assert.equal((real.structured as { blocks_changed_since?: number }).blocks_changed_since, 1);
        assert.deepEqual(dry, real);
      });

      it('checks against the version the write would start from when a person’s edit is not stored yet', async () => {
        const { id, version } = await create('One.\n\nTwo.\n');
        await personEdit(id, (text) => text('Two.').insert(0, 'Edited: '));
        const args = {
          document_id: id,
          mode: 'replace_all',
          content_markdown: 'x\n',
          expected_version: version,
        };
        const dry = await edit(ada, { ...args, dry_run: true });
        const real = await edit(ada, args);
        assert.equal(real.isError, true, 'the person’s edit moved the version on');
        assert.equal(dry.isError, true, `the dry run should refuse as the real call does, got: ${dry.text}`);
        assert.equal(dry.text, real.text);
      });

      it('refuses roles, archived documents, pages and tables as the real call does', async () => {
        const cases: [ToolCaller, string, string][] = [
          [cy, art('plan'), READ_ONLY],
          [bob, art('plan'), COMMENT_ONLY],
          [ada, art('notes'), ARCHIVED],
          [dee, art('plan'), NOT_FOUND],
          [ada, art('landing'), IS_PAGE],
          [ada, art('budget'), IS_TABLE],
        ];
        for (const [caller, id, text] of cases) {
          refused(
            await edit(caller, { document_id: id, mode: 'append', content_markdown: 'x\n', dry_run: true }),
            text,
          );
        }
      });
    });

    describe('the 60,000-character cap', () => {
      it('writes content of exactly 60,000 characters whole', async () => {
        const { id } = await create();
        const content = 'y'.repeat(CAP - 1) + '\n';
        const s = ok(await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: content }));
        assert.equal(s.written_chars, CAP);
        assert.equal(s.stopped_early, false);
        assert.equal('stop_reason' in s, false);
        assert.equal('next_step' in s, false);
      });

      it('stops at a block boundary, says exactly what to append next, and the append completes the content', async () => {
        const { id } = await create();
        const content = paragraphs(7000);
        assert.ok(content.length > CAP);
        const r = await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: content });
        const s = ok(r);
        const written = s.written_chars as number;
        // Blocks are 11 characters each: the most whole blocks within the cap.
        assert.equal(written, Math.floor(CAP / 11) * 11);
        assert.equal(s.stopped_early, true);
        assert.equal(s.stop_reason, 'cap');
        const rest = content.slice(written);
        assert.equal(
          s.next_step,
          `Call edit_document with mode "append" and content_markdown set to the rest of your content: the ${rest.length} characters from character ${written} on, which begin ${JSON.stringify(rest.slice(0, 60))}.`,
        );
        assert.equal(
          r.text,
          `${wrote(written, 'fill_empty', s.new_version as number)} Stopped early at the 60,000-character cap. ${s.next_step as string}`,
        );
        const doc = await h.services.documents.store.open(id);
        assert.equal(liveBlocks(doc.doc).length, written / 11);
        assert.equal(content.slice(0, written).endsWith('\n\n'), true);

        const more = ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: rest }));
        assert.equal(more.written_chars, rest.length);
        assert.equal(more.stopped_early, false);
        const full = ok(await ada.call('read_document', { document_id: id, window: 24000, offset: 0 }));
        assert.equal(full.size_chars, content.length);
        const parts: string[] = [];
        for (let offset = 0; offset < content.length; offset += 24000) {
          parts.push(
            ok(await ada.call('read_document', { document_id: id, offset, window: 24000 }))
              .markdown as string,
          );
        }
        assert.equal(parts.join(''), content);
      });

      it('stops inside a block longer than the cap at a line boundary', async () => {
        const { id, version } = await create('Intro.\n');
        // One paragraph of 80-character lines, far longer than the cap.
        const line = `${'z'.repeat(79)}\n`;
        const content = line.repeat(1000);
        const r = await edit(ada, {
          document_id: id,
          mode: 'replace_all',
          content_markdown: content,
          expected_version: version,
        });
        const s = ok(r);
        assert.equal(s.written_chars, 750 * 80, 'the last whole line within the cap');
        assert.equal(s.stop_reason, 'cap');
        const rest = content.slice(s.written_chars as number);
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: rest }));
        const live = await h.services.documents.store.open(id);
        assert.equal(
          liveBlocks(live.doc)
            .map((b) => b.text)
            .join(''),
          content,
        );
      });

      it('lets a single line longer than the cap be completed by following next_step', async () => {
        const { id } = await create();
        const content = 'w'.repeat(CAP + 500);
        const s = ok(await edit(ada, { document_id: id, mode: 'fill_empty', content_markdown: content }));
        assert.equal(s.stop_reason, 'cap');
        const written = s.written_chars as number;
        assert.ok(written <= CAP);
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: content.slice(written) }));
        const live = await h.services.documents.store.open(id);
        const now = liveBlocks(live.doc)
          .map((b) => b.text)
          .join('');
        assert.equal(now.length, content.length, 'following next_step adds nothing the content did not have');
        assert.equal(now, content);
      });
    });

    describe('who may edit', () => {
      it('lets an editor through the org scope write, attributed to them', async () => {
        const { id, version } = await create('Shared.\n');
        const s = ok(
          await edit(bob, { document_id: id, mode: 'append', content_markdown: 'Bob was here.\n' }),
        );
        assert.equal(s.new_version, version + 1);
        const rows = ok(await bob.call('get_document_versions', { document_id: id })).versions as {
          author_label?: string;
          instruction?: string;
          doc_version: number;
          reason: string;
        }[];
        assert.deepEqual(
          {
            author: rows[0]!.author_label,
            instruction: rows[0]!.instruction,
            at: rows[0]!.doc_version,
            reason: rows[0]!.reason,
          },
          { author: 'Bob Stone', instruction: 'edit_document append', at: version, reason: 'agent_edit' },
        );
      });

      for (const mode of ['append', 'replace_all', 'replace_section', 'fill_empty']) {
        it(`refuses a viewer, a commenter and the archived document on ${mode}`, async () => {
          const args = {
            mode,
            content_markdown: 'x\n',
            expected_version: 1,
            section_excerpt: 'Draft.',
          };
          const plan = art('plan');
          const notes = art('notes');
          const before = { plan: await snapshot(plan), notes: await snapshot(notes) };
          refused(await edit(cy, { document_id: plan, ...args }), READ_ONLY);
          refused(await edit(bob, { document_id: plan, ...args }), COMMENT_ONLY);
          refused(await edit(ada, { document_id: notes, ...args }), ARCHIVED);
          assert.deepEqual({ plan: await snapshot(plan), notes: await snapshot(notes) }, before);
        });
      }

      it('answers a made-up id, another workspace and a document without a role alike', async () => {
        const plan = art('plan');
        const before = await snapshot(plan);
        const args = { mode: 'append', content_markdown: 'x\n' };
        refused(await edit(dee, { document_id: plan, ...args }), NOT_FOUND);
        refused(await edit(eve, { document_id: plan, ...args }), NOT_FOUND);
        refused(await edit(ada, { document_id: MADE_UP, ...args }), NOT_FOUND);
        refused(await edit(ada, { document_id: other(h).artifacts.eve_doc, ...args }), NOT_FOUND);
        assert.deepEqual(await snapshot(plan), before);
      });

      it('refuses a page, pointing to write_page, and a table, leaving both alone', async () => {
        const landing = art('landing');
        const budget = art('budget');
        const page = ok(await ada.call('read_page', { page_id: landing }));
        const table = ok(await ada.call('read_document', { document_id: budget }));
        for (const mode of ['append', 'replace_all', 'fill_empty']) {
          const args = { mode, content_markdown: 'x\n', expected_version: 1 };
          refused(await edit(ada, { document_id: landing, ...args }), IS_PAGE);
          refused(await edit(ada, { document_id: budget, ...args }), IS_TABLE);
        }
        assert.deepEqual(ok(await ada.call('read_page', { page_id: landing })), page);
        assert.deepEqual(ok(await ada.call('read_document', { document_id: budget })), table);
      });

      it('needs the documents:write scope', async () => {
        const { id } = await create('Body.\n');
        const reader = await h.as('ada@acme.test', ['documents:read']);
        refused(
          await reader.call('edit_document', { document_id: id, mode: 'append', content_markdown: 'x\n' }),
          'Tool failed: edit_document needs the documents:write scope, which this connection was not granted',
        );
        assert.equal((await read(id)).markdown, 'Body.\n');
      });
    });

    describe('version rows', () => {
      it('checkpoints every write before it lands, at the version it started from', async () => {
        const { id, version } = await create('Start.\n');
        ok(await edit(ada, { document_id: id, mode: 'append', content_markdown: 'A.\n' }));
        ok(
          await edit(ada, {
            document_id: id,
            mode: 'replace_section',
            section_excerpt: 'A.',
            content_markdown: 'B.\n',
          }),
        );
        const rows = await checkpoints(id);
        const writes = rows.filter((r) => r.instruction?.startsWith('edit_document'));
        assert.deepEqual(
          writes.map((r) => [r.doc_version, r.reason, r.instruction, r.content]),
          [
            [version, 'agent_edit', 'edit_document append', 'Start.\n'],
            [version + 1, 'agent_edit', 'edit_document replace_section', 'Start.\nA.\n'],
          ],
        );
        const r = await ada.call('get_document_versions', { document_id: id });
        const listed = ok(r).versions as { doc_version: number; reason: string; instruction?: string }[];
        assert.deepEqual(
          listed.slice(0, 2).map((v) => [v.doc_version, v.reason, v.instruction]),
          [
            [version + 1, 'agent_edit', 'edit_document replace_section'],
            [version, 'agent_edit', 'edit_document append'],
          ],
        );
        assert.match(
          r.text.split('\n')[0]!,
          /version \d+, agent_edit, by Ada Lovelace, edit_document replace_section/,
        );
      });
    });
  });
}
