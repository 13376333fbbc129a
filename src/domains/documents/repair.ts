import * as Y from 'yjs';
import { newId } from '../../ids.ts';
import { noteMalformed, shapeProblem } from './block-shape.ts';
import { COMPACT_ORIGIN } from './live-doc.ts';
import { blockArray } from './model.ts';

/**
 * Mends what storage holds from before people's updates were judged whole: a value of the blocks
 * array that is not a map leaves the array; a map without a usable id gets a fresh one, one
 * without a Y.Text text gets one (holding the text when it was a plain string). Each is logged
 * once. Says how many blocks it mended; the caller stores the document when any were.
 */
export function repairBlocks(documentId: string, doc: Y.Doc): number {
  const blocks = blockArray(doc) as Y.Array<unknown>;
  const broken: { index: number; value: unknown }[] = [];
  let index = 0;
  for (let item = blocks._start; item !== null; item = item.right) {
    if (item.deleted || !item.countable) continue;
    for (const value of item.content.getContent()) {
      if (shapeProblem(value) !== null) broken.push({ index, value });
      index++;
    }
  }
  if (broken.length === 0) return 0;
  doc.transact(() => {
    for (const { index: at, value } of broken.reverse()) {
      if (!(value instanceof Y.Map)) {
        noteMalformed(documentId, value, 'removed');
        blocks.delete(at, 1);
        continue;
      }
      noteMalformed(documentId, value, 'repaired');
      const id: unknown = value.get('id');
      if (typeof id !== 'string' || id === '' || id.length > 200) value.set('id', newId('blk'));
      const text: unknown = value.get('text');
      if (!(text instanceof Y.Text)) value.set('text', new Y.Text(typeof text === 'string' ? text : ''));
    }
  }, COMPACT_ORIGIN);
  return broken.length;
}
