import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { findExcerpt, foldWhitespace, nearestPassages, similarity } from './excerpt.ts';

const textArb = fc.string({
  unit: fc.constantFrom('a', 'b', 'c', ' ', '  ', '\n', '\t', '\u00a0', '😀', 'é', '#', '-'),
  maxLength: 60,
});
const blockArb = fc
  .string({ unit: fc.constantFrom('a', 'b', 'x', 'y', ' ', '\n', '😀', '.'), minLength: 1, maxLength: 30 })
  .map((s) => `${s}\n\n`);

describe('foldWhitespace', () => {
  it('collapses each run of white space to one space, trims, and remembers where each character came from', () => {
    assert.deepEqual(foldWhitespace('  a  b\n\tc  '), { text: 'a b c', origin: [2, 3, 5, 6, 8] });
    assert.deepEqual(foldWhitespace(''), { text: '', origin: [] });
    assert.deepEqual(foldWhitespace(' \n\t '), { text: '', origin: [] });
    assert.deepEqual(foldWhitespace('a\u00a0\u2028b'), { text: 'a b', origin: [0, 1, 3] });
  });

  it('maps every kept character back to the same character, and every space to white space', () => {
    fc.assert(
      fc.property(textArb, (text) => {
        const folded = foldWhitespace(text);
        assert.equal(folded.origin.length, folded.text.length);
        assert.equal(folded.text, folded.text.trim());
        assert.doesNotMatch(folded.text, /\s\s/);
        for (let i = 0; i < folded.text.length; i++) {
          const from = text[folded.origin[i]!]!;
          if (folded.text[i] === ' ') assert.match(from, /\s/);
          else assert.equal(from, folded.text[i]);
          if (i > 0) assert.ok(folded.origin[i]! > folded.origin[i - 1]!);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('findExcerpt', () => {
  it('matches across differences in white space and reports the span in the original text', () => {
    const text = 'Hello   world\nagain';
    assert.deepEqual(findExcerpt(text, 'Hello world again'), [{ start: 0, end: 19 }]);
    assert.deepEqual(findExcerpt(text, '  world\n\n again  '), [{ start: 8, end: 19 }]);
    assert.deepEqual(findExcerpt('a\u00a0b', 'a b'), [{ start: 0, end: 3 }]);
    assert.deepEqual(findExcerpt('# Title\n\nSome  text.\n', 'Title Some text.'), [{ start: 2, end: 20 }]);
  });

  it('reports every place, overlapping ones included', () => {
    assert.deepEqual(findExcerpt('x foo\n  bar y foo bar', ' foo   bar '), [
      { start: 2, end: 11 },
      { start: 14, end: 21 },
    ]);
    assert.deepEqual(findExcerpt('aaa', 'aa'), [
      { start: 0, end: 2 },
      { start: 1, end: 3 },
    ]);
  });

  it('does not invent or remove white space, and is case sensitive', () => {
    assert.deepEqual(findExcerpt('foo bar', 'foobar'), []);
    assert.deepEqual(findExcerpt('foobar', 'foo bar'), []);
    assert.deepEqual(findExcerpt('Hello', 'hello'), []);
  });

  it('finds nothing for an empty or blank excerpt', () => {
    assert.deepEqual(findExcerpt('some text', ''), []);
    assert.deepEqual(findExcerpt('some text', ' \n\t'), []);
    assert.deepEqual(findExcerpt('', 'x'), []);
  });

  it('finds any passage of the text, however its white space is written, at its own span', () => {
    fc.assert(
      fc.property(
        textArb,
        fc.nat(),
        fc.nat(),
        fc.constantFrom(' ', '\n', '\t ', '  \n'),
        (text, a, b, space) => {
          let start = Math.min(a, b) % (text.length + 1);
          let end = Math.max(start, Math.max(a, b) % (text.length + 1));
          while (start < end && /\s/.test(text[start]!)) start++;
          while (end > start && /\s/.test(text[end - 1]!)) end--;
          const passage = text.slice(start, end);
          fc.pre(passage !== '' && passage.isWellFormed());
          const needle = foldWhitespace(passage).text;
          for (const excerpt of [passage, passage.replace(/\s+/g, space), `\n ${passage}\t`]) {
            const spans = findExcerpt(text, excerpt);
            assert.ok(
              spans.some((s) => s.start === start && s.end === end),
              `${JSON.stringify(excerpt)} not found at ${start}-${end} in ${JSON.stringify(text)}`,
            );
            for (const s of spans) assert.equal(foldWhitespace(text.slice(s.start, s.end)).text, needle);
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

/** The plain way to find an excerpt: from every occurrence of its first word, word by word. */
function findFromFirstWord(text: string, excerpt: string): { start: number; end: number }[] {
  const words = foldWhitespace(excerpt).text.split(' ').filter(Boolean);
  const spans = [];
  if (words.length === 0) return [];
  for (let at = text.indexOf(words[0]!); at >= 0; at = text.indexOf(words[0]!, at + 1)) {
    let pos = at + words[0]!.length;
    let matched = true;
    for (const word of words.slice(1)) {
      const gap = pos;
      while (pos < text.length && /\s/.test(text[pos]!) && foldWhitespace(`a${text[pos]}a`).text === 'a a')
        pos++;
      if (pos === gap || !text.startsWith(word, pos)) {
        matched = false;
        break;
      }
      pos += word.length;
    }
    if (matched) spans.push({ start: at, end: pos });
  }
  return spans;
}

describe('findExcerpt against the plain search', () => {
  const wordArb = fc.constantFrom('a', 'ab', 'ba', 'abc', 'b', 'the', 'other', 'another');
  const spaceArb = fc.constantFrom(' ', '  ', '\n', '\t', '\u00a0', '\n\n');
  const textOf = (parts: [string, string][]) => parts.map(([w, s]) => w + s).join('');

  it('finds exactly the spans the plain search finds, in the same order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(wordArb, spaceArb), { maxLength: 40 }),
        fc.array(fc.tuple(wordArb, spaceArb), { minLength: 1, maxLength: 5 }),
        (text, excerpt) => {
          const haystack = textOf(text);
          const needle = textOf(excerpt);
          assert.deepEqual(findExcerpt(haystack, needle), findFromFirstWord(haystack, needle));
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('lets the first word end a longer word and the last begin one, as the plain search does', () => {
    assert.deepEqual(findExcerpt('bathe section here', 'the section'), [{ start: 2, end: 13 }]);
    assert.deepEqual(findExcerpt('another section here', 'the section'), []);
    assert.deepEqual(findExcerpt('the sections', 'the section'), [{ start: 0, end: 11 }]);
    assert.deepEqual(findExcerpt('the bigsection', 'the section'), []);
  });
});

describe('similarity', () => {
  it('is 1 for the same text, ignoring case and white space, and 0 for texts sharing no pair', () => {
    assert.equal(similarity('the quick fox', 'the quick fox'), 1);
    assert.equal(similarity('Hello World', 'hello\n   world'), 1);
    assert.equal(similarity('abc', 'xyz'), 0);
    assert.equal(similarity('', ''), 0);
  });

  it('ranks a near miss above an unrelated text', () => {
    const near = similarity('The quick brown fox', 'The quick brown fax');
    const far = similarity('The quick brown fox', 'Lorem ipsum dolor');
    assert.ok(near > 0.7 && near < 1, `near ${near}`);
    assert.ok(far < near);
  });

  it('is symmetric and between 0 and 1', () => {
    fc.assert(
      fc.property(textArb, textArb, (a, b) => {
        const s = similarity(a, b);
        assert.ok(s >= 0 && s <= 1);
        assert.equal(s, similarity(b, a));
      }),
      { numRuns: 500 },
    );
  });
});

describe('nearestPassages', () => {
  const blocks = [
    '# Intro\n\n',
    'The quick brown fox jumps over the dog.\n\n',
    'Lorem ipsum dolor sit amet.\n\n',
    'Something else entirely.\n',
  ];

  it('lists the nearest passages best first, each as it stands in the document', () => {
    const candidates = nearestPassages(blocks, 'The quick brown fax jumps over the dog.');
    assert.equal(candidates.length, 3);
    assert.equal(candidates[0]!.excerpt, 'The quick brown fox jumps over the dog.');
    assert.ok(candidates[0]!.similarity > 0.8);
    for (let i = 1; i < candidates.length; i++)
      assert.ok(candidates[i - 1]!.similarity >= candidates[i]!.similarity);
    const text = blocks.join('');
    for (const c of candidates) assert.ok(findExcerpt(text, c.excerpt).length > 0, c.excerpt);
  });

  it('takes runs of up to three blocks, honours the count and lists each passage once', () => {
    const candidates = nearestPassages(
      blocks,
      'Intro The quick brown fox jumps over the dog. Lorem ipsum dolor sit amet.',
      10,
    );
    assert.equal(
      candidates[0]!.excerpt,
      '# Intro\n\nThe quick brown fox jumps over the dog.\n\nLorem ipsum dolor sit amet.',
    );
    assert.equal(candidates.length, 9);
    assert.equal(new Set(candidates.map((c) => c.excerpt)).size, candidates.length);
    assert.equal(nearestPassages(blocks, 'fox', 1).length, 1);
    assert.deepEqual(nearestPassages([], 'anything'), []);
  });

  it('skips blank passages and shortens long ones', () => {
    assert.deepEqual(
      nearestPassages(['\n\n', ' \n'], 'x').map((c) => c.excerpt),
      [],
    );
    // A long passage is quoted as it stands, trimmed, so it can be passed back as an excerpt.
    const long = `${'word '.repeat(100)}\n`;
    const [only] = nearestPassages([long], 'word word');
    assert.equal(only!.excerpt, long.trim());
    // A single block past 2,000 characters is quoted by its start, which still covers it.
    const huge = `${'word '.repeat(1000)}\n`;
    const [start] = nearestPassages([huge], 'word word');
    assert.ok(start!.excerpt.length <= 2000 && huge.startsWith(start!.excerpt));
    assert.ok(!start!.excerpt.endsWith('…'));
  });

  it('always orders best first with rounded similarities, each a run of one to three blocks', () => {
    fc.assert(
      fc.property(
        fc.array(blockArb, { maxLength: 8 }),
        textArb,
        fc.integer({ min: 1, max: 5 }),
        (bs, ex, n) => {
          const candidates = nearestPassages(bs, ex, n);
          assert.ok(candidates.length <= n);
          const runs = new Set<string>();
          for (let i = 0; i < bs.length; i++)
            for (let span = 1; span <= 3 && i + span <= bs.length; span++)
              runs.add(
                bs
                  .slice(i, i + span)
                  .join('')
                  .trim(),
              );
          for (const [i, c] of candidates.entries()) {
            assert.ok(runs.has(c.excerpt));
            assert.notEqual(c.excerpt, '');
            assert.equal(c.similarity, Math.round(c.similarity * 100) / 100);
            if (i > 0) assert.ok(candidates[i - 1]!.similarity >= c.similarity);
          }
          assert.equal(new Set(candidates.map((c) => c.excerpt)).size, candidates.length);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('costs what the excerpt and the document do, not their product', () => {
    // 1,500 blocks and an excerpt of 20,000 characters: comparing each candidate with the excerpt
    // from scratch took seconds.
    const blocks = Array.from({ length: 1500 }, (_, i) => `Paragraph ${i} with some words in it.\n\n`);
    const started = performance.now();
    const [best] = nearestPassages(blocks, 'Paragraph 7 with some words '.repeat(715));
    assert.ok(performance.now() - started < 1000, `${Math.round(performance.now() - started)} ms`);
    assert.ok(best && best.similarity > 0);
  });
});
