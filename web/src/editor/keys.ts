import type { EditorView, KeyBinding } from '@codemirror/view';
import { toggleBold, toggleCode, toggleItalic, toggleLink } from './format.ts';
import {
  continueList,
  deleteMarker,
  indentInCode,
  indentItems,
  outdentInCode,
  outdentItems,
  toggleTask,
} from './lists.ts';

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
