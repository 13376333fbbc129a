import { RangeSet, StateEffect, StateField, type Extension, type Range } from '@codemirror/state';
import { Decoration, EditorView, keymap, type DecorationSet } from '@codemirror/view';
import * as Y from 'yjs';
import { blocksOf } from './binding.ts';

/** A thread's passage to highlight, as the comments read gives it. */
export interface EditorAnchor {
  threadId: string;
  author: string;
  excerpt: string;
  /** Yjs relative positions (base64) of the passage's ends. */
  position?: { rel_start: string; rel_end: string } | undefined;
}

interface Placed {
  threadId: string;
  label: string;
  from: number;
  to: number;
}

function bytes(base64: string): Uint8Array {
  const raw = atob(base64);
  const out = new Uint8Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = raw.charCodeAt(i);
  return out;
}

/** A relative position as an offset of the markdown, or null when its block is gone. */
function offsetOf(doc: Y.Doc, rel: string): number | null {
  let pos: Y.AbsolutePosition | null;
  try {
    pos = Y.createAbsolutePositionFromRelativePosition(Y.decodeRelativePosition(bytes(rel)), doc);
  } catch {
    return null;
  }
  if (!pos) return null;
  let at = 0;
  for (const map of blocksOf(doc)) {
    const text = map.get('text');
    if (map.get('deleted') === true || !(text instanceof Y.Text)) continue;
    if (text === pos.type) return at + pos.index;
    at += text.toString().length;
  }
  return null;
}

/** Where the one occurrence of a quote is in a text (none or several: nowhere). */
function unique(text: string, quote: string): number | null {
  const first = text.indexOf(quote);
  return first >= 0 && text.indexOf(quote, first + 1) < 0 ? first : null;
}

/**
 * Where each passage stands in the editor's text now: its relative positions (which follow the
 * text through everyone's edits), or else its quote where it occurs exactly once; a passage found
 * neither way is not highlighted (its thread shows it is no longer anchored).
 */
export function placeAnchors(doc: Y.Doc, text: string, anchors: readonly EditorAnchor[]): Placed[] {
  const out: Placed[] = [];
  for (const a of anchors) {
    const label = `Comment by ${a.author}: ${a.excerpt.length > 80 ? `${a.excerpt.slice(0, 80)}…` : a.excerpt}`;
    let from: number | null = null;
    let to: number | null = null;
    if (a.position) {
      from = offsetOf(doc, a.position.rel_start);
      to = offsetOf(doc, a.position.rel_end);
    }
    if (
      from === null ||
      to === null ||
      to <= from ||
      to > text.length ||
      text.slice(from, to).trim() === ''
    ) {
      from = unique(text, a.excerpt);
      to = from === null ? null : from + a.excerpt.length;
    }
    if (from !== null && to !== null) out.push({ threadId: a.threadId, label, from, to });
  }
  return out;
}

const setAnchors = StateEffect.define<Placed[]>();

function decorations(placed: readonly Placed[], length: number): DecorationSet {
  const ranges: Range<Decoration>[] = [];
  for (const p of placed) {
    const from = Math.min(p.from, length);
    const to = Math.min(p.to, length);
    if (from >= to) continue;
    ranges.push(
      Decoration.mark({
        class: 'comment-anchor',
        attributes: { role: 'mark', 'aria-label': p.label, 'data-thread': p.threadId },
      }).range(from, to),
    );
  }
  return RangeSet.of(ranges, true);
}

/** The highlighted passages, moving with the text between placements. */
const anchorField = StateField.define<DecorationSet>({
  create: () => Decoration.none,
  update(value, tr) {
    value = value.map(tr.changes);
    for (const effect of tr.effects) {
      if (effect.is(setAnchors)) value = decorations(effect.value, tr.state.doc.length);
    }
    return value;
  },
  provide: (f) => EditorView.decorations.from(f),
});

/** The passage of a thread as highlighted now, if it is. */
export function passageOf(view: EditorView, threadId: string): { from: number; to: number } | null {
  let found: { from: number; to: number } | null = null;
  view.state.field(anchorField).between(0, view.state.doc.length, (from, to, deco) => {
    if (deco.spec.attributes?.['data-thread'] !== threadId) return;
    found = found ? { from: Math.min(found.from, from), to: Math.max(found.to, to) } : { from, to };
  });
  return found;
}

/** The thread whose passage holds the cursor, if any. */
function threadAt(view: EditorView): string | null {
  const at = view.state.selection.main.head;
  let found: string | null = null;
  view.state.field(anchorField).between(at, at, (from, to, deco) => {
    if (from <= at && at <= to) found = (deco.spec.attributes?.['data-thread'] as string | undefined) ?? null;
  });
  return found;
}

/**
 * Comment anchors in the editor: each open thread's passage is a `mark` named `Comment by <author>`;
 * a click on one (not a drag that selects), or Alt+Enter with the cursor in it, hands its thread
 * to `onActivate`.
 */
export function commentAnchors(onActivate: (threadId: string) => void): Extension {
  return [
    anchorField,
    keymap.of([
      {
        key: 'Alt-Enter',
        run(view) {
          const threadId = threadAt(view);
          if (threadId) onActivate(threadId);
          return threadId !== null;
        },
      },
    ]),
    EditorView.domEventHandlers({
      click(event, view) {
        const target = event.target instanceof Element ? event.target.closest('[data-thread]') : null;
        const threadId = target?.getAttribute('data-thread');
        if (!threadId || !view.state.selection.main.empty) return false;
        onActivate(threadId);
        return false;
      },
    }),
  ];
}

/** Places the highlights again (the threads changed, or the text settled after changes). */
export function showAnchors(view: EditorView, doc: Y.Doc, anchors: readonly EditorAnchor[]): void {
  const placed = placeAnchors(doc, view.state.doc.toString(), anchors);
  view.dispatch({ effects: setAnchors.of(placed) });
}
