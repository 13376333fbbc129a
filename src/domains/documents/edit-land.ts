import type { KeptBlock } from './live-doc.ts';
import {
  blockArray,
  blockText,
  isDeleted,
  lastNonEmptyText,
  newBlock,
  positionOf,
  shortId,
  type BlockMap,
} from './model.ts';
import type { Checked, Target } from './edit-target.ts';
import type { DocumentStore, LiveDoc } from './store.ts';
import { capPrefix, CONTENT_CAP, splitBlocks } from './text.ts';

/**
 * The last phase of an agent write: its text lands in the live document. Says what it added,
 * changed in place and kept of people's edits, for the write's version row.
 */

/** New blocks land in steps of this many, so people see a long write arrive and can react. */
const BLOCKS_PER_STEP = 32;

/** Still in the document and not removed: a person may have deleted it while we waited. */
export function present(live: LiveDoc, map: BlockMap): boolean {
  // A block taken out of the array has no parent any more.
  return !isDeleted(map) && map.parent === blockArray(live.doc) && map._item !== null && !map._item.deleted;
}

/**
 * Lands the write: new blocks after the target, in steps; the blocks replaced are marked
 * deleted, except those a person changed since the write resolved them (or since the version
 * the caller read, `changedIds`), which are kept.
 */
export async function land(
  store: DocumentStore,
  live: LiveDoc,
  checked: Checked,
  target: Target,
  removed: Set<BlockMap>,
  changedIds: Set<string> | undefined,
  show: (blocks: string[]) => void,
) {
  const kept: KeptBlock[] = [];
  const added: BlockMap[] = [];
  const changed: { map: BlockMap; before: string }[] = [];
  if (checked.mode === 'replace_section' && target.blocks.every((b) => !present(live, b.map))) {
    return { gone: true as const, kept, added, changed, written: '', stop: undefined };
  }
  let content = capPrefix(checked.content, CONTENT_CAP);
  let stop: 'cap' | 'anchor_gone' | undefined = content.length < checked.content.length ? 'cap' : undefined;
  const origin = store.agentOrigin;
  // The appended text starts on a line of its own, unless it continues a line a capped write
  // had to cut.
  const last = checked.mode === 'append' && content !== '' ? lastNonEmptyText(live.doc) : null;

  const pieces = splitBlocks(content);
  let anchor: BlockMap | null | undefined = target.after;
  let written = '';
  const blocks = blockArray(live.doc);
  /** Where the next step goes: after the anchor (read outside a change, from the kept block list). */
  const next = () => (anchor === undefined ? -1 : anchor === null ? 0 : positionOf(live.doc, anchor) + 1);
  /** Puts in the step of new blocks starting at piece `i` at `at` (-1: at the end). */
  const put = (i: number, at: number) => {
    const step = pieces.slice(i, i + BLOCKS_PER_STEP);
    const maps = step.map(newBlock);
    blocks.insert(at < 0 ? blocks.length : at, maps);
    added.push(...maps);
    anchor = maps.at(-1)!;
    written += step.join('');
    return maps;
  };

  // The blocks it replaces go and its first step lands in one change: what people see, and what
  // is stored, is the section swapped at once.
  let first: BlockMap[] = [];
  // Marking blocks deleted moves none: the first step's place is the same before and after.
  const firstAt = pieces.length > 0 ? next() : -1;
  live.doc.transact(() => {
    for (const { map, text } of target.blocks) {
      if (!present(live, map)) continue;
      if (blockText(map).toString() !== text || changedIds?.has(shortId(map))) {
        kept.push({ id: map.get('id') as string, excerpt: blockText(map).toString().trim().slice(0, 200) });
        continue;
      }
      map.set('deleted', true);
      removed.add(map);
    }
    if (last) {
      const map = last.parent as BlockMap | null;
      if (map) changed.push({ map, before: last.toString() });
      if (map?.get('continues') === true) map.delete('continues');
      else if (!last.toString().endsWith('\n')) last.insert(last.length, '\n');
    }
    if (pieces.length > 0) first = put(0, firstAt);
  }, origin);
  if (first.length > 0) show(first.map((m) => m.get('id') as string));

  for (let i = BLOCKS_PER_STEP; i < pieces.length; i += BLOCKS_PER_STEP) {
    await new Promise((resolve) => setImmediate(resolve));
    // A person removed what this write was adding to: stop, and say not to add it again.
    if (anchor && !present(live, anchor) && !removed.has(anchor)) {
      stop = 'anchor_gone';
      break;
    }
    const at = next();
    let maps: BlockMap[] = [];
    live.doc.transact(() => (maps = put(i, at)), origin);
    show(maps.map((m) => m.get('id') as string));
  }
  // A write cut inside a line marks its last block, so the append that follows continues the line.
  if (stop === 'cap' && !written.endsWith('\n') && anchor) {
    const last = anchor;
    live.doc.transact(() => last.set('continues', true), origin);
  }
  if (stop === 'anchor_gone') content = written;
  return {
    gone: false as const,
    kept,
    added,
    changed,
    written: stop === 'anchor_gone' ? written : content,
    stop,
  };
}
