import { defineLanguageFacet, Language, LanguageSupport, syntaxTree } from '@codemirror/language';
import type { EditorState } from '@codemirror/state';
import type { SyntaxNode } from '@lezer/common';
import { GFM, parser } from '@lezer/markdown';

/**
 * The markdown the editor understands: CommonMark with GitHub's tables, task lists,
 * strikethrough and bare links. Only the parser: no embedded languages in code blocks, no
 * completion, which keeps the editor's download small.
 */
export const markdownLanguage = new Language(defineLanguageFacet({}), parser.configure(GFM), [], 'markdown');

export const markdownSupport = () => new LanguageSupport(markdownLanguage);

/** A list item or quote line as written: its indentation, its marker and what follows. */
export interface LinePrefix {
  indent: string;
  /** `-`, `*`, `+`, `1.`, `1)`, or `>` for a quote. */
  marker: string;
  /** `[ ]` or `[x]` on a task, else ''. */
  task: string;
  /** The prefix's whole length: indentation, marker, task box and the spaces after them. */
  length: number;
  /** Whether anything follows the prefix. */
  empty: boolean;
}

const ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])(?:( \[[ xX]\]))?( +|$)/;
const QUOTE = /^([ \t]*)(>)( ?)/;

/** The list or quote prefix of a line's text, or null when it has none. */
export function linePrefix(text: string): LinePrefix | null {
  const item = ITEM.exec(text);
  if (item) {
    const [whole, indent = '', marker = '', task = ''] = item;
    return { indent, marker, task: task.trim(), length: whole.length, empty: whole.length === text.length };
  }
  const quote = QUOTE.exec(text);
  if (quote) {
    const [whole, indent = ''] = quote;
    return { indent, marker: '>', task: '', length: whole.length, empty: whole.length === text.length };
  }
  return null;
}

export const isOrdered = (marker: string) => /^\d/.test(marker);

/** Whether a position sits inside a fenced or indented code block. */
export function inCodeBlock(state: EditorState, pos: number): boolean {
  for (let node: SyntaxNode | null = syntaxTree(state).resolveInner(pos, -1); node; node = node.parent) {
    if (node.name === 'FencedCode' || node.name === 'CodeBlock') return true;
  }
  return false;
}
