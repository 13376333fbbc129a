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

/** Collapses every run of white space to one space and trims the ends, remembering offsets. */
export function foldWhitespace(text: string): Folded {
  let out = '';
  const origin: number[] = [];
  let pendingSpace = -1;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (/\s/.test(ch)) {
      if (pendingSpace < 0) pendingSpace = i;
      continue;
    }
    if (pendingSpace >= 0 && out !== '') {
      out += ' ';
      origin.push(pendingSpace);
    }
    pendingSpace = -1;
    out += ch;
    origin.push(i);
  }
  return { text: out, origin };
}

/** Every place the excerpt occurs in the text, white space ignored, as spans of the text. */
export function findExcerpt(text: string, excerpt: string): Span[] {
  const needle = foldWhitespace(excerpt).text;
  if (needle === '') return [];
  const hay = foldWhitespace(text);
  const spans: Span[] = [];
  for (let at = hay.text.indexOf(needle); at >= 0; at = hay.text.indexOf(needle, at + 1)) {
    const last = at + needle.length - 1;
    spans.push({ start: hay.origin[at]!, end: hay.origin[last]! + 1 });
  }
  return spans;
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
  const x = bigrams(a);
  const y = bigrams(b);
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

/**
 * The passages nearest to an excerpt that did not match: runs of one to three consecutive
 * blocks, best first, each quoted as it stands so it can be passed back as is.
 */
export function nearestPassages(blocks: string[], excerpt: string, count = 3): Candidate[] {
  const scored: Candidate[] = [];
  for (let i = 0; i < blocks.length; i++) {
    for (let span = 1; span <= 3 && i + span <= blocks.length; span++) {
      const passage = blocks.slice(i, i + span).join('');
      if (passage.trim() === '') continue;
      scored.push({
        excerpt: shorten(passage),
        similarity: Math.round(similarity(excerpt, passage) * 100) / 100,
      });
    }
  }
  scored.sort((a, b) => b.similarity - a.similarity);
  const seen = new Set<string>();
  return scored.filter((c) => !seen.has(c.excerpt) && seen.add(c.excerpt)).slice(0, count);
}
