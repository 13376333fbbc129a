import type { Command, EditorView } from '@codemirror/view';
import { useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import {
  cycleHeading,
  toggleBold,
  toggleBullets,
  toggleCode,
  toggleItalic,
  toggleLink,
  toggleNumbers,
  toggleQuote,
  toggleTasks,
} from './format.ts';

interface Tool {
  name: string;
  /** What the button shows (its name is for assistive technology and tests). */
  glyph: ReactNode;
  run: Command;
  keys?: string;
}

/** A 24×24 line drawing in the text's colour. */
const icon = (d: string) => (
  <svg
    viewBox="0 0 24 24"
    width="18"
    height="18"
    fill="none"
    stroke="currentColor"
    strokeWidth="2"
    strokeLinecap="round"
  >
    <path d={d} />
  </svg>
);

const TOOLS: Tool[] = [
  { name: 'Bold', glyph: <b>B</b>, run: toggleBold, keys: 'B' },
  { name: 'Italic', glyph: <i>I</i>, run: toggleItalic, keys: 'I' },
  { name: 'Code', glyph: icon('M8 7l-5 5 5 5M16 7l5 5-5 5'), run: toggleCode, keys: 'E' },
  {
    name: 'Link',
    glyph: icon('M10 14a4 4 0 0 0 6 0l3-3a4 4 0 0 0-6-6l-1 1M14 10a4 4 0 0 0-6 0l-3 3a4 4 0 0 0 6 6l1-1'),
    run: toggleLink,
    keys: 'K',
  },
  { name: 'Heading', glyph: <b>H</b>, run: cycleHeading },
  {
    name: 'Bulleted list',
    glyph: icon('M4 6h.01M4 12h.01M4 18h.01M9 6h11M9 12h11M9 18h11'),
    run: toggleBullets,
  },
  {
    name: 'Numbered list',
    glyph: icon('M4 4v5M3 9h2M3 14h3l-3 4h3M9 6h11M9 12h11M9 18h11'),
    run: toggleNumbers,
  },
  { name: 'Checklist', glyph: icon('M3 7l2 2 3-4M3 16l2 2 3-4M11 7h9M11 17h9'), run: toggleTasks },
  { name: 'Quote', glyph: icon('M5 5v14M10 8h10M10 12h10M10 16h6'), run: toggleQuote },
];

const isMac = typeof navigator !== 'undefined' && /Mac|iPhone|iPad/.test(navigator.platform);

/**
 * The `Formatting` toolbar over the editor: one tab stop, arrow keys move between its buttons
 * (Home and End to the ends). A button acts on the editor's selection and gives the editor its
 * focus back; a pointer never takes the focus away from the text.
 */
export function FormattingToolbar({ view }: { view: () => EditorView | undefined }) {
  const [current, setCurrent] = useState(0);
  const buttons = useRef<(HTMLButtonElement | null)[]>([]);
  const apply = (tool: Tool) => {
    const editor = view();
    if (!editor) return;
    tool.run(editor);
    // After the key that pressed the button has done all it does, so it types nothing in the text.
    setTimeout(() => editor.focus(), 0);
  };
  const move = (event: KeyboardEvent) => {
    const last = TOOLS.length - 1;
    const to =
      event.key === 'ArrowRight'
        ? current === last
          ? 0
          : current + 1
        : event.key === 'ArrowLeft'
          ? current === 0
            ? last
            : current - 1
          : event.key === 'Home'
            ? 0
            : event.key === 'End'
              ? last
              : null;
    if (to === null) return;
    event.preventDefault();
    setCurrent(to);
    buttons.current[to]?.focus();
  };
  return (
    <div className="format-bar" role="toolbar" aria-label="Formatting" onKeyDown={move}>
      {TOOLS.map((tool, i) => {
        const shortcut = tool.keys ? `${isMac ? '⌘' : 'Ctrl+'}${tool.keys}` : undefined;
        return (
          <button
            key={tool.name}
            ref={(el) => {
              buttons.current[i] = el;
            }}
            type="button"
            className={`format-${tool.name.toLowerCase().replace(/ /g, '-')}`}
            aria-label={tool.name}
            title={shortcut ? `${tool.name} (${shortcut})` : tool.name}
            aria-keyshortcuts={tool.keys ? `${isMac ? 'Meta' : 'Control'}+${tool.keys}` : undefined}
            tabIndex={i === current ? 0 : -1}
            onMouseDown={(event) => event.preventDefault()}
            onFocus={() => setCurrent(i)}
            onClick={() => apply(tool)}
          >
            <span aria-hidden="true">{tool.glyph}</span>
          </button>
        );
      })}
    </div>
  );
}
