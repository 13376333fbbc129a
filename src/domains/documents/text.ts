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
  // Block tokens only: their raw text is all a split needs, and inline lexing would only make garbage.
  const lexer = new Lexer({ gfm: true });
  for (const token of lexer.blockTokens(rest, [])) {
    if (token.raw === '') continue;
    if (token.type === 'space') {
      if (blocks.length > 0) blocks[blocks.length - 1] += token.raw;
      else leading += token.raw;
      continue;
    }
    blocks.push(leading + token.raw);
    leading = '';
  }
  if (leading) {
    if (blocks.length > 0) blocks[blocks.length - 1] += leading;
    else blocks.push(leading);
  }
  // The lexer's raw text joins back to its input; should it ever not, keep the text whole.
  return blocks.join('') === markdown ? blocks : [markdown];
}

function isHigh(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
function isLow(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/** Moves an index off the middle of a surrogate pair, towards the start. */
export function pairSafeIndex(text: string, index: number): number {
  if (
    index > 0 &&
    index < text.length &&
    isLow(text.charCodeAt(index)) &&
    isHigh(text.charCodeAt(index - 1))
  ) {
    return index - 1;
  }
  return index;
}

/**
 * A window of `text` that never splits a surrogate pair. Both ends move back off a pair's
 * middle, so consecutive windows (`offset + window`) neither lose nor repeat a character.
 */
export function sliceWindow(text: string, offset: number, window: number): string {
  const start = pairSafeIndex(text, Math.min(offset, text.length));
  const end = pairSafeIndex(text, Math.min(offset + window, text.length));
  return text.slice(start, Math.max(start, end));
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
