/**
 * Finding a quoted passage in a document, ignoring differences in white space, and saying
 * which passages come nearest when it is not there.
 */

export interface Span {
  start: number;
  end: number;
}

interface Folded {
  text: string;
  /** For each character of `text`, the offset of the character it came from. */
  origin: number[];
}

function isSpace(code: number): boolean {
  return (
    code === 32 ||
    (code >= 9 && code <= 13) ||
    code === 160 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/** Collapses every run of white space to one space and trims the ends, remembering offsets. */
export function foldWhitespace(text: string): Folded {
  const parts: string[] = [];
  const origin: number[] = [];
  let pendingSpace = -1;
  let runStart = -1;
  for (let i = 0; i < text.length; i++) {
    if (isSpace(text.charCodeAt(i))) {
      if (runStart >= 0) {
        parts.push(text.slice(runStart, i));
        runStart = -1;
      }
      if (pendingSpace < 0) pendingSpace = i;
      continue;
    }
    if (pendingSpace >= 0 && origin.length > 0) {
      parts.push(' ');
      origin.push(pendingSpace);
    }
    pendingSpace = -1;
    if (runStart < 0) runStart = i;
    origin.push(i);
  }
  if (runStart >= 0) parts.push(text.slice(runStart));
  return { text: parts.join(''), origin };
}

/**
 * Every place the excerpt occurs in the text, white space ignored (any run of it in one stands
 * for any run in the other, and the ends are trimmed), as spans of the text, in order. Matching
 * starts at each occurrence of the excerpt's longest word (the rarest, as a rule) and goes word by
 * word outwards from it, so the text is never copied and common short words cost nothing.
 */
export function findExcerpt(text: string, excerpt: string): Span[] {
  const words = foldWhitespace(excerpt).text.split(' ').filter(Boolean);
  if (words.length === 0) return [];
  let k = 0;
  for (let w = 1; w < words.length; w++) if (words[w]!.length > words[k]!.length) k = w;
  const anchor = words[k]!;
  const spans: Span[] = [];
  for (let at = text.indexOf(anchor); at >= 0; at = text.indexOf(anchor, at + 1)) {
    const start = wordsBefore(text, words, k, at);
    const end = start < 0 ? -1 : wordsAfter(text, words, k, at + anchor.length);
    if (end >= 0) spans.push({ start, end });
  }
  return spans.sort((a, b) => a.start - b.start);
}

/**
 * Where the words before the k-th begin, matched backwards from `pos` (where the k-th begins), or
 * -1: each is followed by white space, and the first may end a longer word of the text.
 */
function wordsBefore(text: string, words: string[], k: number, pos: number): number {
  for (let w = k - 1; w >= 0; w--) {
    let gap = pos;
    while (gap > 0 && isSpace(text.charCodeAt(gap - 1))) gap--;
    const word = words[w]!;
    if (gap === pos || gap < word.length || !text.startsWith(word, gap - word.length)) return -1;
    pos = gap - word.length;
  }
  return pos;
}

/**
 * Where the words after the k-th end, matched forwards from `pos` (where the k-th ends), or -1:
 * each follows white space, and the last may begin a longer word of the text.
 */
function wordsAfter(text: string, words: string[], k: number, pos: number): number {
  for (let w = k + 1; w < words.length; w++) {
    const gap = pos;
    while (pos < text.length && isSpace(text.charCodeAt(pos))) pos++;
    const word = words[w]!;
    if (pos === gap || !text.startsWith(word, pos)) return -1;
    pos += word.length;
  }
  return pos;
}

function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  const folded = foldWhitespace(text.toLowerCase()).text;
  for (let i = 0; i < folded.length - 1; i++) {
    const g = folded.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  return grams;
}

/** Dice similarity of character pairs, 0 to 1, case and white space ignored. */
export function similarity(a: string, b: string): number {
  return dice(bigrams(a), bigrams(b));
}

function dice(x: Map<string, number>, y: Map<string, number>): number {
  let total = 0;
  let shared = 0;
  for (const n of x.values()) total += n;
  for (const [g, n] of y) {
    total += n;
    shared += Math.min(n, x.get(g) ?? 0);
  }
  return total === 0 ? 0 : (2 * shared) / total;
}

export interface Candidate {
  excerpt: string;
  similarity: number;
}

const EXCERPT_MAX = 300;

export function shorten(text: string, max = EXCERPT_MAX): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max - 1)}…`;
}

/** Candidates longer than this are left out, or, for a single block, quoted by their start. */
const CANDIDATE_MAX = 2_000;

/**
 * The passages nearest to an excerpt that did not match: runs of one to three consecutive
 * blocks, best first, each quoted as it stands (trimmed) so it can be passed back as is. A
 * single block longer than the limit is quoted by its start, which still covers that block.
 */
export function nearestPassages(blocks: string[], excerpt: string, count = 3): Candidate[] {
  // The excerpt's pairs are counted once, not once per candidate: it may be as long as the document.
  const wanted = bigrams(excerpt);
  const scored: Candidate[] = [];
  for (let i = 0; i < blocks.length; i++) {
    for (let span = 1; span <= 3 && i + span <= blocks.length; span++) {
      const passage = blocks
        .slice(i, i + span)
        .join('')
        .trim();
      if (passage === '' || (span > 1 && passage.length > CANDIDATE_MAX)) continue;
      scored.push({
        excerpt: passage.length > CANDIDATE_MAX ? passage.slice(0, CANDIDATE_MAX).trimEnd() : passage,
        similarity: Math.round(dice(wanted, bigrams(passage)) * 100) / 100,
      });
    }
  }
  scored.sort((a, b) => b.similarity - a.similarity);
  const seen = new Set<string>();
  return scored.filter((c) => !seen.has(c.excerpt) && seen.add(c.excerpt)).slice(0, count);
}
