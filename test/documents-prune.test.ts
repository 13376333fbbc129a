import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../src/engine/engine.ts';
import { newId } from '../src/ids.ts';
import { pruneVersions } from '../src/domains/documents/prune.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import { until } from './support/instances.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The clock the tests set: a fixed instant, at noon UTC. */
const NOW = Date.UTC(2026, 5, 15, 12);

/** Ages of the automatic rows made, in hours: some within the week, several a day, several a week. */
const AGES = [
  1,
  20,
  100,
  160, // within 7 days: all kept
  170,
  171,
  175, // day 7, same UTC day (07:00 the 8th day back and before): newest kept
  200,
  201, // another day
  24 * 20,
  24 * 20 + 2, // day 20
  24 * 40,
  24 * 41,
  24 * 42, // one week around day 40-42
  24 * 90,
  24 * 91, // a week around day 90
];

interface Row {
  id: string;
  reason: string;
  created_at: number;
}

/** What the spec keeps, worked out row by row: the newest of each document's day, then week. */
function expectedKept(rows: Row[], now: number, keepDays = 7): Set<string> {
  const kept = new Set<string>();
  const newest = new Map<string, Row>();
  for (const r of rows) {
    const age = now - r.created_at;
    if (r.reason === 'named' || r.reason === 'restore' || age < keepDays * DAY) {
      kept.add(r.id);
      continue;
    }
    const bucket =
      r.created_at >= now - Math.max(30, keepDays) * DAY
        ? `d${Math.floor(r.created_at / DAY)}`
        : `w${Math.floor(r.created_at / (7 * DAY))}`;
    const best = newest.get(bucket);
    if (!best || best.created_at < r.created_at || (best.created_at === r.created_at && best.id < r.id))
      newest.set(bucket, r);
  }
  for (const r of newest.values()) kept.add(r.id);
  return kept;
}

for (const db of DATABASES) {
  describe(`pruning document versions on ${db.name}`, () => {
    let h: Harness;
    before(async () => {
      h = await setup(db);
    });
    after(() => h.close());

    const ada = () => h.actor('ada@acme.test');
    const sql = () => h.services.deps.db;
    const rowsOf = async (id: string): Promise<Row[]> =>
      sql()
        .selectFrom('checkpoints')
        .select(['id', 'reason', 'created_at'])
        .where('artifact_id', '=', id)
        .orderBy('id')
        .execute();

    /**
     * A document with one agent write per age in AGES (its row dated that many hours before NOW),
     * a named version and an undo, both older than any window.
     */
    async function documentWithHistory(): Promise<string> {
      const docs = h.services.documents;
      const { document_id: id } = await docs.create(ada(), {
        title: 'Long history',
        scope: 'org',
        content_markdown: 'Start.\n',
      });
      for (let i = 0; i < AGES.length; i++) {
        await docs.edit(ada(), { document_id: id, mode: 'append', content_markdown: `Line ${i}.\n` });
      }
      const rows = (await rowsOf(id)).filter((r) => r.reason === 'agent_edit');
      // The creation's row is the oldest: it gets the oldest age; each write after it, in order.
      const ages = [24 * 200, ...[...AGES].sort((a, b) => b - a)];
      assert.equal(rows.length, ages.length);
      for (let i = 0; i < rows.length; i++) {
        await sql()
          .updateTable('checkpoints')
          .set({ created_at: NOW - ages[i]! * HOUR })
          .where('id', '=', rows[i]!.id)
          .execute();
      }
      const named = await h.services.documents.versions(ada(), { document_id: id });
      assert.ok(named.versions.length > 0);
      // A named version and an undo row, a year old: never pruned.
      await sql()
        .insertInto('checkpoints')
        .values([
          {
            id: newId('ver'),
            artifact_id: id,
            doc_version: 1,
            reason: 'named',
            label: 'Launch',
            pinned: 1,
            author_id: ada().personId,
            instruction: null,
            content: null,
            kept_json: null,
            blocks_json: null,
            created_at: NOW - 365 * DAY,
          },
          {
            id: newId('ver'),
            artifact_id: id,
            doc_version: 2,
            reason: 'restore',
            label: null,
            pinned: 0,
            author_id: ada().personId,
            instruction: 'undid version 1',
            content: null,
            kept_json: null,
            blocks_json: null,
            created_at: NOW - 365 * DAY,
          },
        ])
        .execute();
      return id;
    }

    it('keeps a week of every checkpoint, then one a day to 30 days, then one a week; named and restore rows forever', async () => {
      const id = await documentWithHistory();
      const before = await rowsOf(id);
      const expected = expectedKept(before, NOW);
      assert.ok(expected.size < before.length, 'there is something to prune');
      // A pass bounded to 2 rows removes 2; the next passes finish.
      assert.equal(await pruneVersions(sql(), { now: NOW, limit: 2 }), 2);
      while ((await pruneVersions(sql(), { now: NOW, limit: 2 })) > 0);
      const after = await rowsOf(id);
      assert.deepEqual(new Set(after.map((r) => r.id)), expected);
      assert.ok(after.some((r) => r.reason === 'named') && after.some((r) => r.reason === 'restore'));
      // Everything within the week is still there.
      const young = before.filter((r) => NOW - r.created_at < 7 * DAY);
      assert.equal(young.length, 4);
      for (const r of young) assert.ok(after.some((a) => a.id === r.id));
      // get_document_versions lists what is kept.
      const listed = await h.services.documents.versions(ada(), { document_id: id });
      assert.deepEqual(new Set(listed.versions.map((v) => v.version_id)), expected);
      // Pruning again removes nothing.
      assert.equal(await pruneVersions(sql(), { now: NOW }), 0);
    });

    it('keeps every checkpoint for as many days as configured', async () => {
      const id = await documentWithHistory();
      const before = await rowsOf(id);
      while ((await pruneVersions(sql(), { now: NOW, keepDays: 45 })) > 0);
      const after = await rowsOf(id);
      assert.deepEqual(new Set(after.map((r) => r.id)), expectedKept(before, NOW, 45));
      for (const r of before.filter((r) => NOW - r.created_at < 45 * DAY))
        assert.ok(
          after.some((a) => a.id === r.id),
          'rows younger than 45 days stay',
        );
    });

    it('runs in the engine’s housekeeping, on the engine’s clock', async () => {
      const id = await documentWithHistory();
      const expected = expectedKept(await rowsOf(id), NOW);
      const engine = createEngine(h.services, {
        dispatch: 'poll',
        pollMs: 50,
        clock: () => NOW,
        versionsPruneEveryMs: 0,
      });
      await engine.start();
      try {
        await until(async () => (await rowsOf(id)).length === expected.size, 'the engine pruned the history');
      } finally {
        await engine.stop();
      }
      assert.deepEqual(new Set((await rowsOf(id)).map((r) => r.id)), expected);
    });
  });
}
