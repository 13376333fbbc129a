import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_ARGUMENT_CHARS, MAX_DEPTH } from '../src/mcp/arguments.ts';
import { TOOLS } from '../src/mcp/registry.ts';
import { renderToolSchemas } from '../src/mcp/tool.ts';
import { DATABASES } from './support/databases.ts';
import { stateDigest } from './support/digest.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok, refused } from './support/results.ts';

const CAP = 60_000;

/** A value `levels` arrays deep around a string. */
function nested(levels: number): unknown {
  let value: unknown = 'core';
  for (let i = 0; i < levels; i++) value = [value];
  return value;
}

/** Values of every JSON type but the one a field takes. */
function wrongValues(type: unknown): unknown[] {
  const all: Record<string, unknown[]> = {
    string: ['zz', ''],
    number: [42, 1.5],
    boolean: [true],
    object: [{}, { a: 1 }],
    array: [[], ['x']],
  };
  const own = type === 'integer' ? 'number' : String(type);
  return Object.entries(all).flatMap(([kind, values]) => (kind === own ? [] : values));
}

for (const db of DATABASES) {
  describe(`tool arguments are refused before they cost anything, on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;
    const digest = () => stateDigest(h.services);

    before(async () => {
      h = await setup(db);
      ada = await h.as('ada@acme.test');
    });
    after(() => h.close());

    it(`refuses an argument nested 4,000 levels deep in every tool, in one line naming it`, async () => {
      const before = await digest();
      for (const tool of TOOLS) {
        const fields = Object.keys(renderToolSchemas(tool).inputSchema.properties ?? {});
        for (const field of [...fields.slice(0, 1), 'not_a_field']) {
          const r = await ada.call(tool.name, { [field]: nested(4000) });
          refused(
            r,
            `Tool failed: ${field} is nested too deeply: at most ${MAX_DEPTH} levels of objects and arrays are accepted`,
          );
        }
      }
      const deepPlan = { planVersion: 1, name: 'x', description: 'y', nodes: nested(4000), edges: [] };
      refused(
        await ada.call('draft_automation', { plan_json: deepPlan, ask: 'Deep.' }),
        `Tool failed: plan_json is nested too deeply: at most ${MAX_DEPTH} levels of objects and arrays are accepted`,
      );
      assert.deepEqual(await digest(), before);
    });

    it(`takes an argument exactly ${MAX_DEPTH} levels deep`, async () => {
      const page = acme(h).artifacts.landing!;
      ok(await ada.call('read_page', { page_id: page, not_a_field: nested(MAX_DEPTH) }));
      refused(
        await ada.call('read_page', { page_id: page, not_a_field: nested(MAX_DEPTH + 1) }),
        `Tool failed: not_a_field is nested too deeply: at most ${MAX_DEPTH} levels of objects and arrays are accepted`,
      );
    });

    it('refuses arguments past 10,000,000 characters in all, naming the field that passed the limit', async () => {
      const before = await digest();
      const roadmap = acme(h).artifacts.roadmap!;
      const r = await ada.call('edit_document', {
        document_id: roadmap,
        mode: 'append',
        content_markdown: 'x'.repeat(MAX_ARGUMENT_CHARS),
      });
      refused(
        r,
        'Tool failed: content_markdown is too large: the arguments of one call may hold at most 10,000,000 characters',
      );
      const many = Array.from({ length: 1000 }, () => 'y'.repeat(MAX_ARGUMENT_CHARS / 999));
      refused(
        await ada.call('read_page', { page_id: 'x', pages: many }),
        'Tool failed: pages is too large: the arguments of one call may hold at most 10,000,000 characters',
      );
      assert.deepEqual(await digest(), before);
    });

    it('answers a wrong type for any field of any tool as `<field> must be …`, one sentence per field', async () => {
      const before = await digest();
      for (const tool of TOOLS) {
        const { properties = {} } = renderToolSchemas(tool).inputSchema;
        for (const [field, schema] of Object.entries(properties)) {
          const texts = new Set<string>();
          for (const value of wrongValues(schema.type)) {
            // draft_automation words a missing ask first; with one, any plan_json is checked as a plan.
            const r = await ada.call(tool.name, {
              ...(field === 'plan_json' ? { ask: 'A.' } : {}),
              [field]: value,
            });
            assert.equal(r.isError, true, `${tool.name} ${field}=${JSON.stringify(value)}: ${r.text}`);
            if (field === 'plan_json') {
              // The spec answers any plan that is not one as an invalid plan.
              assert.equal(r.structured?.kind, 'failed');
              continue;
            }
            assert.match(r.text, new RegExp(`^Tool failed: ${field} must be [^;\\n]+$`), tool.name);
            texts.add(r.text);
          }
          assert.ok(texts.size <= 1, `${tool.name} ${field}: ${[...texts].join(' | ')}`);
        }
      }
      assert.deepEqual(await digest(), before);
    });

    it('refuses limit, offset and window of the wrong type instead of taking the default', async () => {
      const doc = acme(h).artifacts.roadmap!;
      for (const value of ['zz', {}, [], true]) {
        refused(
          await ada.call('list_documents', { limit: value }),
          'Tool failed: limit must be a number from 1 to 50',
        );
        refused(
          await ada.call('list_automations', { limit: value }),
          'Tool failed: limit must be a number from 1 to 200',
        );
        refused(
          await ada.call('read_document', { document_id: doc, window: value }),
          'Tool failed: window must be a number from 1 to 24000',
        );
        refused(
          await ada.call('read_document', { document_id: doc, offset: value }),
          'Tool failed: offset must be a non-negative number',
        );
      }
    });

    it('keeps the sentences the spec words for a wrong type', async () => {
      const doc = acme(h).artifacts.roadmap!;
      refused(
        await ada.call('resolve_comment', { document_id: doc, thread_id: 'thr_x', resolved: 'yes' }),
        'Tool failed: resolved must be a boolean',
      );
      refused(
        await ada.call('write_page', { page_id: doc, html: '<p>x</p>', expected_version: '1' }),
        'Tool failed: expected_version must be a non-negative integer',
      );
      refused(
        await ada.call('create_document', { title: 'T', scope: 3 }),
        'Tool failed: scope must be user, pod or org',
      );
      refused(
        await ada.call('list_documents', { scope: false }),
        'Tool failed: scope must be mine, shared, pod or org',
      );
      refused(
        await ada.call('edit_document', { document_id: doc, mode: 1, content_markdown: 'x' }),
        'Tool failed: mode must be append, replace_section, replace_all or fill_empty',
      );
    });

    it('stops an 8 MB one-line append at the 60,000-character cap, with the spec’s next step', async () => {
      const doc = acme(h).artifacts.roadmap!;
      const { size_chars: size } = ok(await ada.call('read_document', { document_id: doc }));
      for (const unit of ['*', '> ']) {
        const line = unit.repeat(8_000_000 / unit.length);
        const started = performance.now();
        const r = ok(
          await ada.call('edit_document', { document_id: doc, mode: 'append', content_markdown: line }),
        );
        assert.ok(performance.now() - started < 15_000, `${Math.round(performance.now() - started)} ms`);
        assert.equal(r.stopped_early, true);
        assert.equal(r.stop_reason, 'cap');
        assert.equal(r.written_chars, CAP);
        assert.match(
          String(r.next_step),
          /^Call edit_document with mode "append" and content_markdown set to the rest of your content: the 7940000 characters from character 60000 on/,
        );
      }
      const after = ok(await ada.call('read_document', { document_id: doc, offset: size as number }));
      // A write cut inside a line leaves it open, so the next append continues that line.
      assert.equal(after.size_chars, (size as number) + 2 * CAP);
    });

    it('refuses an 8 MB one-line create_document before any work, creating nothing', async () => {
      const before = await digest();
      const started = performance.now();
      const r = await ada.call('create_document', { title: 'Huge', content_markdown: '|'.repeat(8_000_000) });
      assert.ok(performance.now() - started < 5_000);
      refused(
        r,
        'Tool failed: content_markdown is 8,000,000 characters; the limit is 60,000. Create the document with the first part, then add the rest with edit_document append. Nothing was created.',
      );
      assert.deepEqual(await digest(), before);
    });

    it('stores and reads back 60,000 characters nested deeper than the lexer follows', async () => {
      for (const unit of ['>', '1. ']) {
        const content = unit.repeat(CAP / unit.length);
        const { document_id } = ok(
          await ada.call('create_document', { title: 'Deep', content_markdown: content }),
        );
        let markdown = '';
        for (let offset = 0; offset < CAP; offset += 24_000)
          markdown += ok(await ada.call('read_document', { document_id, offset })).markdown as string;
        assert.ok(markdown === content, `${unit}: the document reads back as written`);
        ok(await ada.call('edit_document', { document_id, mode: 'append', content_markdown: content }));
      }
    });

    it('refuses page HTML past 1,000,000 characters, comment bodies past 20,000 and excerpts past 60,000 before any work', async () => {
      const before = await digest();
      const page = acme(h).artifacts.landing!;
      const html = `<p>${'x'.repeat(1_000_000)}</p>`;
      refused(
        await ada.call('write_page', { page_id: page, html, expected_version: 1 }),
        'Tool failed: html must be at most 1000000 characters',
      );
      refused(
        await ada.call('create_page', { title: 'Big', html }),
        'Tool failed: html must be at most 1000000 characters',
      );
      refused(
        await ada.call('add_comment', { document_id: page, body_markdown: 'b'.repeat(20_001) }),
        'Tool failed: body_markdown must be at most 20000 characters',
      );
      const started = performance.now();
      refused(
        await ada.call('edit_document', {
          document_id: acme(h).artifacts.roadmap,
          mode: 'replace_section',
          section_excerpt: 'ab cd '.repeat(1_500_000),
          content_markdown: 'x',
        }),
        'Tool failed: section_excerpt must be at most 60000 characters',
      );
      assert.ok(performance.now() - started < 1000, 'an over-long excerpt is refused before it is matched');
      assert.deepEqual(await digest(), before);
      ok(await ada.call('create_page', { title: 'Just fits', html: 'x'.repeat(1_000_000) }));
    });
  });
}
