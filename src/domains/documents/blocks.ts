import * as Y from 'yjs';
import { newId } from '../../ids.ts';
import { wellFormed } from './block-shape.ts';

/**
 * A document is a Y.Doc holding a Y.Array of blocks; each block is a Y.Map with a stable `id`,
 * a Y.Text of its raw markdown and, once an agent removed it, `deleted: true`. Removed blocks
 * stay until no write or replica can still need them, so a person's edit that lands in one
 * during a write is kept rather than lost.
 */
export type BlockMap = Y.Map<unknown>;

export interface LiveBlock {
  id: string;
  text: string;
  map: BlockMap;
  /** Position in the Y.Array, deleted blocks included. */
  index: number;
}

export function blockArray(doc: Y.Doc): Y.Array<BlockMap> {
  return doc.getArray<BlockMap>('blocks');
}

export function blockText(map: BlockMap): Y.Text {
  return map.get('text') as Y.Text;
}

export function isDeleted(map: BlockMap): boolean {
  return map.get('deleted') === true;
}

export function newBlock(text: string): BlockMap {
  const map = new Y.Map<unknown>();
  map.set('id', newId('blk'));
  map.set('text', new Y.Text(text));
  return map;
}

/** The blocks people read: not removed, and well-formed (a malformed one from storage is skipped). */
export function liveBlocks(doc: Y.Doc): LiveBlock[] {
  const out: LiveBlock[] = [];
  blockArray(doc).forEach((map, index) => {
    if (wellFormed(map) && !isDeleted(map))
      out.push({ id: map.get('id') as string, text: blockText(map).toString(), map, index });
  });
  return out;
}
