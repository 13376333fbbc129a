import { syntaxTree } from '@codemirror/language';
import type { EditorState, Extension, Range } from '@codemirror/state';
import {
  Decoration,
  EditorView,
  ViewPlugin,
  WidgetType,
  type DecorationSet,
  type ViewUpdate,
} from '@codemirror/view';
import type { SyntaxNodeRef } from '@lezer/common';

/**
 * The markdown drawn as a writer expects it, over the very text: headings larger, emphasis,
 * code and links styled, bullets and check boxes drawn, quotes and code blocks set apart. The
 * markers stay in the text (so the editor's text is the markdown); away from the lines the
 * cursor is on they are hidden by style, on those lines they show, dimmed.
 */

const hidden = Decoration.mark({ class: 'cm-md-hide' });
const dimmed = Decoration.mark({ class: 'cm-md-mark' });
const bullet = Decoration.mark({ class: 'cm-md-bullet' });
const number = Decoration.mark({ class: 'cm-md-number' });
const marks: Record<string, Decoration> = {
  Emphasis: Decoration.mark({ class: 'cm-md-em' }),
  StrongEmphasis: Decoration.mark({ class: 'cm-md-strong' }),
  Strikethrough: Decoration.mark({ class: 'cm-md-strike' }),
  InlineCode: Decoration.mark({ class: 'cm-md-code' }),
  Autolink: Decoration.mark({ class: 'cm-md-link' }),
  URL: Decoration.mark({ class: 'cm-md-link' }),
};
const linkText = Decoration.mark({ class: 'cm-md-link' });
const line = (cls: string) => Decoration.line({ class: cls });
const headingLines = [1, 2, 3, 4, 5, 6].map((n) => line(`cm-md-heading cm-md-h${n}`));
const quoteLine = line('cm-md-quote');
const codeLine = line('cm-md-codeblock');
const codeFirst = line('cm-md-codeblock cm-md-codeblock-first');
const codeLast = line('cm-md-codeblock cm-md-codeblock-last');
const codeOnly = line('cm-md-codeblock cm-md-codeblock-first cm-md-codeblock-last');
const ruleLine = line('cm-md-rule');
const doneLine = line('cm-md-done');

/** A task's check box, drawn where its `[ ]` or `[x]` is; a click toggles it (see taskClicks). */
class CheckBox extends WidgetType {
  readonly checked: boolean;
  readonly label: string;
  constructor(checked: boolean, label: string) {
    super();
    this.checked = checked;
    this.label = label;
  }
  override eq(other: CheckBox) {
    return other.checked === this.checked && other.label === this.label;
  }
  toDOM() {
    const box = document.createElement('span');
    box.className = `cm-md-checkbox${this.checked ? ' cm-md-checked' : ''}`;
    box.setAttribute('role', 'checkbox');
    box.setAttribute('aria-checked', String(this.checked));
    box.setAttribute('aria-label', this.label);
    return box;
  }
  override ignoreEvent() {
    return false;
  }
}

/** The lines a selection touches (their starts), where markers show. */
function activeLines(state: EditorState, focused: boolean): Set<number> {
  const lines = new Set<number>();
  if (!focused) return lines;
  for (const range of state.selection.ranges) {
    const last = state.doc.lineAt(range.to).number;
    for (let n = state.doc.lineAt(range.from).number; n <= last; n++) lines.add(state.doc.line(n).from);
  }
  return lines;
}

/** A marker and the spaces right after it (`# `, `> `, `- `). */
function withSpace(state: EditorState, from: number, to: number): [number, number] {
  const after = state.doc.sliceString(to, Math.min(to + 1, state.doc.length));
  return [from, after === ' ' ? to + 1 : to];
}

function build(view: EditorView): DecorationSet {
  const { state } = view;
  const active = activeLines(state, view.hasFocus);
  const isActive = (pos: number) => active.has(state.doc.lineAt(pos).from);
  const out: Range<Decoration>[] = [];
  /** Hidden away from the cursor's lines, dimmed on them. */
  const marker = (from: number, to: number) => {
    if (from < to) out.push((isActive(from) ? dimmed : hidden).range(from, to));
  };
  const lines = (from: number, to: number, deco: Decoration) => {
    for (let pos = from; pos <= to;) {
      const l = state.doc.lineAt(pos);
      out.push(deco.range(l.from));
      pos = l.to + 1;
    }
  };

  const enter = (node: SyntaxNodeRef): boolean | void => {
    const { name, from, to } = node;
    const heading = /^(?:ATX|Setext)Heading(\d)$/.exec(name);
    if (heading) {
      lines(from, to, headingLines[Number(heading[1]) - 1]!);
      return;
    }
    switch (name) {
      case 'HeaderMark':
        marker(...withSpace(state, from, to));
        return;
      case 'EmphasisMark':
      case 'StrikethroughMark':
        marker(from, to);
        return;
      case 'CodeMark':
        // An inline code's backticks, or a code block's fences.
        marker(from, to);
        return;
      case 'CodeInfo':
        marker(from, to);
        return;
      case 'QuoteMark':
        marker(...withSpace(state, from, to));
        return;
      case 'Blockquote':
        lines(from, to, quoteLine);
        return;
      case 'FencedCode':
      case 'CodeBlock': {
        const first = state.doc.lineAt(from);
        const last = state.doc.lineAt(to);
        if (first.number === last.number) out.push(codeOnly.range(first.from));
        else {
          out.push(codeFirst.range(first.from));
          if (last.from > first.to) lines(first.to + 1, last.from - 1, codeLine);
          out.push(codeLast.range(last.from));
        }
        return;
      }
      case 'HorizontalRule':
        out.push(ruleLine.range(state.doc.lineAt(from).from));
        marker(from, to);
        return;
      case 'Link':
      case 'Image': {
        // [text](url "title"): the text styled, the brackets and the address are markers.
        const cursor = node.node.cursor();
        const linkMarks: [number, number][] = [];
        if (cursor.firstChild()) {
          do {
            if (cursor.name === 'LinkMark') linkMarks.push([cursor.from, cursor.to]);
            else if (cursor.name === 'URL' || cursor.name === 'LinkTitle' || cursor.name === 'LinkLabel')
              marker(cursor.from, cursor.to);
          } while (cursor.nextSibling());
        }
        for (const [a, b] of linkMarks) marker(a, b);
        const open = linkMarks[0];
        const close = linkMarks[1];
        if (open && close && open[1] < close[0]) out.push(linkText.range(open[1], close[0]));
        return false;
      }
      case 'ListMark': {
        const list = node.node.parent?.parent?.name;
        if (list === 'OrderedList') out.push(number.range(from, to));
        else {
          const task = node.node.parent?.getChild('Task');
          if (task || isActive(from)) marker(...withSpace(state, from, to));
          else out.push(bullet.range(...withSpace(state, from, to)));
        }
        return;
      }
      case 'TaskMarker': {
        const checked = /x/i.test(state.doc.sliceString(from, to));
        const l = state.doc.lineAt(from);
        if (checked) out.push(doneLine.range(l.from));
        if (isActive(from)) {
          out.push(dimmed.range(from, to));
          return;
        }
        const label = state.doc.sliceString(to, l.to).trim().slice(0, 120) || 'Task';
        out.push(Decoration.widget({ widget: new CheckBox(checked, label), side: -1 }).range(from));
        out.push(hidden.range(...withSpace(state, from, to)));
        return;
      }
      default: {
        const deco = marks[name];
        if (deco && from < to) out.push(deco.range(from, to));
      }
    }
  };

  for (const { from, to } of view.visibleRanges) syntaxTree(state).iterate({ from, to, enter });
  return Decoration.set(out, true);
}

const preview = ViewPlugin.fromClass(
  class {
    decorations: DecorationSet;
    constructor(view: EditorView) {
      this.decorations = build(view);
    }
    update(update: ViewUpdate) {
      if (
        update.docChanged ||
        update.viewportChanged ||
        update.selectionSet ||
        update.focusChanged ||
        syntaxTree(update.startState) !== syntaxTree(update.state)
      ) {
        this.decorations = build(update.view);
      }
    }
  },
  { decorations: (plugin) => plugin.decorations },
);

/** A click on a check box toggles its task: `[ ]` ↔ `[x]`, as the person's own edit. */
const taskClicks = EditorView.domEventHandlers({
  mousedown(event, view) {
    const target = event.target;
    if (!(target instanceof HTMLElement) || !target.classList.contains('cm-md-checkbox')) return false;
    event.preventDefault();
    const pos = view.posAtDOM(target);
    const box = view.state.doc.sliceString(pos, pos + 3);
    if (!/^\[[ xX]\]$/.test(box)) return true;
    view.dispatch({
      changes: { from: pos + 1, to: pos + 2, insert: box[1] === ' ' ? 'x' : ' ' },
      userEvent: 'input.toggle',
    });
    return true;
  },
});

/** The live preview: the decorations and the check boxes' clicks. */
export function livePreview(): Extension {
  return [preview, taskClicks];
}
