import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type * as Y from 'yjs';
import { DATABASES } from './support/databases.ts';
import { openLive, until, type Editor } from './support/collab.ts';

/**
 * Agent writes in all four modes and a person's edits through a real provider, interleaved at
 * random on one document; then one agent write, picked at random, is undone. Every passage
 * carries unique words, so what went and what stayed can be counted word by word.
 */

const TRIALS = Number(process.env.TANDEM_UNDO_TRIALS ?? 16);
const OPS_PER_TRIAL = Number(process.env.TANDEM_UNDO_OPS ?? 70);

/** A small seeded generator (mulberry32), so a failure can be replayed from its seed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORD = /\b[tp]\d+x\b/g;
const wordsOf = (text: string): string[] => text.match(WORD) ?? [];

interface Block {
  id: string;
  text: string;
}

/** The replica's live blocks, in order. */
function liveBlocksOf(doc: Y.Doc): Block[] {
  const out: Block[] = [];
  for (const map of doc.getArray<Y.Map<unknown>>('blocks').toArray()) {
    if (map.get('deleted') === true) continue;
    out.push({ id: map.get('id') as string, text: (map.get('text') as Y.Text).toString() });
  }
  return out;
}

interface Write {
  versionId: string;
  added: Block[];
  removed: Block[];
  /** Blocks it added that a person edited afterwards. */
  touched: Set<string>;
}

for (const db of DATABASES) {
  describe(`undoing one agent write among random edits, on ${db.name}`, () => {
    let live: Awaited<ReturnType<typeof openLive>>;
    let bobToken: string;
    before(async () => {
      live = await openLive(db);
      bobToken = await live.tokenFor('bob@acme.test');
    });
    after(() => live.close());

    const docs = () => live.services().documents;
    const ada = () => live.h.actor('ada@acme.test');
    const serverText = async (id: string) => (await docs().store.currentMarkdown(id, null)) ?? '';

    async function converged(id: string, editor: Editor): Promise<string> {
      let text = '';
      await until(async () => {
        text = await serverText(id);
        return editor.text() === text;
      }, 'the editor shows the server’s text');
      return text;
    }

    it(`keeps every later edit and takes out exactly the write, over ${TRIALS * OPS_PER_TRIAL} operations`, async () => {
      let ops = 0;
      let undone = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const seed = (Date.now() ^ (trial * 7919)) >>> 0;
        const rand = random(seed);
        const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;
        let n = 0;
        const word = (kind: 't' | 'p') => `${kind}${++n}x`;
        const paragraph = () => `${word('t')} ${word('t')} words.\n\n`;
        const context = `seed ${seed}, trial ${trial}`;

        const { document_id: id } = await docs().create(ada(), {
          title: `Random ${trial}`,
          scope: 'org',
          content_markdown: paragraph() + paragraph() + paragraph(),
        });
        const editor = live.editor(id, bobToken);
        await editor.ready;
        const writes: Write[] = [];

        for (let op = 0; op < OPS_PER_TRIAL; op++, ops++) {
          const blocks = liveBlocksOf(editor.doc);
          if (rand() < 0.45 && blocks.length > 0) {
            // Bob puts a new word at the start of a passage.
            const target = pick(blocks);
            const token = word('p');
            const map = editor.doc
              .getArray<Y.Map<unknown>>('blocks')
              .toArray()
              .find((m) => m.get('id') === target.id)!;
            (map.get('text') as Y.Text).insert(0, `${token} `);
            for (const w of writes) if (w.added.some((b) => b.id === target.id)) w.touched.add(target.id);
            await until(
              async () => (await serverText(id)).includes(token),
              `the server has ${token} (${context})`,
            );
            continue;
          }
          const modes = ['append', 'replace_section', 'replace_all', 'fill_empty'] as const;
          const mode = pick(modes);
          const content =
            rand() < 0.05 ? '' : Array.from({ length: 1 + Math.floor(rand() * 3) }, paragraph).join('');
          const { version } = await docs().read(ada(), { document_id: id });
          const input: Record<string, unknown> = { document_id: id, mode, content_markdown: content };
          if (mode === 'replace_section') {
            const withWords = blocks.filter((b) => wordsOf(b.text).length > 0);
            if (withWords.length === 0) continue;
            input.section_excerpt = wordsOf(pick(withWords).text)[0];
          }
          if (mode === 'replace_all') input.expected_version = version;
          const before = new Map(blocks.map((b) => [b.id, b]));
          let result: { new_version?: number };
          try {
            result = (await docs().edit(ada(), input)) as { new_version?: number };
          } catch (error) {
            // fill_empty on a document with text is refused, and writes nothing.
            assert.equal(mode, 'fill_empty', `${String(error)} (${context})`);
            continue;
          }
          await converged(id, editor);
          const afterBlocks = liveBlocksOf(editor.doc);
          const added = afterBlocks.filter((b) => !before.has(b.id));
          const removed = blocks.filter((b) => !afterBlocks.some((a) => a.id === b.id));
          const rows = (await docs().versions(ada(), { document_id: id })).versions;
          const row = rows.find((r) => r.reason === 'agent_edit' && r.made_version === result.new_version);
          assert.ok(row, `the write has its row (${context})`);
          writes.push({ versionId: row.version_id, added, removed, touched: new Set() });
        }

        if (writes.length === 0) continue;
        const chosen = pick(writes);
        const text = await converged(id, editor);
        const beforeWords = new Set(wordsOf(text));
        const liveNow = new Map(liveBlocksOf(editor.doc).map((b) => [b.id, b]));
        const gone = chosen.added.filter((b) => liveNow.has(b.id) && !chosen.touched.has(b.id));
        const kept = chosen.added.filter((b) => liveNow.has(b.id) && chosen.touched.has(b.id));
        const expected = new Set(beforeWords);
        for (const b of gone) for (const w of wordsOf(b.text)) expected.delete(w);
        for (const b of chosen.removed) for (const w of wordsOf(b.text)) expected.add(w);

        const result = await live
          .services()
          .documents.store.open(id)
          .then(() =>
            // Through the JSON API, as the app does it.
            fetch(`${live.server.url}/api/documents/${id}/versions/${chosen.versionId}/undo`, {
              method: 'POST',
              headers: { authorization: `Bearer ${bobToken}`, 'content-type': 'application/json' },
              body: '{}',
            }),
          );
        const body = (await result.json()) as { kept: string[] };
        assert.equal(result.status, 200, `${JSON.stringify(body)} (${context})`);
        const after = await converged(id, editor);
        assert.deepEqual(
          [...new Set(wordsOf(after))].sort(),
          [...expected].sort(),
          `exactly the write's words went and what it removed came back (${context})`,
        );
        assert.equal(body.kept.length, kept.length, `the kept passages are counted (${context})`);
        for (const b of kept) {
          assert.ok(
            body.kept.some((k) => wordsOf(b.text).every((w) => k.includes(w))),
            `a kept passage is quoted (${context})`,
          );
        }
        undone++;
        editor.close();
      }
      assert.ok(ops >= 1000, `thousands of operations: ${ops}`);
      assert.ok(undone >= TRIALS / 2, `most trials undid a write: ${undone}`);
    });
  });
}
