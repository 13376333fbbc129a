import { Lexer } from 'marked';

/** The most characters one create or edit writes; longer content is refused or stops early. */
export const CONTENT_CAP = 60_000;

/** CR and CRLF become LF on the way in; every count of characters is taken after this. */
export function normalizeNewlines(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

const FRONT_MATTER = /^---[ \t]*\n[\s\S]*?\n(?:---|\.\.\.)[ \t]*(?:\n|$)/;

/**
 * The lexer recurses once per block quote or list marker opening a line, and its stack runs
 * out somewhere past a thousand; no document a person writes nests anywhere near this deep.
 */
const MAX_NESTING = 100;

/** Where the first line opening more than MAX_NESTING block quotes and list items starts, or -1. */
function tooDeep(markdown: string): number {
  for (let start = 0; start < markdown.length;) {
    let depth = 0;
    let i = start;
    for (;;) {
      let j = i;
      while (j < i + 3 && markdown[j] === ' ') j++;
      const c = markdown[j];
      if (c === '>') j++;
      else if ((c === '-' || c === '+' || c === '*') && /[ \t]/.test(markdown[j + 1] ?? '')) j += 2;
      else {
        let k = j;
        while (k < j + 9 && /[0-9]/.test(markdown[k] ?? '')) k++;
        if (k === j || !/[.)]/.test(markdown[k] ?? '') || !/[ \t]/.test(markdown[k + 1] ?? '')) break;
        j = k + 2;
      }
      if (++depth > MAX_NESTING) return start;
      if (markdown[j] === ' ' || markdown[j] === '\t') j++;
      i = j;
    }
    const end = markdown.indexOf('\n', i);
    start = end < 0 ? markdown.length : end + 1;
  }
  return -1;
}

/**
 * Adds the lexer's blocks of `markdown` (text after any front matter) to `blocks`; blank lines
 * join the block before them, the front matter too.
 */
function lexBlocks(markdown: string, blocks: string[]): string[] {
  let leading = '';
  let at = 0;
  // Block tokens only: their raw text is all a split needs, and inline lexing would only make garbage.
  for (const token of new Lexer({ gfm: true }).blockTokens(markdown, [])) {
    if (token.raw === '') continue;
    // Should a token's raw text ever differ from the input, the rest stays whole in one block.
    if (!markdown.startsWith(token.raw, at)) break;
    at += token.raw.length;
    if (token.type === 'space') {
      if (blocks.length > 0) blocks[blocks.length - 1] += token.raw;
      else leading += token.raw;
      continue;
    }
    blocks.push(leading + token.raw);
    leading = '';
  }
  const tail = leading + markdown.slice(at);
  if (tail) blocks.push(tail);
  return blocks;
}

/**
 * Splits markdown into top-level blocks whose concatenation is the input, byte for byte:
 * front matter is one block, and blank lines belong to the block before them. From a line
 * nested deeper than the lexer can follow, the rest (with the block before it, which may run
 * on into it) stays one block.
 */
export function splitBlocks(markdown: string): string[] {
  if (markdown === '') return [];
  const front = FRONT_MATTER.exec(markdown)?.[0] ?? '';
  const head = front ? [front] : [];
  const rest = markdown.slice(front.length);
  if (rest === '') return head;
  const deep = tooDeep(rest);
  if (deep < 0) {
    try {
      return lexBlocks(rest, [...head]);
    } catch (error) {
      // Whatever the nesting check misses, the lexer's stack does not: keep the text whole.
      if (!(error instanceof RangeError)) throw error;
      return [...head, rest];
    }
  }
  const before = lexBlocks(rest.slice(0, deep), [...head]);
  const runsOn = before.length > head.length ? before.pop()! : '';
  return [...before, runsOn + rest.slice(deep)];
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Whether an index falls between the two halves of a surrogate pair. */
export function splitsPair(text: string, index: number): boolean {
  return (
    index > 0 && index < text.length && isLow(text.charCodeAt(index)) && isHigh(text.charCodeAt(index - 1))
  );
}

/** Moves an index off the middle of a surrogate pair, towards the start. */
export function pairSafeIndex(text: string, index: number): number {
  return splitsPair(text, index) ? index - 1 : index;
}

/** Moves an index off the middle of a surrogate pair, towards the end. */
export function pairSafeIndexForward(text: string, index: number): number {
  return splitsPair(text, index) ? index + 1 : index;
}

/**
 * A window of `text` that never splits a surrogate pair. Both ends move forward off a pair's
 * middle, and the window is measured from the start it applied, so paging with the returned
 * offset plus the window neither loses nor repeats a character, and every window short of the
 * end holds at least one. A window ending inside a pair carries its second half: one character
 * more than asked.
 */
export function sliceWindow(text: string, offset: number, window: number): { start: number; text: string } {
  const start = pairSafeIndexForward(text, Math.min(offset, text.length));
  const end = pairSafeIndexForward(text, Math.min(start + window, text.length));
  return { start, text: text.slice(start, Math.max(start, end)) };
}

/** How far past the cap a cut looks to see the lines that decide where the blocks before it end. */
const CAP_LOOKAHEAD = 10_000;

/**
 * The longest prefix of `content` within `cap` characters that ends at a block boundary, or
 * inside a single block longer than the cap, at a line boundary (or, with no line break in
 * reach, at the cap itself, off any surrogate pair). Only the text up to the cap and the two
 * lines after it are lexed (a table needs two lines to interrupt the block before it), so
 * content of any length costs what the cap does.
 */
export function capPrefix(content: string, cap: number): string {
  if (content.length <= cap) return content;
  const after = content.slice(cap, cap + CAP_LOOKAHEAD);
  const lineEnd = after.indexOf('\n');
  const nextEnd = lineEnd < 0 ? -1 : after.indexOf('\n', lineEnd + 1);
  const reach = content.slice(0, cap + (nextEnd >= 0 ? nextEnd + 1 : after.length));
  let taken = '';
  // The last block in reach ends past the cap, so it is never taken however it would end.
  for (const block of splitBlocks(reach)) {
    if (taken.length + block.length > cap) break;
    taken += block;
  }
  if (taken !== '') return taken;
  const room = content.slice(0, cap);
  const lastBreak = room.lastIndexOf('\n');
  if (lastBreak >= 0) return room.slice(0, lastBreak + 1);
  return content.slice(0, pairSafeIndex(content, cap));
}
