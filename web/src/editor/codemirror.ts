import {
  Annotation,
  EditorState,
  RangeSet,
  StateEffect,
  StateField,
  type Extension,
  type Range,
} from '@codemirror/state';
import { Decoration, EditorView, keymap, WidgetType, type DecorationSet } from '@codemirror/view';
import { defaultKeymap } from '@codemirror/commands';
import type * as Y from 'yjs';
import { BlockBinding, type TextChange } from './binding.ts';
import { markdownKeymap } from './keys.ts';
import { markdownSupport } from './markdown.ts';
import { livePreview } from './preview.ts';

/** Marks transactions that bring the editor up to the shared document (not to be sent back). */
const fromRemote = Annotation.define<boolean>();

export interface RemoteCursor {
  clientId: number;
  name: string;
  head: number;
  anchor: number;
  /** A class naming the person's colour (c0 … c7): the page's style rules allow no inline styles. */
  color: string;
}

const setCursors = StateEffect.define<RemoteCursor[]>();

class Caret extends WidgetType {
  readonly name: string;
  readonly color: string;
  constructor(name: string, color: string) {
    super();
    this.name = name;
    this.color = color;
  }
  override eq(other: Caret) {
    return other.name === this.name && other.color === this.color;
  }
  toDOM() {
    const span = document.createElement('span');
    span.className = `remote-caret ${this.color}`;
    span.setAttribute('aria-hidden', 'true');
    // The name is drawn by CSS from an attribute: it is no part of the document's text.
    span.dataset.name = this.name;
    return span;
  }
}

/** Other people's cursors and selections, kept in step with the text as it changes. */
const cursorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, tr) {
    value = value.map(tr.changes);
    for (const effect of tr.effects) {
      if (!effect.is(setCursors)) continue;
      const length = tr.state.doc.length;
      const ranges: Range<Decoration>[] = [];
      for (const c of effect.value) {
        const head = Math.min(c.head, length);
        const anchor = Math.min(c.anchor, length);
        const [from, to] = head < anchor ? [head, anchor] : [anchor, head];
        if (from < to) ranges.push(Decoration.mark({ class: `remote-selection ${c.color}` }).range(from, to));
        ranges.push(Decoration.widget({ widget: new Caret(c.name, c.color), side: 1 }).range(head));
      }
      value = RangeSet.of(ranges, true);
    }
    return value;
  },
  provide: (f) => EditorView.decorations.from(f),
});

export interface LiveEditor {
  view: EditorView;
  binding: BlockBinding;
  showCursors(cursors: RemoteCursor[]): void;
  destroy(): void;
}

/**
 * A CodeMirror editor over a document's blocks: local changes go to the binding, remote ones come
 * back as editor changes; undo and redo are the person's own (Yjs's undo manager).
 */
export function createEditor(
  parent: HTMLElement,
  doc: Y.Doc,
  options: {
    onSelection?: (from: number, to: number, text: string) => void;
    /** More of the editor: highlights, pickers and the like, added after the built-in ones. */
    extensions?: Extension[];
  },
): LiveEditor {
  const binding = new BlockBinding(doc, {
    onRemote: (changes: TextChange[]) => {
      view.dispatch({ changes, annotations: fromRemote.of(true) });
    },
  });
  const undo = () => {
    binding.undoManager?.undo();
    return true;
  };
  const redo = () => {
    binding.undoManager?.redo();
    return true;
  };
  const view: EditorView = new EditorView({
    parent,
    state: EditorState.create({
      doc: binding.value,
      extensions: [
        keymap.of([
          { key: 'Mod-z', run: undo, preventDefault: true },
          { key: 'Mod-y', run: redo, preventDefault: true },
          { key: 'Mod-Shift-z', run: redo, preventDefault: true },
          ...markdownKeymap,
          ...defaultKeymap,
        ]),
        markdownSupport(),
        livePreview(),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({
          'aria-label': 'Document',
          'aria-multiline': 'true',
          // What Tab does here (see document.tsx).
          'aria-describedby': 'editor-keys',
        }),
        cursorField,
        EditorView.updateListener.of((update) => {
          if (update.docChanged && !update.transactions.some((t) => t.annotation(fromRemote))) {
            const changes: TextChange[] = [];
            update.changes.iterChanges((fromA, toA, _fromB, _toB, inserted) => {
              changes.push({ from: fromA, to: toA, insert: inserted.toString() });
            });
            binding.applyLocal(changes);
            if (binding.value !== update.state.doc.toString()) {
              // Never expected: the editor takes the document's text again rather than drift.
              view.dispatch({
                changes: { from: 0, to: update.state.doc.length, insert: binding.value },
                annotations: fromRemote.of(true),
              });
            }
          }
          if (update.selectionSet || update.docChanged) {
            const sel = update.state.selection.main;
            options.onSelection?.(sel.anchor, sel.head, update.state.sliceDoc(sel.from, sel.to));
          }
        }),
        ...(options.extensions ?? []),
      ],
    }),
  });
  return {
    view,
    binding,
    showCursors: (cursors) => view.dispatch({ effects: setCursors.of(cursors) }),
    destroy() {
      binding.destroy();
      view.destroy();
    },
  };
}
