import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople } from './support/people.ts';
import { ok } from './support/results.ts';
import { createDocument } from './support/documents.ts';
import { personEdit, textIn } from './support/replica.ts';

/** Paragraphs `para 0000` … each followed by a blank line: one block apiece. */
const paragraphs = (count: number) =>
  Array.from({ length: count }, (_, i) => `para ${String(i).padStart(4, '0')}\n\n`).join('');

/** Entries of a whole digest: a marker, then 16 characters a block. */
const WHOLE = /^d1:/;
const CHANGE = /^d2:/;

for (const db of DATABASES) {
  describe(`version digests on ${db.name}`, () => {
    let h: Harness;
    let ada: ToolCaller;

    before(async () => {
      h = await setup(db);
      ({ ada } = await connectPeople(h));
    });
    after(() => h.close());

    const sql = () => h.services.deps.db;

    /** The digest each version's row holds, by the version it stands for. */
    async function digests(id: string): Promise<Map<number, string>> {
      const rows = await sql()
        .selectFrom('checkpoints')
        .select(['doc_version', 'result_version', 'blocks_json', 'result_blocks_json'])
        .where('artifact_id', '=', id)
        .execute();
      const out = new Map<number, string>();
      for (const r of rows) {
        if (r.result_version !== null && r.result_blocks_json)
          out.set(r.result_version, r.result_blocks_json);
        else if (r.blocks_json) out.set(r.doc_version, r.blocks_json);
      }
      return out;
    }

    /** How many blocks changed since `expected`, as a refused replace_all reports it (nothing is written). */
    async function changedSince(id: string, expected: number): Promise<number | undefined> {
      const r = await ada.call('edit_document', {
        document_id: id,
        mode: 'replace_all',
        content_markdown: 'Everything new.\n',
        expected_version: expected,
      });
      assert.equal(r.isError, true, r.text);
      const s = r.structured as { error: string; blocks_changed_since?: number };
      assert.equal(s.error, 'version_conflict');
      return s.blocks_changed_since;
    }

    /** A document of 60 paragraphs, one block each, then `appends` agent appends of one block each. */
    async function longDocument(appends: number): Promise<{ id: string; version: number }> {
      const made = await createDocument(ada, {
        title: 'Long',
        scope: 'org',
        content_markdown: paragraphs(60),
      });
      for (let i = 0; i < appends; i++) {
        const r = await ada.call('edit_document', {
          document_id: made.id,
          mode: 'append',
          content_markdown: `added ${i}\n`,
        });
        ok(r);
      }
      return made;
    }

    it('stores a write’s digest as the blocks it changed, at most 16 changes from a whole one', async () => {
      const { id, version } = await longDocument(20);
      const stored = await digests(id);
      const kinds = Array.from({ length: 21 }, (_, i) => stored.get(version + i) ?? 'none');
      assert.match(kinds[0]!, WHOLE, 'the create stores the whole digest');
      // The 16 writes after it store changes, the 17th a whole digest again, then changes.
      assert.deepEqual(
        kinds.map((k) => (WHOLE.test(k) ? 'whole' : CHANGE.test(k) ? 'change' : k)),
        ['whole', ...Array<string>(16).fill('change'), 'whole', 'change', 'change', 'change'],
      );
      const whole = kinds[17]!.length;
      for (const k of kinds.filter((k) => CHANGE.test(k))) {
        assert.ok(k.length < 40, `a one-block change is stored small (${k.length} characters)`);
      }
      assert.ok(whole > 60 * 16, `the whole digest holds every block (${whole} characters)`);
    });

    it('reads a version’s digest back through the stored changes, for every version', async () => {
      const { id, version } = await longDocument(20);
      // Each write added one block: from version v, the document is (v + 20 - expected) blocks on.
      for (let back = 1; back <= 20; back++) {
        assert.equal(await changedSince(id, version + 20 - back), back, `${back} writes back`);
      }
    });

    it('stores a person’s edits as a change too, and counts it with the agent’s', async () => {
      const { id, version } = await longDocument(1);
      await personEdit(h, 'bob@acme.test', id, (doc) => textIn(doc, 'para 0007').insert(0, 'Edited: '));
      await personEdit(h, 'bob@acme.test', id, (doc) => textIn(doc, 'para 0031').insert(0, 'Edited: '));
      assert.equal(await h.services.documents.store.flush(id), true, 'the person’s edits were stored');
      const stored = await digests(id);
      assert.match(
        stored.get(version + 2)!,
        CHANGE,
        'the person’s row holds the change from the last digest',
      );
      assert.equal(await changedSince(id, version + 1), 2, 'the two blocks the person changed');
      assert.equal(await changedSince(id, version), 3, 'and the block the agent added before them');
    });

    it('leaves out blocks_changed_since when a row the changes lead back through is gone', async () => {
      const { id, version } = await longDocument(4);
      // Pruning took the row of the second write: versions after it read their digest through it.
      await sql()
        .deleteFrom('checkpoints')
        .where('artifact_id', '=', id)
        .where('result_version', '=', version + 2)
        .execute();
      assert.equal(await changedSince(id, version + 1), 3, 'a version before the gap still reads');
      assert.equal(await changedSince(id, version + 3), undefined, 'a version after it is not known');
      ok(
        await ada.call('edit_document', {
          document_id: id,
          mode: 'append',
          content_markdown: 'still writes\n',
        }),
      );
    });
  });
}
