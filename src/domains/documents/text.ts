import { Lexer } from 'marked';

/** The most characters one create or edit writes; longer content is refused or stops early. */
export const CONTENT_CAP = 60_000;

/** CR and CRLF become LF on the way in; every count of characters is taken after this. */
export function normalizeNewlines(text: string): string {
  return text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text;
}

const FRONT_MATTER = /^---[ \t]*\n[\s\S]*?\n(?:---|\.\.\.)[ \t]*(?:\n|$)/;

/**
 * Splits markdown into top-level blocks whose concatenation is the input, byte for byte:
 * front matter is one block, and blank lines belong to the block before them.
 */
export function splitBlocks(markdown: string): string[] {
  if (markdown === '') return [];
  const blocks: string[] = [];
  let rest = markdown;
  const front = FRONT_MATTER.exec(rest);
  if (front) {
    blocks.push(front[0]);
    rest = rest.slice(front[0].length);
  }
  let leading = '';
  let at = 0;
  // Block tokens only: their raw text is all a split needs, and inline lexing would only make garbage.
  for (const token of new Lexer({ gfm: true }).blockTokens(rest, [])) {
    if (token.raw === '') continue;
    // Should a token's raw text ever differ from the input, the rest stays whole in one block.
    if (!rest.startsWith(token.raw, at)) break;
    at += token.raw.length;
    if (token.type === 'space') {
      if (blocks.length > 0) blocks[blocks.length - 1] += token.raw;
      else leading += token.raw;
      continue;
    }
    blocks.push(leading + token.raw);
    leading = '';
  }
  const tail = leading + rest.slice(at);
  if (tail) blocks.push(tail);
  return blocks;
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

/**
 * The longest prefix of `content` within `cap` characters that ends at a block boundary, or
 * inside a single block longer than the cap, at a line boundary (or, with no line break in
 * reach, at the cap itself, off any surrogate pair).
 */
export function capPrefix(content: string, cap: number): string {
  if (content.length <= cap) return content;
  let taken = '';
  for (const block of splitBlocks(content)) {
    if (taken.length + block.length > cap) {
      if (taken !== '') return taken;
      const room = block.slice(0, cap);
      const lastBreak = room.lastIndexOf('\n');
      if (lastBreak >= 0) return room.slice(0, lastBreak + 1);
      return block.slice(0, pairSafeIndex(block, cap));
    }
    taken += block;
  }
  return taken;
}
