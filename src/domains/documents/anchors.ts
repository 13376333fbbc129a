import * as Y from 'yjs';
import type { Artifact } from '../policies/artifacts.ts';
import { artifactText } from '../workspace/artifact-text.ts';
import { blockText, liveBlocks, projection } from './model.ts';
import type { DocumentStore } from './store.ts';

export interface Anchor {
  start: number;
  relStart: string | null;
  relEnd: string | null;
}

export interface StoredAnchor {
  id: string;
  anchor_excerpt: string | null;
  anchor_start: number | null;
  anchor_rel_start: string | null;
  anchor_rel_end: string | null;
}

export interface AnchorState {
  /** The passage the thread is anchored to now, or null when it is no longer anchored. */
  excerpt: string | null;
  /** Set when the anchor moved and should be stored again. */
  moved?: Anchor;
  /** A document's passage now, as Yjs relative positions (base64) a live editor resolves itself. */
  span?: { relStart: string; relEnd: string };
}

/** Where an excerpt occurs exactly once in a text, or null (absent, empty or ambiguous). */
export function uniqueOffset(text: string | null, excerpt: string): number | null {
  if (text === null || excerpt === '') return null;
  const first = text.indexOf(excerpt);
  if (first < 0 || text.indexOf(excerpt, first + 1) >= 0) return null;
  return first;
}

const encode = (pos: Y.RelativePosition) => Buffer.from(Y.encodeRelativePosition(pos)).toString('base64');
const decode = (text: string) => Y.decodeRelativePosition(Buffer.from(text, 'base64'));

/** Relative positions of a span of the projection, so the anchor follows its text through edits. */
function relativeSpan(doc: Y.Doc, start: number, end: number): { relStart: string; relEnd: string } | null {
  let at = 0;
  let relStart: string | null = null;
  for (const block of liveBlocks(doc)) {
    const blockEnd = at + block.text.length;
    const text = blockText(block.map);
    if (relStart === null && start >= at && start < blockEnd) {
      relStart = encode(Y.createRelativePositionFromTypeIndex(text, start - at));
    }
    if (relStart !== null && end > at && end <= blockEnd) {
      // The end sticks to the character before it, so text typed after the passage stays outside.
      return { relStart, relEnd: encode(Y.createRelativePositionFromTypeIndex(text, end - at, -1)) };
    }
    at = blockEnd;
  }
  return null;
}

/** A relative position as an offset of the projection; null when its block was removed. */
function absolute(doc: Y.Doc, rel: string): number | null {
  const pos = Y.createAbsolutePositionFromRelativePosition(decode(rel), doc);
  if (!pos) return null;
  let at = 0;
  for (const block of liveBlocks(doc)) {
    if (blockText(block.map) === pos.type) return at + pos.index;
    at += block.text.length;
  }
  return null;
}

/**
 * Anchors for comment threads, in the artifact's current text: a page's HTML, a document's
 * live markdown (where anchors are Yjs relative positions plus the quote).
 */
export function anchors(store: DocumentStore) {
  async function currentText(artifact: Artifact): Promise<string | null> {
    if (artifact.type !== 'document') return artifactText(artifact);
    return projectionOf(artifact);
  }

  async function projectionOf(artifact: Artifact): Promise<string> {
    const live = await store.open(artifact.id);
    await store.refresh(live);
    return projection(live.doc);
  }

  async function locate(artifact: Artifact, excerpt: string): Promise<Anchor | null> {
    const text = await currentText(artifact);
    const start = uniqueOffset(text, excerpt);
    if (start === null) return null;
    if (artifact.type !== 'document') return { start, relStart: null, relEnd: null };
    const live = await store.open(artifact.id);
    const span = relativeSpan(live.doc, start, start + excerpt.length);
    return { start, relStart: span?.relStart ?? null, relEnd: span?.relEnd ?? null };
  }

  /** Where each anchored thread stands now: followed through edits, re-found by its quote, or unanchored. */
  async function current(artifact: Artifact, threads: StoredAnchor[]): Promise<Map<string, AnchorState>> {
    const out = new Map<string, AnchorState>();
    const anchored = threads.filter((t) => t.anchor_excerpt !== null);
    if (artifact.type !== 'document' || anchored.length === 0) {
      for (const t of threads) out.set(t.id, { excerpt: t.anchor_excerpt });
      return out;
    }
    const live = await store.open(artifact.id);
    await store.refresh(live);
    const text = projection(live.doc);
    for (const t of threads) {
      const quote = t.anchor_excerpt;
      if (quote === null) {
        out.set(t.id, { excerpt: null });
        continue;
      }
      if (t.anchor_rel_start && t.anchor_rel_end) {
        const start = absolute(live.doc, t.anchor_rel_start);
        const end = absolute(live.doc, t.anchor_rel_end);
        if (start !== null && end !== null && end > start && text.slice(start, end).trim() !== '') {
          const span = { relStart: t.anchor_rel_start, relEnd: t.anchor_rel_end };
          out.set(t.id, { excerpt: text.slice(start, end), span });
          continue;
        }
      } else if (
        t.anchor_start !== null &&
        text.slice(t.anchor_start, t.anchor_start + quote.length) === quote
      ) {
        // Stored before anchors were relative positions: take them up where the quote still stands.
        const span = relativeSpan(live.doc, t.anchor_start, t.anchor_start + quote.length);
        out.set(t.id, {
          excerpt: quote,
          ...(span ? { moved: { start: t.anchor_start, ...span }, span } : {}),
        });
        continue;
      }
      // The passage was rewritten or removed: find the quote again, or leave the thread unanchored.
      const again = uniqueOffset(text, quote);
      if (again === null) {
        out.set(t.id, { excerpt: null });
        continue;
      }
      const span = relativeSpan(live.doc, again, again + quote.length);
      out.set(t.id, { excerpt: quote, ...(span ? { moved: { start: again, ...span }, span } : {}) });
    }
    return out;
  }

  return { currentText, locate, current };
}

export type Anchors = ReturnType<typeof anchors>;
