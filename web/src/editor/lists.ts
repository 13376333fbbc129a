import { EditorSelection, type ChangeSpec, type EditorState, type Line } from '@codemirror/state';
import type { Command } from '@codemirror/view';
import { INPUT, selectedLines } from './format.ts';
import { inCodeBlock, isOrdered, linePrefix } from './markdown.ts';

/**
 * Lists and code as a writer expects them: Enter continues a list (and ends it on an empty
 * item), Tab and Shift+Tab indent and outdent items, Tab indents in code, Backspace right after
 * a marker takes the marker away.
 */

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
