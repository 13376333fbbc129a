import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { after, before, describe, it } from 'node:test';
import { docFromMarkdown, docFromState, encodeState, projection } from '../src/domains/documents/model.ts';
import { splitBlocks } from '../src/domains/documents/text.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok } from './support/results.ts';
import { createDocument } from './support/documents.ts';

interface Example {
  markdown: string;
  number: number;
  section: string;
}

/** The examples of the CommonMark spec, as the commonmark-spec package ships them. */
const EXAMPLES = (createRequire(import.meta.url)('commonmark-spec') as { tests: Example[] }).tests;

/** The spec shows tabs as →; the examples with real tabs are the ones the spec means. */
const withTabs = (markdown: string) => markdown.replaceAll('→', '\t');

/** Every fourth example, spread over all sections. */
const SAMPLE = EXAMPLES.filter((_, i) => i % 4 === 0);

interface Tricky {
  name: string;
  input: string;
  /** What reads back, when it differs from the input (CR and CRLF become LF). */
  expected?: string;
}

const TRICKY: Tricky[] = [
  {
    name: 'nested lists, loose and tight, bullets and numbers',
    input:
      '- a\n  - b\n    - c\n\n      para in c\n  - d\n- e\n\n1. one\n   1. nested\n\n   text under one\n2. two\n   * deep\n     + deeper\n',
  },
  {
    name: 'fenced code containing blank lines, tilde fences and an info string',
    input:
      '```ts\nconst a = 1;\n\n\n// after two blank lines\n```\n\n~~~\n\n~~~\n\n````md\n```\nnested\n```\n````\n',
  },
  { name: 'an unclosed fence running to the end', input: '# Code\n\n```\ncode\n\nstill code' },
  {
    name: 'HTML blocks, comments and details',
    input:
      '<div>\n<p>hi</p>\n\n</div>\n\n<pre>\nkeep\n\n  spaces\n</pre>\n\n<!-- a\n\ncomment -->\n<details><summary>x</summary>\n\nbody\n\n</details>\n<script>\nlet x = "<b>";\n\n</script>\n',
  },
  {
    name: 'tables with alignment, escaped pipes and no outer pipes',
    input:
      '| a | b |\n|:-|-:|\n| 1 | 2 \\| 3 |\n| `x|y` | **z** |\n\nno pipe | c\n--- | ---\nx | y\n\n| only header |\n| --- |\n',
  },
  {
    name: 'front matter with a blank line after it',
    input: '---\ntitle: "Doc"\ntags:\n  - a\n---\n\n# Title\n',
  },
  { name: 'front matter closed with dots', input: '---\na: 1\n\nb: 2\n...\nBody\n' },
  {
    name: 'trailing spaces and tabs, hard breaks, white-space-only lines',
    input: 'line with two spaces  \nnext   \n\n   \n\t\nend \t \n  ',
  },
  { name: 'no final newline', input: '# Title\n\nlast line' },
  { name: 'a single character without a newline', input: '#' },
  {
    name: 'CRLF input',
    input: '# Title\r\n\r\n- a\r\n- b\r\n\r\n```\r\ncode\r\n\r\n```\r\n',
    expected: '# Title\n\n- a\n- b\n\n```\ncode\n\n```\n',
  },
  { name: 'lone CRs and mixed line ends', input: 'a\rb\r\n\rc\n\r\n', expected: 'a\nb\n\nc\n\n' },
  { name: 'leading blank lines', input: '\n\n\n# Late start\n\ntext\n' },
  { name: 'runs of blank lines between and after blocks', input: 'a\n\n\n\n\nb\n\n\n' },
  { name: 'setext headings and thematic breaks', input: 'Title\n=====\n\nSub\n---\n\n***\n- - -\n___\n' },
  { name: 'block quotes, lazy and nested', input: '> quote\nlazy\n> > nested\n>\n> - list in quote\n\n>\n' },
  {
    name: 'link reference definitions and footnotes',
    input: "[a]: https://x.test 'T'\n\nText [a] and [^1].\n\n[^1]: Footnote\n    continued\n",
  },
  {
    name: 'unicode: emoji sequences, flags, combining marks, RTL, zero-width characters',
    input: 'Émoji 😀👩‍👩‍👧‍👦 🇯🇵 e\u0301 中文 עברית العربية \u200b zero\u200dwidth \ufeffbom\n\n𝄞 music 🎉\n',
  },
  { name: 'tabs and indented code', input: '\tcode with tab\n\n    spaces code\n\n*\ttab list\n\n-\t\tx\n' },
  {
    name: 'escapes and entities',
    input: '\\# not heading\n\n&amp; &#35; &copy; &#0;\n\n<span>inline</span> <br/>\n',
  },
  { name: 'a math block', input: '$$\na^2\n\nb\n$$\n' },
  { name: 'a list ending in an empty item', input: '- a\n- ' },
  { name: 'only white space before text', input: ' \n\t\n leading space para\n' },
  { name: 'a very long line', input: `${'long 😀 line '.repeat(3000)}\n` },
];

/** 60,000 characters after CRLF became LF, with surrogate pairs across every window boundary. */
function largest(): { input: string; expected: string } {
  const unit = '## Part 😀\r\n\r\nSome 🎉 text, then a pair: 👍🏽.\r\n\r\n';
  let expected = '';
  let input = '';
  while (expected.length + unit.replaceAll('\r\n', '\n').length <= 60_000) {
    input += unit;
    expected += unit.replaceAll('\r\n', '\n');
  }
  const pad = 'x'.repeat(60_000 - expected.length);
  return { input: input + pad, expected: expected + pad };
}

describe('CommonMark examples in process', () => {
  it(`splits every one of the ${EXAMPLES.length} examples into blocks that join back exactly`, () => {
    assert.ok(EXAMPLES.length > 600);
    for (const example of EXAMPLES) {
      for (const markdown of [example.markdown, withTabs(example.markdown)]) {
        const blocks = splitBlocks(markdown);
        assert.equal(blocks.join(''), markdown, `example ${example.number}`);
        for (const [i, block] of blocks.entries()) {
          assert.notEqual(block, '', `example ${example.number}`);
          if (i > 0) assert.doesNotMatch(block, /^[ \t]*\n/, `example ${example.number}, block ${i}`);
        }
      }
    }
  });

  it('projects every example exactly, from the model and from its stored state', () => {
    for (const example of EXAMPLES) {
      for (const markdown of [example.markdown, withTabs(example.markdown)]) {
        const doc = docFromMarkdown(markdown);
        assert.equal(projection(doc), markdown, `example ${example.number}`);
        assert.equal(projection(docFromState(encodeState(doc))), markdown, `example ${example.number}`);
      }
    }
  });

  it('projects the tricky documents exactly', () => {
    for (const t of TRICKY) {
      const markdown = t.expected ?? t.input;
      assert.equal(projection(docFromMarkdown(markdown)), markdown, t.name);
    }
  });
});

for (const db of DATABASES) {
  describe(`document round trip on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;

    before(async () => {
      h = await setup(db);
      ada = await h.as('ada@acme.test');
    });
    after(() => h.close());

    const sql = () => h.services.deps.db;

    async function create(content: string, title = 'Round trip'): Promise<{ id: string; version: number }> {
      return createDocument(ada, { title, content_markdown: content });
    }

    /** The whole markdown, paging with offset = offset + window as the read result says. */
    async function readAll(id: string, window?: number) {
      let offset = 0;
      let markdown = '';
      let first: Record<string, unknown> | undefined;
      for (let pages = 0; ; pages++) {
        assert.ok(pages <= 200, 'paging does not end');
        const r = ok(
          await ada.call('read_document', { document_id: id, offset, ...(window ? { window } : {}) }),
        );
        first ??= r;
        assert.equal(r.size_chars, first.size_chars);
        assert.equal(r.version, first.version);
        assert.ok((r.markdown as string).isWellFormed(), `a window splits a pair at ${r.offset as number}`);
        markdown += r.markdown as string;
        if (!r.truncated) break;
        offset = (r.offset as number) + (r.window as number);
      }
      return { markdown, size: first.size_chars as number, version: first.version as number };
    }

    /** The markdown column the database holds for a document. */
    async function storedMarkdown(id: string) {
      const row = await sql()
        .selectFrom('artifacts')
        .select('content')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.content;
    }

    /** The projection of the Yjs state a create stored. */
    async function storedState(id: string) {
      const row = await sql()
        .selectFrom('doc_states')
        .select('state')
        .where('artifact_id', '=', id)
        .executeTakeFirstOrThrow();
      return projection(docFromState(row.state));
    }

    async function expectRoundTrip(content: string, expected: string, label: string) {
      const { id, version } = await create(content, label.slice(0, 100));
      assert.equal(version, 1, label);
      const r = ok(await ada.call('read_document', { document_id: id }));
      assert.equal(r.markdown, expected.slice(0, 24_000), label);
      assert.equal(r.size_chars, expected.length, label);
      assert.equal(r.truncated, expected.length > 24_000, label);
      assert.equal(r.version, 1, label);
      return id;
    }

    it(`reads back each of the ${EXAMPLES.length} CommonMark examples, one per document, exactly`, async () => {
      const ids: [string, string][] = [];
      for (const example of EXAMPLES) {
        const id = await expectRoundTrip(example.markdown, example.markdown, `example ${example.number}`);
        ids.push([id, example.markdown]);
      }
      const rows = await sql()
        .selectFrom('doc_states')
        .innerJoin('artifacts', 'artifacts.id', 'doc_states.artifact_id')
        .select(['artifacts.id', 'artifacts.content', 'doc_states.state'])
        .where(
          'artifacts.id',
          'in',
          ids.map(([id]) => id),
        )
        .execute();
      const byId = new Map(rows.map((r) => [r.id, r]));
      for (const [id, markdown] of ids) {
        const row = byId.get(id);
        assert.ok(row, id);
        assert.equal(row.content, markdown);
        assert.equal(projection(docFromState(row.state)), markdown);
      }
    });

    it('reads back the examples with real tabs, forty to a document, each at its own offset', async () => {
      for (let from = 0; from < EXAMPLES.length; from += 40) {
        const batch = EXAMPLES.slice(from, from + 40);
        let content = '';
        const at: [number, string][] = [];
        for (const example of batch) {
          content += `\n<!-- example ${example.number} -->\n\n`;
          const markdown = withTabs(example.markdown);
          at.push([content.length, markdown]);
          content += `${markdown}\n`;
        }
        const { id } = await create(content, `Examples from ${from + 1}`);
        const back = await readAll(id);
        assert.equal(back.markdown, content);
        assert.equal(back.size, content.length);
        for (const [offset, markdown] of at)
          assert.equal(back.markdown.slice(offset, offset + markdown.length), markdown);
        assert.equal(await storedMarkdown(id), content);
        assert.equal(await storedState(id), content);
      }
    });

    for (const t of TRICKY) {
      it(`reads back ${t.name} exactly`, async () => {
        const expected = t.expected ?? t.input;
        const id = await expectRoundTrip(t.input, expected, t.name);
        assert.equal((await readAll(id, 7_777)).markdown, expected);
        assert.equal(await storedMarkdown(id), expected);
        assert.equal(await storedState(id), expected);
      });
    }

    it('reads back 60,000 characters (counted after CRLF became LF) through every window', async () => {
      const { input, expected } = largest();
      assert.ok(input.length > 60_000);
      const id = await expectRoundTrip(input, expected, 'largest');
      for (const window of [24_000, 9_999, 4_097]) {
        const back = await readAll(id, window);
        assert.equal(back.markdown, expected, `window ${window}`);
        assert.equal(back.size, 60_000);
      }
    });

    it('reads back white-space-only content as an empty document at version 0', async () => {
      for (const blank of [' ', '\n\n', ' \t\n \r\n']) {
        const { id, version } = await create(blank);
        assert.equal(version, 0);
        const r = ok(await ada.call('read_document', { document_id: id }));
        assert.equal(r.markdown, '');
        assert.equal(r.size_chars, 0);
        assert.equal(r.version, 0);
      }
    });

    it('reads NUL back as U+FFFD, as CommonMark reads it, on every database', async () => {
      const content = 'before\u0000after\n\n`\u0000`\n';
      const r = await ada.call('create_document', { title: 'NUL', content_markdown: content });
      const { document_id } = ok(r);
      const back = ok(await ada.call('read_document', { document_id }));
      assert.equal(back.markdown, content.replaceAll('\u0000', '\uFFFD'));
      assert.equal(back.size_chars, content.length);
    });

    it('appends CommonMark examples to existing documents exactly, the version rising with each', async () => {
      for (let from = 0; from < SAMPLE.length; from += 25) {
        // The first content has no final newline, so the first append starts a line of its own.
        let text = `# Appended from example ${SAMPLE[from]!.number}`;
        const doc = await create(text);
        let version = doc.version;
        for (const example of SAMPLE.slice(from, from + 25)) {
          const s = ok(
            await ada.call('edit_document', {
              document_id: doc.id,
              mode: 'append',
              content_markdown: example.markdown,
            }),
          );
          text += (text !== '' && !text.endsWith('\n') ? '\n' : '') + example.markdown;
          assert.ok((s.new_version as number) > version, `example ${example.number}`);
          version = s.new_version as number;
          assert.equal(s.written_chars, example.markdown.length);
          const r = ok(await ada.call('read_document', { document_id: doc.id }));
          assert.equal(r.markdown, text, `after appending example ${example.number}`);
          assert.equal(r.size_chars, text.length);
          assert.equal(r.version, version);
        }
        assert.equal(await storedMarkdown(doc.id), text);
      }
    });

    it('appends each tricky document exactly, CRLF becoming LF', async () => {
      let text = 'Start';
      const doc = await create(text);
      for (const t of TRICKY) {
        const content = t.expected ?? t.input;
        ok(
          await ada.call('edit_document', { document_id: doc.id, mode: 'append', content_markdown: t.input }),
        );
        text += (text !== '' && !text.endsWith('\n') ? '\n' : '') + content;
        assert.equal((await readAll(doc.id)).markdown, text, t.name);
      }
      assert.equal(await storedMarkdown(doc.id), text);
    });

    const BEFORE = '# Before @@b@@\n\nintro\n\n';
    const TARGET = 'target @@t@@\n\n';
    const AFTER = 'after @@z@@\n';

    it('replaces a section with a CommonMark example exactly, leaving the blocks around it', async () => {
      for (const example of SAMPLE) {
        const doc = await create(BEFORE + TARGET + AFTER);
        const s = ok(
          await ada.call('edit_document', {
            document_id: doc.id,
            mode: 'replace_section',
            section_excerpt: 'target   @@t@@',
            content_markdown: example.markdown,
          }),
        );
        assert.ok((s.new_version as number) > doc.version);
        const r = ok(await ada.call('read_document', { document_id: doc.id }));
        assert.equal(r.markdown, BEFORE + example.markdown + AFTER, `example ${example.number}`);
        assert.equal(r.version, s.new_version);
      }
    });

    it('replaces a section with each tricky document exactly, and replaces that in turn', async () => {
      for (const t of TRICKY) {
        const doc = await create(BEFORE + TARGET + AFTER);
        const content = t.expected ?? t.input;
        ok(
          await ada.call('edit_document', {
            document_id: doc.id,
            mode: 'replace_section',
            section_excerpt: '@@t@@',
            content_markdown: t.input,
          }),
        );
        assert.equal((await readAll(doc.id)).markdown, BEFORE + content + AFTER, t.name);
        // The written blocks stay blocks of their own: replacing the block after them leaves
        // every block that ends before the quoted passage as it was.
        const text = BEFORE + content + AFTER;
        const start = text.indexOf('after @@z@@');
        const blocks = [...splitBlocks(BEFORE), ...splitBlocks(content), ...splitBlocks(AFTER)];
        let at = 0;
        let kept = '';
        for (const block of blocks) {
          if (at + block.length <= start) kept += block;
          at += block.length;
        }
        ok(
          await ada.call('edit_document', {
            document_id: doc.id,
            mode: 'replace_section',
            section_excerpt: 'after @@z@@',
            content_markdown: 'the end\n',
          }),
        );
        assert.equal((await readAll(doc.id)).markdown, `${kept}the end\n`, t.name);
      }
    });

    it('replaces only the covered block in a document that ends in an empty list item', async () => {
      const doc = await create('# Keep @@k@@\n\npara @@p@@\n\n- ');
      ok(
        await ada.call('edit_document', {
          document_id: doc.id,
          mode: 'replace_section',
          section_excerpt: 'para @@p@@',
          content_markdown: 'new para\n\n',
        }),
      );
      assert.equal((await readAll(doc.id)).markdown, '# Keep @@k@@\n\nnew para\n\n- ');
    });
  });
}
