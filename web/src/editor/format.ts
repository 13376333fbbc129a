import { EditorSelection, type ChangeSpec, type EditorState, type Line } from '@codemirror/state';
import type { Command } from '@codemirror/view';
import { isOrdered, linePrefix } from './markdown.ts';

/**
 * What the `Formatting` toolbar and its shortcuts do to the markdown: wrap a word or selection
 * in emphasis or code, make a link, turn lines into headings, lists, tasks or quotes. Every
 * command is a plain text change, so it reaches the shared document as typing does.
 */

export const INPUT = 'input.format';

/** The range a wrap acts on: the selection, else the word at the cursor, else the cursor. */
function targetOf(state: EditorState, from: number, to: number): { from: number; to: number } {
  if (from !== to) return { from, to };
  const word = state.wordAt(from);
  return word ?? { from, to };
}

/** Whether `text` is wrapped in exactly `mark` (`*` is not `**`, `***` counts as both). */
function wrappedIn(text: string, mark: string): boolean {
  if (text.length < mark.length * 2 || !text.startsWith(mark) || !text.endsWith(mark)) return false;
  if (mark !== '*') return true;
  const starts = /^\*+/.exec(text)![0].length;
  const ends = /\*+$/.exec(text)![0].length;
  return starts !== 2 && ends !== 2;
}

/** Wraps the selection (or the word at the cursor) in `mark`, or unwraps it when it already is. */
export function toggleWrap(mark: string): Command {
  return (view) => {
    const { state } = view;
    const tr = state.changeByRange((range) => {
      const { from, to } = targetOf(state, range.from, range.to);
      const inside = state.sliceDoc(from, to);
      const m = mark.length;
      // The marks inside the selection: **word** selected whole.
      if (wrappedIn(inside, mark)) {
        return {
          changes: [
            { from, to: from + m },
            { from: to - m, to },
          ],
          range: EditorSelection.range(from, to - 2 * m),
        };
      }
      // The marks just outside it: word selected within **word**.
      const around = state.sliceDoc(Math.max(0, from - m), Math.min(state.doc.length, to + m));
      if (from >= m && wrappedIn(around, mark) && around.length === to - from + 2 * m) {
        return {
          changes: [
            { from: from - m, to: from },
            { from: to, to: to + m },
          ],
          range: EditorSelection.range(from - m, to - m),
        };
      }
      return {
        changes: [
          { from, insert: mark },
          { from: to, insert: mark },
        ],
        range: EditorSelection.range(from + m, to + m),
      };
    });
    view.dispatch(state.update(tr, { userEvent: INPUT, scrollIntoView: true }));
    return true;
  };
}

export const toggleBold = toggleWrap('**');
export const toggleItalic = toggleWrap('*');
export const toggleCode = toggleWrap('`');

const LINK = /^\[([^\]]*)\]\([^)]*\)$/;

/** Makes the selection (or word) a link with the address selected to type; a link again: its text. */
export const toggleLink: Command = (view) => {
  const { state } = view;
  const tr = state.changeByRange((range) => {
    const { from, to } = targetOf(state, range.from, range.to);
    const text = state.sliceDoc(from, to);
    const link = LINK.exec(text);
    if (link) {
      const inner = link[1] ?? '';
      return {
        changes: { from, to, insert: inner },
        range: EditorSelection.range(from, from + inner.length),
      };
    }
    const label = text === '' ? 'link text' : text;
    const address = 'https://';
    const insert = `[${label}](${address})`;
    const start = from + label.length + 3;
    return {
      changes: { from, to, insert },
      range:
        text === ''
          ? EditorSelection.range(from + 1, from + 1 + label.length)
          : EditorSelection.range(start, start + address.length),
    };
  });
  view.dispatch(state.update(tr, { userEvent: INPUT, scrollIntoView: true }));
  return true;
};

/** The lines a selection covers, each once. */
export function selectedLines(state: EditorState): Line[] {
  const out: Line[] = [];
  let last = -1;
  for (const range of state.selection.ranges) {
    for (let pos = range.from; pos <= range.to;) {
      const line = state.doc.lineAt(pos);
      if (line.number > last) out.push(line);
      last = line.number;
      pos = line.to + 1;
    }
  }
  return out;
}

/** Heading: plain → `# ` → `## ` → `### ` → plain, on each selected line. */
export const cycleHeading: Command = (view) => {
  const { state } = view;
  const changes: ChangeSpec[] = [];
  for (const line of selectedLines(state)) {
    const heading = /^(#{1,6}) +/.exec(line.text);
    const level = heading ? heading[1]!.length : 0;
    const next = level === 0 ? '# ' : level < 3 ? `${'#'.repeat(level + 1)} ` : '';
    const prefix = heading ? heading[0].length : (linePrefix(line.text)?.length ?? 0);
    changes.push({ from: line.from, to: line.from + prefix, insert: next });
  }
  view.dispatch({ changes, userEvent: INPUT, scrollIntoView: true });
  return true;
};

type LineKind = 'bullet' | 'number' | 'task' | 'quote';

function kindOf(text: string): LineKind | null {
  const prefix = linePrefix(text);
  if (!prefix) return null;
  if (prefix.marker === '>') return 'quote';
  if (prefix.task) return 'task';
  return isOrdered(prefix.marker) ? 'number' : 'bullet';
}

/**
 * Turns the selected lines into bullets, numbers, tasks or quotes; when every one already is,
 * back into plain lines. Headings keep nothing of their `#`s.
 */
export function toggleLines(kind: LineKind): Command {
  return (view) => {
    const { state } = view;
    const lines = selectedLines(state).filter((l, i, all) => l.text.trim() !== '' || all.length === 1);
    const all = lines.every((l) => kindOf(l.text) === kind);
    const changes: ChangeSpec[] = [];
    let n = 0;
    for (const line of lines) {
      const prefix = linePrefix(line.text);
      const heading = /^#{1,6} +/.exec(line.text);
      const indent = prefix?.indent ?? '';
      const old = prefix ? prefix.length : heading ? heading[0].length : 0;
      let insert = indent;
      if (!all) {
        n += 1;
        insert += kind === 'bullet' ? '- ' : kind === 'number' ? `${n}. ` : kind === 'task' ? '- [ ] ' : '> ';
      }
      changes.push({ from: line.from, to: line.from + old, insert });
    }
    view.dispatch({ changes, userEvent: INPUT, scrollIntoView: true });
    return true;
  };
}

export const toggleBullets = toggleLines('bullet');
export const toggleNumbers = toggleLines('number');
export const toggleTasks = toggleLines('task');
export const toggleQuote = toggleLines('quote');
