import * as Y from 'yjs';
import { weighBlock, weightOf } from './block-shape.ts';
import { boundsWith, refusals, type DocumentBounds } from './bounds.ts';
import { countBlocks, Shadow, touchedBy, type YType } from './shadow.ts';

/** What a judged update leaves, to keep when it is accepted. */
interface Verdict {
  weights: Map<YType, number>;
  total: number;
  count: number;
}

/**
 * Judges the document a person's update left in the shadow (inside the update's transaction):
 * every block it touched or added is a block (a string id, a Y.Text text, plain values besides,
 * characters, formatting and embeds in the text), ids of new blocks are unique, a block's id and
 * text never change once it exists, and the document stays within its bounds — or, when already
 * past one, does not grow further.
 */
function judge(shadow: Shadow, tr: Y.Transaction, bounds: DocumentBounds): Verdict | string {
  const { store } = shadow.doc;
  if (store.pendingStructs || store.pendingDs)
    return 'the update refers to content the document does not have';
  const touched = touchedBy(tr, shadow.blocks);
  if (touched.problem) return touched.problem;
  const weights = new Map<YType, number>();
  let delta = 0;
  for (const owner of touched.owners) {
    const weighed = owner instanceof Y.Map ? weighBlock(owner) : 'a block must be a map';
    if (typeof weighed === 'string') {
      return touched.added.includes(owner) && weighed.startsWith('a block')
        ? `a new ${weighed.slice(2)}`
        : weighed;
    }
    const weight = weightOf(weighed);
    const before = shadow.weights.get(owner);
    if (weight > bounds.blockChars && weight > (before ?? 0)) return refusals.blockChars(weight, bounds);
    weights.set(owner, weight);
    delta += weight - (before ?? 0);
  }
  if (touched.added.length > 0) {
    const fresh = new Set(touched.added);
    const ids = new Map<string, number>();
    for (let item = shadow.blocks._start; item !== null; item = item.right) {
      if (item.deleted || !(item.content instanceof Y.ContentType)) continue;
      const block = item.content.type;
      const id = shadow.idOf(block);
      if (id === undefined) continue;
      const seen = ids.get(id) ?? 0;
      if (seen > 0 && fresh.has(block)) return 'a new block has the id of another block';
      ids.set(id, seen + 1);
    }
    for (const block of touched.added) {
      if ((ids.get((block as Y.Map<unknown>).get('id') as string) ?? 0) > 1)
        return 'a new block has the id of another block';
    }
  }
  let { total, count } = shadow;
  if (touched.arrayChanged) {
    ({ total, count } = countBlocks(shadow.blocks, (b) => weights.get(b) ?? shadow.weightOf(b)));
  } else {
    total += delta;
  }
  if (count > bounds.blocks && count > shadow.count) return refusals.blocks(count, bounds);
  if (total > bounds.documentChars && total > shadow.total) return refusals.documentChars(total, bounds);
  return { weights, total, count };
}

/** Applies an update to a shadow and judges it; keeps the verdict's weights when accepted. */
function tryOn(shadow: Shadow, update: Uint8Array, bounds: DocumentBounds): string | null {
  let verdict: Verdict | string = 'the update could not be decoded';
  shadow.judging = true;
  try {
    shadow.doc.transact((tr) => {
      Y.applyUpdate(shadow.doc, update);
      verdict = judge(shadow, tr, bounds);
    }, 'person');
  } catch {
    verdict = 'the update could not be decoded';
  } finally {
    shadow.judging = false;
  }
  const judged = verdict as Verdict | string;
  if (typeof judged === 'string') return judged;
  for (const [block, weight] of judged.weights) shadow.weights.set(block, weight);
  shadow.total = judged.total;
  shadow.count = judged.count;
  return null;
}

export interface PersonGateOptions {
  bounds?: Partial<DocumentBounds>;
  /** A shadow nobody sent an update through for this long is dropped. */
  idleMs?: number;
}

/**
 * The gate people's updates pass before they reach a live document: each is applied to a shadow
 * copy of the document and the result judged; a refused one never touches the live document.
 * Shadows are made on a document's first person update and dropped when it leaves memory, when
 * unused for a minute, or after a refusal (they then hold what was refused).
 */
export function personGate(options: PersonGateOptions = {}) {
  const bounds = boundsWith(options.bounds);
  const idleMs = options.idleMs ?? 60_000;
  const shadows = new Map<Y.Doc, Shadow>();
  let sweeper: NodeJS.Timeout | undefined;

  function drop(live: Y.Doc): void {
    shadows.get(live)?.drop();
    shadows.delete(live);
    if (shadows.size === 0 && sweeper) {
      clearInterval(sweeper);
      sweeper = undefined;
    }
  }

  function shadowOf(live: Y.Doc): Shadow {
    let shadow = shadows.get(live);
    if (!shadow) {
      shadow = new Shadow(live);
      shadows.set(live, shadow);
      live.once('destroy', () => drop(live));
      sweeper ??= setInterval(
        () => {
          const cutoff = Date.now() - idleMs;
          for (const [doc, s] of [...shadows]) if (s.lastUsed < cutoff) drop(doc);
        },
        Math.min(idleMs, 30_000),
      ).unref();
    }
    shadow.lastUsed = Date.now();
    return shadow;
  }

  return {
    bounds,
    /** Why a person's update to the live document is refused, or null when it may be applied. */
    check(live: Y.Doc, update: Uint8Array): string | null {
      const refusal = tryOn(shadowOf(live), update, bounds);
      if (refusal) drop(live);
      return refusal;
    },
    /** After an accepted update failed to apply to the live document: the shadow may be ahead. */
    forget: drop,
    shadowCount: () => shadows.size,
  };
}

export type PersonGate = ReturnType<typeof personGate>;

/**
 * Why a person's update to `doc` would be refused, or null; `doc` is not changed. Judges on a
 * copy made for the purpose (the live path keeps its copy).
 */
export function refusePersonUpdate(
  doc: Y.Doc,
  update: Uint8Array,
  bounds?: Partial<DocumentBounds>,
): string | null {
  const shadow = new Shadow(doc);
  try {
    return tryOn(shadow, update, boundsWith(bounds));
  } finally {
    shadow.drop();
  }
}
