import { EditorSelection, type ChangeSpec, type EditorState, type Line } from '@codemirror/state';
import type { Command, EditorView, KeyBinding } from '@codemirror/view';
import { inCodeBlock, isOrdered, linePrefix } from './markdown.ts';

/**
 * What the `Formatting` toolbar and the keyboard do to the markdown: wrap a word or selection
 * in emphasis or code, make a link, turn lines into headings, lists, tasks or quotes; continue
 * lists on Enter; indent and outdent list items on Tab. Every command is a plain text change,
 * so it reaches the shared document like typing does.
 */

const INPUT = 'input.format';

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
function selectedLines(state: EditorState): Line[] {
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

/** The marker the next item of a list starts with: the same bullet, an open box, the next number. */
function nextMarker(marker: string, task: string): string {
  const ordered = /^(\d+)([.)])$/.exec(marker);
  const head = ordered ? `${Number(ordered[1]) + 1}${ordered[2]}` : marker;
  return task ? `${head} [ ]` : head;
}

/** Renumbers the items of an ordered list after `line` at the same indentation, counting on from `start`. */
function renumberAfter(state: EditorState, line: Line, indent: string, start: number): ChangeSpec[] {
  const changes: ChangeSpec[] = [];
  let n = start;
  for (let at = line.number + 1; at <= state.doc.lines; at++) {
    const next = state.doc.line(at);
    const prefix = linePrefix(next.text);
    if (!prefix || prefix.indent !== indent || !isOrdered(prefix.marker)) break;
    n += 1;
    const digits = /^\d+/.exec(prefix.marker)![0];
    if (Number(digits) !== n) {
      const from = next.from + indent.length;
      changes.push({ from, to: from + digits.length, insert: String(n) });
    }
  }
  return changes;
}

/**
 * Enter in a list item or quote: a new item with the same marker (the next number, an open
 * box); on an item with nothing in it, the list ends there (a nested one moves out a level).
 * Anywhere else, or in code, it does nothing and the plain Enter runs.
 */
export const continueList: Command = (view) => {
  const { state } = view;
  if (state.selection.ranges.length !== 1) return false;
  const range = state.selection.main;
  const line = state.doc.lineAt(range.from);
  if (state.doc.lineAt(range.to).number !== line.number) return false;
  const prefix = linePrefix(line.text);
  if (!prefix || range.from < line.from + prefix.length) return false;
  if (inCodeBlock(state, line.from)) return false;
  if (prefix.empty) {
    // An empty nested item moves out one level.
    const outdent =
      prefix.indent.length > 0 && prefix.marker !== '>' ? outdentBy(state, line, prefix.indent) : 0;
    if (outdent > 0) {
      view.dispatch({
        changes: { from: line.from, to: line.from + outdent },
        userEvent: 'delete.dedent',
        scrollIntoView: true,
      });
      return true;
    }
    // Else the list ends: the empty item becomes the blank line after it, the cursor goes below.
    view.dispatch({
      changes: { from: line.from, to: line.to, insert: '\n' },
      selection: { anchor: line.from + 1 },
      userEvent: 'input',
      scrollIntoView: true,
    });
    return true;
  }
  const marker = prefix.marker === '>' ? '>' : nextMarker(prefix.marker, prefix.task);
  const insert = `\n${prefix.indent}${marker} `;
  const changes: ChangeSpec[] = [{ from: range.from, to: range.to, insert }];
  const ordered = /^(\d+)/.exec(prefix.marker);
  if (ordered) changes.push(...renumberAfter(state, line, prefix.indent, Number(ordered[1]) + 1));
  view.dispatch({
    changes,
    selection: { anchor: range.from + insert.length },
    userEvent: 'input',
    scrollIntoView: true,
  });
  return true;
};

/** How far a nested item moves out: to its parent's column (the item above with less indentation). */
function outdentBy(state: EditorState, line: Line, indent: string): number {
  for (let at = line.number - 1; at >= 1; at--) {
    const above = linePrefix(state.doc.line(at).text);
    if (!above || above.marker === '>') break;
    if (above.indent.length < indent.length) return indent.length - above.indent.length;
  }
  return Math.min(indent.length, 2);
}

/** The list items among the selected lines, or null when a selected line is not one. */
function selectedItems(state: EditorState) {
  const items: { line: Line; indent: string; marker: string }[] = [];
  for (const line of selectedLines(state)) {
    const prefix = linePrefix(line.text);
    if (!prefix || prefix.marker === '>') return null;
    items.push({ line, indent: prefix.indent, marker: prefix.marker });
  }
  return items.length > 0 ? items : null;
}

/** Tab on list items: each goes in under the item above (to where that item's text starts). */
export const indentItems: Command = (view) => {
  const { state } = view;
  if (inCodeBlock(state, state.selection.main.head)) return false;
  const items = selectedItems(state);
  if (!items) return false;
  const changes: ChangeSpec[] = items.map(({ line, indent }) => {
    let by = 2;
    for (let at = line.number - 1; at >= 1; at--) {
      const above = linePrefix(state.doc.line(at).text);
      if (!above || above.marker === '>') break;
      if (above.indent.length <= indent.length) {
        by =
          above.indent.length === indent.length
            ? above.marker.length + 1
            : indent.length - above.indent.length;
        if (by <= 0) by = 2;
        break;
      }
    }
    return { from: line.from, insert: ' '.repeat(by) };
  });
  view.dispatch({ changes, userEvent: 'input.indent', scrollIntoView: true });
  return true;
};

/** Shift+Tab on list items: each comes out one level (one at the top stays where it is). */
export const outdentItems: Command = (view) => {
  const { state } = view;
  if (inCodeBlock(state, state.selection.main.head)) return false;
  const items = selectedItems(state);
  if (!items) return false;
  const changes: ChangeSpec[] = [];
  for (const { line, indent } of items) {
    if (indent.length === 0) continue;
    changes.push({ from: line.from, to: line.from + outdentBy(state, line, indent) });
  }
  // Items already at the top: Shift+Tab moves focus back instead, as anywhere else.
  if (changes.length === 0) return false;
  view.dispatch({ changes, userEvent: 'delete.dedent', scrollIntoView: true });
  return true;
};

const INDENT = '  ';

/** Tab in a code block: indentation at the cursor (every selected line, for a selection). */
export const indentInCode: Command = (view) => {
  const { state } = view;
  if (!inCodeBlock(state, state.selection.main.head)) return false;
  const tr = state.changeByRange((range) => {
    if (range.empty) {
      return {
        changes: { from: range.from, insert: INDENT },
        range: EditorSelection.cursor(range.from + INDENT.length),
      };
    }
    const changes: ChangeSpec[] = [];
    for (let pos = range.from; pos <= range.to;) {
      const line = state.doc.lineAt(pos);
      changes.push({ from: line.from, insert: INDENT });
      pos = line.to + 1;
    }
    const set = state.changes(changes);
    return {
      changes: set,
      range: EditorSelection.range(set.mapPos(range.anchor, 1), set.mapPos(range.head, 1)),
    };
  });
  view.dispatch(state.update(tr, { userEvent: 'input.indent', scrollIntoView: true }));
  return true;
};

/** Shift+Tab in a code block: up to one indentation less on each selected line. */
export const outdentInCode: Command = (view) => {
  const { state } = view;
  if (!inCodeBlock(state, state.selection.main.head)) return false;
  const changes: ChangeSpec[] = [];
  for (const line of selectedLines(state)) {
    const spaces = /^ {1,2}|^\t/.exec(line.text);
    if (spaces) changes.push({ from: line.from, to: line.from + spaces[0].length });
  }
  view.dispatch({ changes, userEvent: 'delete.dedent', scrollIntoView: true });
  return true;
};

/**
 * Backspace right after a list or quote marker (at the start of the item's text): the marker
 * goes, the text stays a plain line.
 */
export const deleteMarker: Command = (view) => {
  const { state } = view;
  const range = state.selection.main;
  if (!range.empty || state.selection.ranges.length !== 1) return false;
  const line = state.doc.lineAt(range.head);
  const prefix = linePrefix(line.text);
  if (!prefix || range.head !== line.from + prefix.length || inCodeBlock(state, line.from)) return false;
  view.dispatch({
    changes: { from: line.from + prefix.indent.length, to: range.head },
    userEvent: 'delete.backward',
    scrollIntoView: true,
  });
  return true;
};

/** Mod+Enter on a task: its box toggles. */
export const toggleTask: Command = (view) => {
  const line = view.state.doc.lineAt(view.state.selection.main.head);
  const prefix = linePrefix(line.text);
  if (!prefix?.task) return false;
  const at = line.from + line.text.indexOf(prefix.task, prefix.indent.length) + 1;
  view.dispatch({
    changes: { from: at, to: at + 1, insert: prefix.task === '[ ]' ? 'x' : ' ' },
    userEvent: INPUT,
  });
  return true;
};

/** Tab is the editor's only where it indents (list items, code); elsewhere focus moves on. */
export const markdownKeymap: readonly KeyBinding[] = [
  { key: 'Mod-b', run: toggleBold, preventDefault: true },
  { key: 'Mod-i', run: toggleItalic, preventDefault: true },
  { key: 'Mod-e', run: toggleCode, preventDefault: true },
  { key: 'Mod-k', run: toggleLink, preventDefault: true },
  { key: 'Enter', run: continueList },
  { key: 'Mod-Enter', run: toggleTask },
  { key: 'Backspace', run: deleteMarker },
  { key: 'Tab', run: (view: EditorView) => indentItems(view) || indentInCode(view) },
  { key: 'Shift-Tab', run: (view: EditorView) => outdentItems(view) || outdentInCode(view) },
];
