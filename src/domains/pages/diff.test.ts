import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineDiff } from './diff.ts';

describe('lineDiff', () => {
  it('returns null for identical texts', () => {
    assert.equal(lineDiff('', ''), null);
    assert.equal(lineDiff('<p>a</p>\n<p>b</p>\n', '<p>a</p>\n<p>b</p>\n'), null);
  });

  it('shows a changed line with its context and points at it', () => {
    assert.deepEqual(lineDiff('A\nB\nC\n', 'A\nB2\nC\n'), {
      excerpt: '@@ -1,3 +1,3 @@\n A\n-B\n+B2\n C',
      changedRange: { start_line: 2, end_line: 2 },
    });
  });

  it('keeps at most two lines of context around a change', () => {
    const diff = lineDiff('1\n2\n3\n4\n5\n6\n7\n', '1\n2\n3\nfour\n5\n6\n7\n');
    assert.deepEqual(diff, {
      excerpt: '@@ -2,5 +2,5 @@\n 2\n 3\n-4\n+four\n 5\n 6',
      changedRange: { start_line: 4, end_line: 4 },
    });
  });

  it('points at an added line', () => {
    assert.deepEqual(lineDiff('a\nc\n', 'a\nb\nc\n'), {
      excerpt: '@@ -1,2 +1,3 @@\n a\n+b\n c',
      changedRange: { start_line: 2, end_line: 2 },
    });
  });

  it('points at the line after a removed one', () => {
    assert.deepEqual(lineDiff('a\nb\nc\n', 'a\nc\n'), {
      excerpt: '@@ -1,3 +1,2 @@\n a\n-b\n c',
      changedRange: { start_line: 2, end_line: 2 },
    });
  });

  it('covers every changed line of a multi-line replacement', () => {
    const diff = lineDiff('h\nx1\nx2\nx3\nf\n', 'h\ny1\ny2\nf\n');
    assert.equal(diff?.excerpt, '@@ -1,5 +1,4 @@\n h\n-x1\n-x2\n-x3\n+y1\n+y2\n f');
    assert.deepEqual(diff?.changedRange, { start_line: 2, end_line: 3 });
  });

  it('spans from the first to the last change when there are several hunks', () => {
    const diff = lineDiff('1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n', 'X\n2\n3\n4\n5\n6\n7\n8\n9\nY\n');
    assert.equal(diff?.excerpt, '@@ -1,3 +1,3 @@\n-1\n+X\n 2\n 3\n@@ -8,3 +8,3 @@\n 8\n 9\n-10\n+Y');
    assert.deepEqual(diff?.changedRange, { start_line: 1, end_line: 10 });
  });

  it('handles texts without a final newline and leaves out the no-newline markers', () => {
    const diff = lineDiff('a', 'b');
    assert.deepEqual(diff, {
      excerpt: '@@ -1,1 +1,1 @@\n-a\n+b',
      changedRange: { start_line: 1, end_line: 1 },
    });
    const added = lineDiff('a\nb', 'a\nb\n');
    assert.ok(added, 'adding the final newline is a change');
    assert.doesNotMatch(added.excerpt, /No newline/);
  });

  it('sees a change of line endings', () => {
    const diff = lineDiff('<p>x</p>\n', '<p>x</p>\r\n');
    assert.ok(diff, 'CRLF differs from LF');
    assert.deepEqual(diff.changedRange, { start_line: 1, end_line: 1 });
  });

  it('diffs unicode text by lines', () => {
    const diff = lineDiff('<p>Grüße</p>\n<p>🎉</p>\n', '<p>Grüße</p>\n<p>🎊</p>\n');
    assert.deepEqual(diff, {
      excerpt: '@@ -1,2 +1,2 @@\n <p>Grüße</p>\n-<p>🎉</p>\n+<p>🎊</p>',
      changedRange: { start_line: 2, end_line: 2 },
    });
  });

  it('caps the excerpt at 80 lines and says how many were left out', () => {
    const before = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n') + '\n';
    const after = Array.from({ length: 100 }, (_, i) => `LINE ${i}`).join('\n') + '\n';
    const diff = lineDiff(before, after);
    assert.ok(diff);
    const lines = diff.excerpt.split('\n');
    assert.equal(lines.length, 81);
    assert.equal(lines[0], '@@ -1,100 +1,100 @@');
    // One header and 200 changed lines: 80 shown, 121 left out.
    assert.equal(lines[80], '… 121 more diff lines');
    assert.deepEqual(diff.changedRange, { start_line: 1, end_line: 100 });
  });

  it('shows an excerpt of exactly 80 lines whole, and cuts one of 81', () => {
    const lines = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${prefix}${i}`).join('\n') + '\n';
    // One header, 40 removed and 39 added: 80 lines.
    const whole = lineDiff(lines('a', 40), lines('b', 39));
    assert.ok(whole);
    assert.equal(whole.excerpt.split('\n').length, 80);
    assert.doesNotMatch(whole.excerpt, /more diff lines/);
    assert.ok(whole.excerpt.endsWith('+b38'));

    // One header, 40 removed and 40 added: 81 lines, so the last is left out.
    const cut = lineDiff(lines('a', 40), lines('b', 40));
    assert.ok(cut);
    const shown = cut.excerpt.split('\n');
    assert.equal(shown.length, 81);
    assert.equal(shown[79], '+b38');
    assert.equal(shown[80], '… 1 more diff lines');
  });

  it('gives up, rather than work for long, on sources that differ in thousands of lines', () => {
    const lines = (tag: string) => Array.from({ length: 10_000 }, (_, i) => `<p>${tag} ${i}</p>`).join('\n');
    const started = performance.now();
    assert.equal(lineDiff(lines('old'), lines('new')), null);
    assert.ok(performance.now() - started < 2000, `${Math.round(performance.now() - started)} ms`);
    // A few changed lines in a long source are still shown.
    const long = lines('same');
    assert.match(lineDiff(long, long.replace('same 5000<', 'changed<'))?.excerpt ?? '', /\+<p>changed<\/p>/);
  });
});
