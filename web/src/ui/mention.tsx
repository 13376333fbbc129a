import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';
import { call } from '../api.ts';
import { mentionables, type Mentionables } from '../../../src/contract/people.ts';

interface Choice {
  /** What is inserted after `@`. */
  handle: string;
  name: string;
  agent: boolean;
}

let offered: Promise<Choice[]> | undefined;

/** The handles the picker offers, asked for once per page load: agents (Assistant first), then people. */
function choices(): Promise<Choice[]> {
  offered ??= call(mentionables, {}).then(
    (m: Mentionables) => [
      ...m.agents.map((a) => ({ handle: a, name: a, agent: true })),
      ...m.people.map((p) => ({ handle: p.handle, name: p.name, agent: false })),
    ],
    (error: unknown) => {
      offered = undefined;
      throw error;
    },
  );
  return offered;
}

/** The `@word` being typed just before the caret, if any. */
function typedMention(text: string, caret: number): { start: number; query: string } | null {
  const match = /(^|[^A-Za-z0-9_.@`])@([A-Za-z0-9_.-]*)$/.exec(text.slice(0, caret));
  if (!match) return null;
  return { start: caret - match[2]!.length - 1, query: match[2]! };
}

const MAX_SHOWN = 8;

function matching(all: Choice[], query: string): Choice[] {
  const q = query.toLowerCase();
  if (q === '') return all.slice(0, MAX_SHOWN);
  const starts = (c: Choice) =>
    c.handle.toLowerCase().startsWith(q) ||
    c.name
      .toLowerCase()
      .split(/\s+/)
      .some((w) => w.startsWith(q));
  const contains = (c: Choice) => c.handle.toLowerCase().includes(q) || c.name.toLowerCase().includes(q);
  return [...all.filter(starts), ...all.filter((c) => !starts(c) && contains(c))].slice(0, MAX_SHOWN);
}

/**
 * A comment box that offers mentions: typing `@` opens a listbox named `Mention` with the
 * workspace's agents and people, filtered as one types; arrows move through it, Enter, Tab or a
 * click inserts `@handle `, Escape closes it. The text stays what was typed.
 */
export function MentionBox({
  id,
  value,
  onChange,
  rows,
  required,
}: {
  id: string;
  value: string;
  onChange: (value: string) => void;
  rows: number;
  required?: boolean;
}) {
  const box = useRef<HTMLTextAreaElement>(null);
  const listId = useId();
  const [all, setAll] = useState<Choice[]>([]);
  const [typed, setTyped] = useState<{ start: number; query: string } | null>(null);
  const [active, setActive] = useState(0);
  const [closed, setClosed] = useState<string | null>(null);
  const caretAfter = useRef<number | null>(null);

  useEffect(() => {
    if (typed === null || all.length > 0) return;
    choices().then(setAll, () => undefined);
  }, [typed, all.length]);

  // The caret goes after an inserted mention once React has put the new text in.
  useEffect(() => {
    if (caretAfter.current === null || !box.current) return;
    box.current.setSelectionRange(caretAfter.current, caretAfter.current);
    caretAfter.current = null;
  }, [value]);

  const shown =
    typed === null || `${typed.start}:${typed.query}` === closed ? [] : matching(all, typed.query);
  const open = shown.length > 0;
  const current = Math.min(active, shown.length - 1);

  const look = (el: HTMLTextAreaElement) => {
    const found = typedMention(el.value, el.selectionStart ?? el.value.length);
    setTyped(found);
    if (found?.start !== typed?.start) setActive(0);
  };

  const insert = (choice: Choice) => {
    if (!typed || !box.current) return;
    const caret = typed.start + 1 + typed.query.length;
    const text = `@${choice.handle} `;
    const next = value.slice(0, typed.start) + text + value.slice(caret);
    caretAfter.current = typed.start + text.length;
    setTyped(null);
    onChange(next);
    box.current.focus();
  };

  const keys = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (!open) return;
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault();
      const step = event.key === 'ArrowDown' ? 1 : -1;
      setActive((current + step + shown.length) % shown.length);
    } else if ((event.key === 'Enter' && !event.shiftKey) || event.key === 'Tab') {
      event.preventDefault();
      insert(shown[current]!);
    } else if (event.key === 'Escape') {
      event.preventDefault();
      event.stopPropagation();
      // Closed until the word changes.
      setClosed(`${typed!.start}:${typed!.query}`);
    }
  };

  const optionId = (i: number) => `${listId}-${i}`;
  return (
    <div className="mention-box">
      <textarea
        id={id}
        ref={box}
        rows={rows}
        required={required}
        value={value}
        aria-autocomplete="list"
        aria-controls={open ? listId : undefined}
        aria-activedescendant={open ? optionId(current) : undefined}
        onChange={(e) => {
          onChange(e.target.value);
          look(e.target);
        }}
        onSelect={(e) => look(e.currentTarget)}
        onKeyDown={keys}
        onBlur={() => setTyped(null)}
      />
      {open && (
        <ul role="listbox" id={listId} aria-label="Mention" className="mention-list">
          {shown.map((c, i) => (
            <li
              key={`${c.agent}:${c.handle}`}
              id={optionId(i)}
              role="option"
              aria-selected={i === current}
              className={i === current ? 'active' : undefined}
              // Chosen on mousedown, before the box loses focus and closes the list.
              onMouseDown={(e) => {
                e.preventDefault();
                insert(c);
              }}
            >
              <span className="mention-name">{c.name}</span>{' '}
              <span className="muted small">{c.agent ? 'agent' : `@${c.handle}`}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
