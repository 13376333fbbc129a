import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as Y from 'yjs';
import { wellFormed } from '../src/domains/documents/block-shape.ts';
import { blockArray, newBlock, projection } from '../src/domains/documents/model.ts';
import { DomainError } from '../src/errors.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';

/** Updates per run (each database). */
const STEPS = Number(process.env.FUZZ_STEPS ?? 2_000);
/** Updates to one document before the next round starts on a fresh one. */
const ROUND = 400;
const BOUNDS = { documentChars: 20_000, blockChars: 4_000, blocks: 120 };

/** A small seeded generator, so a failing run can be repeated with its seed. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(items.length)]! };
}
type Random = ReturnType<typeof random>;

const STRINGS = ['a', 'word ', '\n', '\n\n', '# ', '- item\n', 'ünïcødé ', '😀', '\u0000', '  ', '```\n'];

function text(r: Random): string {
  let out = '';
  for (let i = r.int(6); i >= 0; i--) out += r.pick(STRINGS);
  return r.int(40) === 0 ? out.repeat(1 + r.int(1_500)) : out;
}

/** One random operation on a replica's blocks, as a person's editor (or an attacker's) might make. */
function operate(doc: Y.Doc, r: Random): void {
  const blocks = blockArray(doc) as Y.Array<unknown>;
  const n = blocks.length;
  const at = () => r.int(n + 1);
  const some = (): unknown => (n > 0 ? blocks.get(r.int(n)) : undefined);
  const map = (): Y.Map<unknown> | undefined => {
    const b = some();
    return b instanceof Y.Map ? b : undefined;
  };
  const textOf = (): Y.Text | undefined => {
    const t = map()?.get('text');
    return t instanceof Y.Text ? t : undefined;
  };
  const value = (): unknown =>
    r.pick([
      () => 'plain',
      () => r.int(100),
      () => null,
      () => ({ nested: { deep: [1, 2, 3] } }),
      () => new Y.Map(),
      () => new Y.Array(),
      () => new Y.Text('swapped'),
      () => 'v'.repeat(r.int(6_000)),
    ])();
  const ops: (() => void)[] = [
    () => textOf()?.insert(r.int((textOf()?.length ?? 0) + 1), text(r)),
    () => textOf()?.insert(0, text(r)),
    () => {
      const t = textOf();
      if (t && t.length > 0) t.delete(r.int(t.length), 1 + r.int(t.length));
    },
    () => {
      const t = textOf();
      if (t && t.length > 0)
        t.format(r.int(t.length), 1 + r.int(5), { [r.pick(['bold', 'comment', 'x'])]: value() });
    },
    () => textOf()?.insertEmbed(0, r.pick([{ mention: 'ada' }, { big: 'e'.repeat(r.int(6_000)) }])),
    () => textOf()?.insertEmbed(0, r.pick([new Y.Map(), new Y.Text('t'), new Y.Array()]) as never),
    () => textOf()?.setAttribute('key', 1),
    () => blockArray(doc).insert(at(), [newBlock(text(r))]),
    () =>
      blockArray(doc).insert(
        at(),
        Array.from({ length: 1 + r.int(30) }, () => newBlock(text(r))),
      ),
    () => {
      const m = new Y.Map<unknown>();
      if (r.int(3) > 0)
        m.set('id', r.pick<unknown>(['', 42, 'blk_fixed', `blk_${r.int(1e9)}`, 'x'.repeat(300)]));
      if (r.int(3) > 0)
        m.set('text', r.pick<() => unknown>([() => new Y.Text(text(r)), () => 'str', () => new Y.Map()])());
      blocks.insert(at(), [m]);
    },
    () => {
      const m = newBlock(text(r));
      blockArray(doc).insert(at(), [m]);
      m.delete(r.pick(['id', 'text']));
    },
    () => {
      const m = newBlock(text(r));
      blockArray(doc).insert(at(), [m]);
      m.set(r.pick(['id', 'text']), value());
    },
    () => blocks.insert(at(), [r.pick<unknown>(['string', 7, { id: 'x' }, new Y.Text('t'), new Y.Array()])]),
    () => {
      if (n > 0) {
        const from = r.int(n);
        blocks.delete(from, 1 + r.int(Math.min(3, n - from)));
      }
    },
    () => map()?.delete(r.pick(['id', 'text', 'deleted', 'other'])),
    () => map()?.set(r.pick(['id', 'text']), value()),
    () => map()?.set(r.pick(['deleted', 'note', 'comments']), value()),
    () => doc.getMap('elsewhere').set('x', value()),
  ];
  r.pick(ops)();
}

function assertReadable(doc: Y.Doc): void {
  for (const block of (blockArray(doc) as Y.Array<unknown>).toArray()) {
    assert.ok(wellFormed(block), 'every block of the live document is well-formed');
  }
  assert.equal(typeof projection(doc), 'string');
}

for (const db of DATABASES) {
  describe(`random person updates to a live document on ${db.name}`, () => {
    let h: Harness;
    before(async () => {
      h = await setup(db, { documents: { bounds: BOUNDS } });
    });
    after(() => h.close());

    it(`leaves every read working after ${STEPS} updates`, async () => {
      const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 1_000_000);
      const r = random(seed);
      const ada = h.actor('ada@acme.test');
      const documents = h.services.documents;
      const outcomes = { accepted: 0, refused: 0 };
      // Rounds of updates to fresh documents: each round's history stays small, so the run is quick.
      for (let round = 0; round * ROUND < STEPS; round++) {
        const { document_id: id } = await documents.create(ada, {
          title: `Fuzzed ${round}`,
          scope: 'org',
          content_markdown: '# Fuzzed\n\nFirst.\n\n- a\n- b\n\nLast.\n',
        });
        const live = await documents.store.open(id);
        let replica = new Y.Doc();
        Y.applyUpdate(replica, Y.encodeStateAsUpdate(live.doc));
        for (let step = 0; step < ROUND; step++) {
          const vector = Y.encodeStateVector(live.doc);
          replica.transact(() => {
            for (let i = 1 + r.int(3); i > 0; i--) operate(replica, r);
          });
          const update = Y.encodeStateAsUpdate(replica, vector);
          try {
            await documents.applyPersonUpdate(ada, id, update);
            outcomes.accepted++;
          } catch (error) {
            assert.ok(error instanceof DomainError, `seed ${seed}, step ${step}: ${(error as Error).stack}`);
            outcomes.refused++;
            // The refused change stays in this replica only: start again from the document.
            replica.destroy();
            replica = new Y.Doc();
            Y.applyUpdate(replica, Y.encodeStateAsUpdate(live.doc));
          }
          if (step % 125 === 0) {
            assertReadable(live.doc);
            // A read stores what is pending first: storing goes on whatever came before.
            const read = await documents.read(ada, { document_id: id });
            assert.equal(read.markdown, projection(live.doc).slice(0, read.markdown.length), `seed ${seed}`);
          }
        }
        assertReadable(live.doc);
        const before = projection(live.doc);
        await documents.read(ada, { document_id: id });
        assert.ok((await documents.versions(ada, { document_id: id })).versions.length > 0);
        // Loaded again from storage, the document is the one people had.
        assert.ok(await documents.store.unload(id));
        const loaded = await documents.store.open(id);
        assertReadable(loaded.doc);
        assert.equal(projection(loaded.doc), before, `seed ${seed}`);
        replica.destroy();
      }
      // The seed repeats the run (FUZZ_SEED=…).
      console.log(`fuzz seed ${seed} on ${db.name}: ${JSON.stringify(outcomes)}`);
      assert.ok(outcomes.accepted > STEPS / 10 && outcomes.refused > STEPS / 10, JSON.stringify(outcomes));
    });
  });
}
