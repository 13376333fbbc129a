import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  capPrefix,
  CONTENT_CAP,
  normalizeNewlines,
  pairSafeIndex,
  sliceWindow,
  splitBlocks,
} from './text.ts';

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLow = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** True when `index` falls between the two halves of a surrogate pair. */
function splitsPair(text: string, index: number): boolean {
  return (
    index > 0 && index < text.length && isHigh(text.charCodeAt(index - 1)) && isLow(text.charCodeAt(index))
  );
}

/** Text heavy in characters outside the basic plane, so windows and cuts often land inside a pair. */
const emojiText = fc.string({
  unit: fc.constantFrom('a', 'b', ' ', '\n', 'é', '中', '😀', '𝄞', '👩‍💻', '🇫🇷', '\t', '#', '-'),
  maxLength: 80,
});

/** Markdown-ish text: every construct the lexer knows, in random order and often unfinished. */
const markdownish = fc
  .array(
    fc.constantFrom(
      'word',
      'é😀',
      ' ',
      '  ',
      '\t',
      '\n',
      '\n',
      '\n\n',
      '# ',
      '## ',
      '- ',
      '* ',
      '1. ',
      '> ',
      '    ',
      '```',
      '~~~',
      '---',
      '===',
      '| a | b |\n|---|---|\n',
      '<div>',
      '</div>',
      '<!--',
      '-->',
      '<pre>',
      '</pre>',
      '[x]: /url',
      '\\',
      '`',
      '*',
      '_',
    ),
    { maxLength: 50 },
  )
  .map((parts) => parts.join(''));

describe('normalizeNewlines', () => {
  it('turns CRLF and lone CR into LF and leaves everything else alone', () => {
    assert.equal(normalizeNewlines('a\r\nb\rc\nd'), 'a\nb\nc\nd');
    assert.equal(normalizeNewlines('\r\n\r\n'), '\n\n');
    assert.equal(normalizeNewlines('\r\r\n'), '\n\n');
    assert.equal(normalizeNewlines('no returns\n😀'), 'no returns\n😀');
    assert.equal(normalizeNewlines(''), '');
  });

  it('never leaves a CR behind and is idempotent', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '\r', '\n', '\r\n', '😀', ' ') }), (text) => {
        const once = normalizeNewlines(text);
        assert.ok(!once.includes('\r'));
        assert.equal(normalizeNewlines(once), once);
        assert.equal(once, text.replaceAll('\r\n', '\n').replaceAll('\r', '\n'));
      }),
    );
  });
});

describe('splitBlocks', () => {
  it('returns no blocks for the empty text', () => {
    assert.deepEqual(splitBlocks(''), []);
  });

  it('puts blank lines with the block before them', () => {
    assert.deepEqual(splitBlocks('# A\n\n\npara\n\n'), ['# A\n\n\n', 'para\n\n']);
    assert.deepEqual(splitBlocks('# H\n   \n  \npara\n'), ['# H\n   \n  \n', 'para\n']);
    assert.deepEqual(splitBlocks('a\n \t\n\nb\n'), ['a\n \t\n\n', 'b\n']);
    assert.deepEqual(splitBlocks('> q\nlazy\n\n> q2\n'), ['> q\nlazy\n\n', '> q2\n']);
    assert.deepEqual(splitBlocks('[ref]: /url\n\n[ref]\n'), ['[ref]: /url\n\n', '[ref]\n']);
  });

  it('gives leading blank lines to the first block, or keeps them as the only block', () => {
    assert.deepEqual(splitBlocks('\n\n# H\n'), ['\n\n# H\n']);
    assert.deepEqual(splitBlocks('  \n\n# H\n\ntext\n'), ['  \n\n# H\n\n', 'text\n']);
    assert.deepEqual(splitBlocks('\n\n\n'), ['\n\n\n']);
    assert.deepEqual(splitBlocks(' '), [' ']);
  });

  it('keeps front matter as one block, blank lines after it included', () => {
    assert.deepEqual(splitBlocks('---\ntitle: x\ntags: [a, b]\n---\n# H\n'), [
      '---\ntitle: x\ntags: [a, b]\n---\n',
      '# H\n',
    ]);
    assert.deepEqual(splitBlocks('---\na: 1\n\nb: 2\n...\n\n# H\n'), ['---\na: 1\n\nb: 2\n...\n\n', '# H\n']);
    assert.deepEqual(splitBlocks('---\nx: 1\n---'), ['---\nx: 1\n---']);
  });

  it('only treats a leading --- fence as front matter', () => {
    const text = '# H\n\n---\na: 1\n---\n';
    const blocks = splitBlocks(text);
    assert.equal(blocks[0], '# H\n\n');
    assert.equal(blocks.join(''), text);
  });

  it('keeps fenced code with blank lines, loose nested lists and HTML comments whole', () => {
    assert.deepEqual(splitBlocks('```js\nx\n\n\ny\n```\n\nz\n'), ['```js\nx\n\n\ny\n```\n\n', 'z\n']);
    assert.deepEqual(splitBlocks('~~~\na\n\n~~~\nb\n'), ['~~~\na\n\n~~~\n', 'b\n']);
    assert.deepEqual(splitBlocks('- a\n\n  - b\n\n- c\n\nafter\n'), ['- a\n\n  - b\n\n- c\n\n', 'after\n']);
    assert.deepEqual(splitBlocks('<!-- c\n\n-->\n\nx\n'), ['<!-- c\n\n-->\n\n', 'x\n']);
    assert.deepEqual(splitBlocks('    code\n\n    more\n\npara\n'), ['    code\n\n    more\n\n', 'para\n']);
  });

  it('splits tables, HTML blocks and paragraphs with hard breaks where the lexer does', () => {
    assert.deepEqual(splitBlocks('| a | b |\n|---|---|\n| 1 | 2 |\n\npara  \nline\n'), [
      '| a | b |\n|---|---|\n| 1 | 2 |\n\n',
      'para  \nline\n',
    ]);
    assert.deepEqual(splitBlocks('<div>\n\nhi\n\n</div>\n\ntext\n'), [
      '<div>\n\n',
      'hi\n\n',
      '</div>\n\n',
      'text\n',
    ]);
    assert.deepEqual(splitBlocks('para\n- item\n'), ['para\n', '- item\n']);
  });

  it('keeps text without a final newline', () => {
    assert.deepEqual(splitBlocks('a\n\nb'), ['a\n\n', 'b']);
    assert.deepEqual(splitBlocks('# H\n\ntrailing spaces   '), ['# H\n\n', 'trailing spaces   ']);
    assert.deepEqual(splitBlocks('text\n\n\t\n\nmore'), ['text\n\n\t\n\n', 'more']);
  });

  it('does not merge the whole document into one block when it ends in an empty list item', () => {
    // The lexer reports the final "- " as "-\n"; only the block where they differ may lose its split.
    assert.deepEqual(splitBlocks('# T\n\npara\n\n- '), ['# T\n\n', 'para\n\n', '- ']);
    assert.deepEqual(splitBlocks('# T\n\n- a\n- '), ['# T\n\n', '- a\n- ']);
  });

  it('joins back to its input exactly, with non-empty blocks and blank lines never starting a later block', () => {
    fc.assert(
      fc.property(markdownish, (text) => {
        const blocks = splitBlocks(text);
        assert.equal(blocks.join(''), text);
        for (const [i, block] of blocks.entries()) {
          assert.notEqual(block, '');
          if (i > 0) assert.doesNotMatch(block, /^[ \t]*\n/, `block ${i} starts with a blank line`);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps text nested past what the lexer can recurse through whole, as one block', () => {
    // A line of a thousand block quote or list markers is as deep as the lexer goes before its stack
    // runs out; 60,000 characters of them are a legal document.
    for (const unit of ['>', '> ', '1. ', '+ ', '- ']) {
      const deep = `${unit.repeat(Math.floor(CONTENT_CAP / unit.length) - 20)}x\n`;
      const text = `# Deep\n\npara\n\n${deep}`;
      const blocks = splitBlocks(text);
      assert.equal(blocks.join(''), text, unit);
      // The block before the deep line may run on into it, so it goes with the rest.
      assert.deepEqual(blocks, ['# Deep\n\n', `para\n\n${deep}`], unit);
    }
    // Nesting a document could really have is split as usual.
    assert.deepEqual(splitBlocks('> > > a\n\npara\n'), ['> > > a\n\n', 'para\n']);
  });

  it('joins back exactly for any text at all', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 60 }), (text) => {
        assert.equal(splitBlocks(text).join(''), text);
      }),
      { numRuns: 500 },
    );
  });
});

describe('pairSafeIndex', () => {
  it('moves an index off the middle of a pair, towards the start', () => {
    const text = 'a😀b';
    assert.equal(pairSafeIndex(text, 0), 0);
    assert.equal(pairSafeIndex(text, 1), 1);
    assert.equal(pairSafeIndex(text, 2), 1);
    assert.equal(pairSafeIndex(text, 3), 3);
    assert.equal(pairSafeIndex(text, 4), 4);
    assert.equal(pairSafeIndex(text, 99), 99);
    assert.equal(pairSafeIndex('😀😀', 2), 2);
    assert.equal(pairSafeIndex('😀😀', 3), 2);
  });

  it('never answers an index inside a pair, and moves at most one back', () => {
    fc.assert(
      fc.property(emojiText, fc.nat(90), (text, index) => {
        const safe = pairSafeIndex(text, index);
        assert.ok(!splitsPair(text, safe));
        assert.ok(safe === index || (safe === index - 1 && splitsPair(text, index)));
      }),
    );
  });
});

describe('sliceWindow', () => {
  it('returns exactly the characters asked for when neither end falls inside a pair', () => {
    assert.equal(sliceWindow('a😀b', 0, 1).text, 'a');
    assert.equal(sliceWindow('a😀b', 1, 2).text, '😀');
    assert.equal(sliceWindow('a😀b', 0, 3).text, 'a😀');
    assert.equal(sliceWindow('a😀b', 3, 1).text, 'b');
    assert.equal(sliceWindow('a😀b', 1, 99).text, '😀b');
    assert.equal(sliceWindow('a😀b', 9, 3).text, '');
    assert.equal(sliceWindow('', 0, 5).text, '');
  });

  it('never splits a pair, and consecutive windows (offset += window) reassemble the text exactly', () => {
    fc.assert(
      fc.property(emojiText, fc.integer({ min: 1, max: 12 }), (text, window) => {
        let joined = '';
        // Paging as read_document's result says: the offset it applied, plus the window.
        for (let offset = 0; offset < text.length;) {
          const { start, text: part } = sliceWindow(text, offset, window);
          offset = start + window;
          assert.ok(part.isWellFormed(), `window at ${offset} splits a pair: ${JSON.stringify(part)}`);
          assert.ok(part.length <= window + 1);
          joined += part;
        }
        assert.equal(joined, text);
      }),
      { numRuns: 1000 },
    );
  });

  it('is never empty before the end of the text, so paging always moves forward', () => {
    // A one-character window that starts on a pair has to hold the whole pair.
    assert.equal(sliceWindow('😀', 0, 1).text, '😀');
    fc.assert(
      fc.property(emojiText, fc.nat(80), fc.integer({ min: 1, max: 12 }), (text, offset, window) => {
        if (offset < text.length && !splitsPair(text, offset))
          assert.notEqual(sliceWindow(text, offset, window).text, '');
      }),
      { numRuns: 1000 },
    );
  });
});

describe('capPrefix', () => {
  it('returns content within the cap unchanged', () => {
    assert.equal(capPrefix('', 10), '');
    assert.equal(capPrefix('# A\n\nb\n', 7), '# A\n\nb\n');
    const full = 'x'.repeat(CONTENT_CAP);
    assert.equal(capPrefix(full, CONTENT_CAP), full);
  });

  it('stops at the last block boundary within the cap', () => {
    const text = '# One\n\npara two\n\npara three\n';
    assert.equal(capPrefix(text, 20), '# One\n\npara two\n\n');
    assert.equal(capPrefix(text, 17), '# One\n\npara two\n\n');
    assert.equal(capPrefix(text, 16), '# One\n\n');
    assert.equal(capPrefix(text, 7), '# One\n\n');
  });

  it('cuts a single over-long block at its last line break within the cap', () => {
    const code = '```\nline one\nline two\nline three\n```\n';
    assert.equal(capPrefix(code, 25), '```\nline one\nline two\n');
    assert.equal(capPrefix(code + '\nafter\n', 13), '```\nline one\n');
    assert.equal(capPrefix(code + '\nafter\n', 12), '```\n');
  });

  it('cuts a block with no line break in reach at the cap, off any pair', () => {
    assert.equal(capPrefix('abcdefgh', 5), 'abcde');
    assert.equal(capPrefix('abcd😀efgh', 5), 'abcd');
    assert.equal(capPrefix('abcd😀efgh', 6), 'abcd😀');
  });

  it('is the longest prefix within the cap ending on a block, or on a line inside one over-long block', () => {
    fc.assert(
      fc.property(fc.oneof(markdownish, emojiText), fc.integer({ min: 2, max: 60 }), (content, cap) => {
        const taken = capPrefix(content, cap);
        assert.ok(content.startsWith(taken));
        assert.ok(taken.length <= cap);
        assert.ok(taken.isWellFormed());
        if (content.length <= cap) return assert.equal(taken, content);
        const blocks = splitBlocks(content);
        const ends: number[] = [];
        let at = 0;
        for (const block of blocks) ends.push((at += block.length));
        const fitting = ends.filter((end) => end <= cap);
        if (fitting.length > 0) {
          assert.equal(taken.length, fitting.at(-1));
        } else {
          const first = blocks[0]!;
          const lastBreak = first.slice(0, cap).lastIndexOf('\n');
          if (lastBreak >= 0) assert.equal(taken, first.slice(0, lastBreak + 1));
          else assert.ok(taken.length === cap || (taken.length === cap - 1 && splitsPair(first, cap)));
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('lexes only the text within reach of the cap, however long a single line is', () => {
    // Eight million characters on one line: the lexer would recurse or backtrack through all of them.
    for (const unit of ['*', '|', '_', '- ', '> ', '1. ', 'a']) {
      const line = unit.repeat(Math.ceil(8_000_000 / unit.length));
      const started = performance.now();
      const taken = capPrefix(line, CONTENT_CAP);
      assert.equal(taken, line.slice(0, CONTENT_CAP), unit);
      assert.ok(performance.now() - started < 2000, `${unit}: ${Math.round(performance.now() - started)} ms`);
    }
    const blocks = `${'# Heading\n\nA paragraph of text.\n\n'.repeat(2000)}${'*'.repeat(8_000_000)}`;
    assert.equal(capPrefix(blocks, CONTENT_CAP), capPrefix(blocks.slice(0, 2 * CONTENT_CAP), CONTENT_CAP));
  });

  it('taken again and again, reassembles the content', () => {
    fc.assert(
      fc.property(fc.oneof(markdownish, emojiText), fc.integer({ min: 2, max: 40 }), (content, cap) => {
        let rest = content;
        let joined = '';
        for (let steps = 0; rest !== ''; steps++) {
          assert.ok(steps <= content.length, 'no progress');
          const taken = capPrefix(rest, cap);
          assert.notEqual(taken, '');
          joined += taken;
          rest = rest.slice(taken.length);
        }
        assert.equal(joined, content);
      }),
      { numRuns: 1000 },
    );
  });
});
