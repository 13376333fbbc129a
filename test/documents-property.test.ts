import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { splitBlocks } from '../src/domains/documents/text.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok } from './support/results.ts';

/*
 * Random documents and random sequences of writes, checked against a plain-string model. Every
 * block the generators make carries a marker (@@m<n>@@) found nowhere else, and no generated
 * text holds an @, so a passage from one marker to another occurs exactly once.
 */

const RUNS: Record<string, { numRuns: number }> = { sqlite: { numRuns: 200 }, postgres: { numRuns: 50 } };
const TEXT_RUNS: Record<string, { numRuns: number }> = {
  sqlite: { numRuns: 100 },
  postgres: { numRuns: 30 },
};

/** Any text at all, CRs included; NUL is checked on its own in the round-trip tests. */
const anyText = fc
  .string({
    unit: fc.oneof(fc.string({ unit: 'binary', maxLength: 1 }), fc.constantFrom('\r\n', '\r', '\n\n', '😀')),
    maxLength: 40,
  })
  .map((text) => text.replaceAll('\u0000', ''));

/** Words: plain and accented letters, CJK, emoji (pairs and sequences), markdown punctuation. */
const word = fc.string({
  unit: fc.constantFrom(
    'a',
    'b',
    'k',
    'z',
    'é',
    'ß',
    '中',
    '😀',
    '👩‍💻',
    '🇫🇷',
    '𝄞',
    '*',
    '_',
    '`',
    '#',
    '[',
    ']',
    '(',
    ')',
    '!',
    '<',
    '>',
    '|',
    '-',
    '.',
    ':',
    '\\',
    '~',
    '&',
    '1',
  ),
  minLength: 1,
  maxLength: 8,
});
const space = fc.constantFrom(' ', ' ', ' ', '  ', '\t', '\u00a0');
const line = fc
  .tuple(fc.array(fc.tuple(word, space), { maxLength: 5 }), word, fc.constantFrom('', '', ' ', '  ', '\t'))
  .map(([parts, last, trailing]) => parts.map(([w, s]) => w + s).join('') + last + trailing);

type Block =
  | { kind: 'paragraph'; lines: string[] }
  | { kind: 'heading'; level: number; text: string }
  | { kind: 'list'; marker: '-' | '*' | '1.'; items: string[]; loose: boolean; nested: string[] }
  | { kind: 'fence'; fence: '```' | '~~~'; info: string; lines: string[] }
  | { kind: 'quote'; lines: string[] }
  | { kind: 'table'; rows: string[][] }
  | { kind: 'html'; lines: string[] };

const block: fc.Arbitrary<Block> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('paragraph'),
      lines: fc.array(line, { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constant('heading'), level: fc.integer({ min: 1, max: 6 }), text: line }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('list'),
      marker: fc.constantFrom('-', '*', '1.'),
      items: fc.array(line, { minLength: 1, maxLength: 3 }),
      loose: fc.boolean(),
      nested: fc.array(line, { maxLength: 2 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('fence'),
      fence: fc.constantFrom('```', '~~~'),
      info: fc.constantFrom('', 'ts', 'md'),
      // Blank lines inside code.
      lines: fc.array(fc.oneof(line, fc.constant(''), fc.constant('   ')), { minLength: 1, maxLength: 4 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('quote'),
      lines: fc.array(line, { minLength: 1, maxLength: 2 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('table'),
      rows: fc.array(fc.array(word, { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 3 }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('html'),
      lines: fc.array(line, { minLength: 1, maxLength: 2 }),
    }),
  },
) as fc.Arbitrary<Block>;

interface Content {
  blocks: { block: Block; blankLines: number }[];
  /** Drop the final newline, so the next write has to start a line of its own. */
  noFinalNewline: boolean;
  crlf: boolean;
}

const content = (minLength: number): fc.Arbitrary<Content> =>
  fc.record({
    blocks: fc.array(fc.record({ block, blankLines: fc.constantFrom(0, 1, 1, 2) }), {
      minLength,
      maxLength: 4,
    }),
    noFinalNewline: fc.boolean(),
    crlf: fc.constantFrom(false, false, false, true),
  });

type Op =
  | { op: 'append'; content: Content }
  | { op: 'replace_section'; from: number; span: number; folded: boolean; content: Content }
  | { op: 'dry_run'; from: number; span: number }
  | { op: 'replace_all'; content: Content };

const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('append' as const), content: content(1) }) },
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('replace_section' as const),
      from: fc.nat(),
      span: fc.nat(3),
      folded: fc.boolean(),
      content: content(0),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('dry_run' as const), from: fc.nat(), span: fc.nat(3) }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('replace_all' as const), content: content(0) }) },
);

/** Turns generated content into markdown, giving each block fresh markers. */
function render(c: Content, marker: () => string): string {
  let out = '';
  for (const { block: b, blankLines } of c.blocks) {
    let text: string;
    switch (b.kind) {
      case 'paragraph':
        text = b.lines.map((l, i) => (i === 0 ? `${l} ${marker()}` : l)).join('\n');
        break;
      case 'heading':
        text = `${'#'.repeat(b.level)} ${b.text} ${marker()}`;
        break;
      case 'list': {
        const items = b.items.map((item) => `${b.marker} ${item} ${marker()}`);
        if (b.nested.length > 0) items.push(...b.nested.map((n) => `    - ${n} ${marker()}`));
        text = items.join(b.loose ? '\n\n' : '\n');
        break;
      }
      case 'fence':
        text = [`${b.fence}${b.info}`, ...b.lines, marker(), b.fence].join('\n');
        break;
      case 'quote':
        text = b.lines.map((l) => `> ${l} ${marker()}`).join('\n');
        break;
      case 'table':
        text = [
          `| h ${marker()} | h2 |`,
          '|---|:-:|',
          ...b.rows.map((r) => `| ${r.join(' | ')} ${marker()} |`),
        ].join('\n');
        break;
      case 'html':
        text = ['<div>', ...b.lines.map((l) => `${l} ${marker()}`), '</div>'].join('\n');
        break;
    }
    out += `${text}\n${'\n'.repeat(blankLines)}`;
  }
  if (c.noFinalNewline && out.endsWith('\n')) out = out.slice(0, -1);
  return c.crlf ? out.replaceAll('\n', '\r\n') : out;
}

const MARKER = /@@m\d+@@/g;

/**
 * The model: the markdown as a plain string, and the blocks the service keeps it in. A write
 * splits only its own content into blocks and never re-splits the text around it, so the blocks
 * are not in general splitBlocks of the whole text.
 */
class Model {
  blocks: string[] = [];
  get text(): string {
    return this.blocks.join('');
  }

  create(content: string): void {
    this.blocks = splitBlocks(content.trim() === '' ? '' : content);
  }

  append(content: string): string {
    const text = this.text;
    const expected = text + (text !== '' && !text.endsWith('\n') ? '\n' : '') + content;
    if (content !== '' && text !== '' && !text.endsWith('\n')) this.blocks[this.blocks.length - 1] += '\n';
    this.blocks.push(...splitBlocks(content));
    return expected;
  }

  /** The run of blocks [first, last] a passage starting at `start` covers. */
  covered(start: number, length: number): [number, number] {
    let at = 0;
    let first = -1;
    let last = -1;
    for (const [i, b] of this.blocks.entries()) {
      if (at + b.length > start && at < start + length) {
        if (first < 0) first = i;
        last = i;
      }
      at += b.length;
    }
    return [first, last];
  }

  replace(start: number, length: number, content: string): string {
    const [first, last] = this.covered(start, length);
    const text = this.text;
    const from = this.blocks.slice(0, first).join('').length;
    const to = this.blocks.slice(0, last + 1).join('').length;
    const expected = text.slice(0, from) + content + text.slice(to);
    this.blocks.splice(first, last - first + 1, ...splitBlocks(content));
    return expected;
  }

  replaceAll(content: string): string {
    this.blocks = splitBlocks(content);
    return content;
  }

  /** A passage from one marker to another, exactly as it stands, with where it starts. */
  passage(from: number, span: number): { start: number; excerpt: string } | undefined {
    const text = this.text;
    const markers = [...text.matchAll(MARKER)];
    if (markers.length === 0) return undefined;
    const i = from % markers.length;
    const j = Math.min(markers.length - 1, i + span);
    const start = markers[i]!.index;
    const end = markers[j]!.index + markers[j]![0].length;
    return { start, excerpt: text.slice(start, end) };
  }
}

const lf = (text: string) => text.replace(/\r\n?/g, '\n');

for (const db of DATABASES) {
  describe(`document writes against a plain-string model on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;

    before(async () => {
      h = await setup(db);
      ada = await h.as('ada@acme.test');
    });
    after(() => h.close());

    async function readAll(id: string): Promise<{ markdown: string; version: number; size: number }> {
      let offset = 0;
      let markdown = '';
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 20, 'paging does not end');
        const r = ok(await ada.call('read_document', { document_id: id, offset }));
        markdown += r.markdown as string;
        if (!r.truncated) return { markdown, version: r.version as number, size: r.size_chars as number };
        offset = (r.offset as number) + (r.window as number);
      }
    }

    it('random documents and random append / replace_section sequences match the model; versions rise', async () => {
      await fc.assert(
        fc.asyncProperty(content(0), fc.array(op, { minLength: 1, maxLength: 8 }), async (initial, ops) => {
          let n = 0;
          const marker = () => `@@m${n++}@@`;
          const model = new Model();
          const raw = render(initial, marker);
          model.create(lf(raw));
          const created = ok(
            await ada.call('create_document', {
              title: 'Property',
              ...(raw !== '' ? { content_markdown: raw } : {}),
            }),
          );
          const id = created.document_id as string;
          let version = created.version as number;
          assert.equal(version, model.text === '' ? 0 : 1);
          let back = await readAll(id);
          assert.equal(back.markdown, model.text);
          assert.equal(back.version, version);

          for (const step of ops) {
            let expected: string;
            let result: Record<string, unknown>;
            if (step.op === 'dry_run') {
              const passage = model.passage(step.from, step.span);
              if (!passage) continue;
              const [firstBlock, lastBlock] = model.covered(passage.start, passage.excerpt.length);
              result = ok(
                await ada.call('edit_document', {
                  document_id: id,
                  mode: 'replace_section',
                  section_excerpt: passage.excerpt,
                  content_markdown: 'never written\n',
                  dry_run: true,
                }),
              );
              assert.equal(result.resolved, true);
              assert.equal((result.block_ids as string[]).length, lastBlock - firstBlock + 1);
              assert.equal(result.current_version, version);
              back = await readAll(id);
              assert.equal(back.markdown, model.text);
              assert.equal(back.version, version);
              continue;
            }
            const written = render(step.content, marker);
            const normalized = lf(written);
            if (step.op === 'append') {
              expected = model.append(normalized);
              result = ok(
                await ada.call('edit_document', {
                  document_id: id,
                  mode: 'append',
                  content_markdown: written,
                }),
              );
            } else if (step.op === 'replace_all') {
              expected = model.replaceAll(normalized);
              result = ok(
                await ada.call('edit_document', {
                  document_id: id,
                  mode: 'replace_all',
                  content_markdown: written,
                  expected_version: version,
                }),
              );
            } else {
              const passage = model.passage(step.from, step.span);
              if (!passage) continue;
              const excerpt = step.folded ? passage.excerpt.replace(/\s+/g, ' ') : passage.excerpt;
              expected = model.replace(passage.start, passage.excerpt.length, normalized);
              result = ok(
                await ada.call('edit_document', {
                  document_id: id,
                  mode: 'replace_section',
                  section_excerpt: excerpt,
                  content_markdown: written,
                }),
              );
            }
            assert.equal(model.text, expected, 'the block model and the string model agree');
            assert.equal(result.written_chars, normalized.length);
            assert.equal(result.stopped_early, false);
            const next = result.new_version as number;
            assert.ok(next > version, `version ${next} after ${version}`);
            version = next;
            back = await readAll(id);
            assert.equal(back.markdown, expected, `after ${step.op}`);
            assert.equal(back.size, expected.length);
            assert.equal(back.version, version);
          }
        }),
        RUNS[db.name],
      );
    });

    it('any text created and appended reads back exactly, CR and CRLF as LF', async () => {
      await fc.assert(
        fc.asyncProperty(
          anyText,
          fc.array(
            anyText.filter((t) => t !== ''),
            { maxLength: 4 },
          ),
          async (first, appends) => {
            const created = ok(
              await ada.call('create_document', { title: 'Any text', content_markdown: first }),
            );
            const id = created.document_id as string;
            let text = lf(first).trim() === '' ? '' : lf(first);
            let version = created.version as number;
            assert.equal(version, text === '' ? 0 : 1);
            assert.equal((await readAll(id)).markdown, text);
            for (const content of appends) {
              const s = ok(
                await ada.call('edit_document', {
                  document_id: id,
                  mode: 'append',
                  content_markdown: content,
                }),
              );
              text += (text !== '' && !text.endsWith('\n') ? '\n' : '') + lf(content);
              assert.ok((s.new_version as number) > version);
              version = s.new_version as number;
              const back = await readAll(id);
              assert.equal(back.markdown, text);
              assert.equal(back.size, text.length);
              assert.equal(back.version, version);
            }
          },
        ),
        TEXT_RUNS[db.name],
      );
    });
  });
}
