import assert from 'node:assert/strict';
import * as Y from 'yjs';
import { blockArray } from '../../src/domains/documents/model.ts';
import type { Harness } from './harness.ts';

/** A second replica of the live document, as a person's editor holds it. */
export async function replicaOf(h: Harness, id: string) {
  const live = await h.services.documents.store.open(id);
  const doc = new Y.Doc();
  Y.applyUpdate(doc, Y.encodeStateAsUpdate(live.doc));
  return {
    live,
    doc,
    /** What the replica has that the live document has not seen yet. */
    update: () => Y.encodeStateAsUpdate(doc, Y.encodeStateVector(live.doc)),
  };
}

/** A person's update made on a replica of the live document, as the live socket delivers it. */
export async function personUpdate(
  h: Harness,
  id: string,
  change: (doc: Y.Doc) => void,
): Promise<Uint8Array> {
  const replica = await replicaOf(h, id);
  change(replica.doc);
  return replica.update();
}

/** A person's edit made on a replica of the live document, sent through the live update path. */
export async function personEdit(
  h: Harness,
  email: string,
  id: string,
  change: (doc: Y.Doc) => void,
): Promise<void> {
  await h.services.documents.applyPersonUpdate(h.actor(email), id, await personUpdate(h, id, change));
}

/** The Y.Text of the first live block of a replica whose text contains `containing`. */
export function textIn(doc: Y.Doc, containing: string): Y.Text {
  const map = blockArray(doc)
    .toArray()
    .find((m) => m.get('deleted') !== true && (m.get('text') as Y.Text).toString().includes(containing));
  assert.ok(map, `a block containing ${JSON.stringify(containing)}`);
  return map.get('text') as Y.Text;
}
