import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Worker } from 'node:worker_threads';
import { sql, type Kysely } from 'kysely';
import { compiled, compiledRow, compiledRows } from '../src/storage/compiled.ts';
import { dropPgSchema, openStorage, type Storage } from '../src/storage/db.ts';
import type { Db } from '../src/storage/schema.ts';
import { PG_URL } from './support/databases.ts';
import { until } from './support/instances.ts';

interface Probe {
  probe: { id: number; label: string; note: string | null };
}
const probe = (db: Db) => db as unknown as Kysely<Probe>;

const byLabel = compiled((db, label: string, over: number) =>
  probe(db)
    .selectFrom('probe')
    .select(['id', 'note'])
    .where('label', '=', label)
    .where('id', '>', over)
    .where('note', 'is not', null)
    .orderBy('id'),
);
const addProbe = compiledRow(['id', 'label', 'note'], (db, row: Probe['probe']) =>
  probe(db)
    .insertInto('probe')
    .values(row)
    .onConflict((oc) => oc.column('id').doNothing()),
);

const putProbes = compiledRows(['id', 'label', 'note'], 3, (db, rows: Probe['probe'][]) =>
  probe(db)
    .insertInto('probe')
    .values(rows)
    .onConflict((oc) => oc.column('id').doUpdateSet((eb) => ({ note: eb.ref('excluded.note') }))),
);

const plain = async (result: Promise<{ rows: object[] }>) => (await result).rows.map((r) => ({ ...r }));

const databases = [
  {
    name: 'sqlite',
    async open() {
      const dir = mkdtempSync(join(tmpdir(), 'tandem-compiled-'));
      const storage = await openStorage({ sqlitePath: join(dir, 'probe.sqlite') });
      return { storage, close: async () => (await storage.close(), rmSync(dir, { recursive: true })) };
    },
  },
  ...(process.env.TANDEM_TEST_POSTGRES === 'skip'
    ? []
    : [
        {
          name: 'postgres',
          async open() {
            const schema = `t_${randomBytes(6).toString('hex')}`;
            const storage = await openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 2 });
            return {
              storage,
              close: async () => (await storage.close(), await dropPgSchema(PG_URL, schema)),
            };
          },
        },
      ]),
];

for (const database of databases) {
  describe(`statements compiled once (${database.name})`, () => {
    let storage: Storage;
    let close: () => Promise<unknown>;
    before(async () => {
      ({ storage, close } = await database.open());
      await sql`create table probe (id integer primary key, label text not null, note text)`.execute(
        storage.db,
      );
    });
    after(() => close());

    it('sends each call its own values, and keeps the values fixed in the statement', async () => {
      for (const [id, label, note] of [
        [1, 'a', 'first'],
        [2, 'a', null],
        [3, 'b', 'third'],
        [4, 'a', 'fourth'],
      ] as const)
        assert.equal(Number((await addProbe(storage.db, { id, label, note })).numAffectedRows), 1);
      assert.deepEqual(await plain(byLabel(storage.db, 'a', 0)), [
        { id: 1, note: 'first' },
        { id: 4, note: 'fourth' },
      ]);
      assert.deepEqual(await plain(byLabel(storage.db, 'a', 1)), [{ id: 4, note: 'fourth' }]);
      assert.deepEqual(await plain(byLabel(storage.db, 'b', 0)), [{ id: 3, note: 'third' }]);
      assert.deepEqual(await plain(byLabel(storage.db, 'c', 0)), []);
      // The conflict clause stays part of the statement: a second row 1 changes nothing.
      assert.equal(
        Number((await addProbe(storage.db, { id: 1, label: 'z', note: 'again' })).numAffectedRows),
        0,
      );
      assert.deepEqual(await plain(byLabel(storage.db, 'z', 0)), []);
    });

    it('runs inside the transaction it is given, and nothing stays when it rolls back', async () => {
      await assert.rejects(
        storage.db.transaction().execute(async (trx) => {
          await addProbe(trx, { id: 10, label: 'tx', note: 'inside' });
          assert.deepEqual(await plain(byLabel(trx, 'tx', 0)), [{ id: 10, note: 'inside' }]);
          throw new Error('roll back');
        }),
        /roll back/,
      );
      assert.deepEqual(await plain(byLabel(storage.db, 'tx', 0)), []);
    });

    it('sends several rows in one statement, whatever their number up to its most', async () => {
      await putProbes(storage.db, [{ id: 20, label: 'rows', note: 'one' }]);
      await putProbes(storage.db, [
        { id: 21, label: 'rows', note: 'two' },
        { id: 20, label: 'rows', note: 'one again' },
      ]);
      await putProbes(storage.db, [
        { id: 22, label: 'rows', note: 'three' },
        { id: 23, label: 'rows', note: 'four' },
        { id: 21, label: 'rows', note: 'two again' },
      ]);
      assert.deepEqual(await plain(byLabel(storage.db, 'rows', 0)), [
        { id: 20, note: 'one again' },
        { id: 21, note: 'two again' },
        { id: 22, note: 'three' },
        { id: 23, note: 'four' },
      ]);
      assert.throws(() => putProbes(storage.db, []), /takes 1 to 3 rows, not 0/);
      const four = Array.from({ length: 4 }, (_, i) => ({ id: 30 + i, label: 'many', note: 'n' }));
      assert.throws(() => putProbes(storage.db, four), /takes 1 to 3 rows, not 4/);
      assert.deepEqual(await plain(byLabel(storage.db, 'many', 0)), []);
    });

    it('refuses a statement that changes a value or leaves one out, on its first call', async () => {
      const changes = compiled((db, part: string) =>
        probe(db).selectFrom('probe').select('id').where('label', 'like', `%${part}%`),
      );
      await assert.rejects(changes(storage.db, 'a'), /changed its value 0/);
      const leavesOut = compiled((db, id: number, _unused: string) =>
        probe(db).selectFrom('probe').select('id').where('id', '=', id),
      );
      await assert.rejects(leavesOut(storage.db, 1, 'x'), /must send each of its 2 values as a parameter/);
    });
  });
}

describe('the write-ahead log of an embedded database', () => {
  it('is copied into the database file by a thread of its own while this one keeps writing, and nothing is lost', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-checkpoints-'));
    const path = join(dir, 'probe.sqlite');
    try {
      let storage = await openStorage({ sqlitePath: path });
      await sql`create table probe (id integer primary key, label text not null, note text)`.execute(
        storage.db,
      );
      const emptyFile = statSync(path).size;
      const note = 'x'.repeat(10_000);
      // 100 commits of 10 KB: about 250 pages, well under the 1,000 at which a commit would copy
      // them itself, so only the other thread can have put them in the file.
      for (let id = 1; id <= 100; id++)
        await storage.db.transaction().execute((trx) => addProbe(trx, { id, label: 'bulk', note }));
      await until(() => statSync(path).size > emptyFile + 500_000, 'the pages reach the database file');
      assert.ok(statSync(`${path}-wal`).size > 0, 'the log is kept beside it');
      await storage.close();
      storage = await openStorage({ sqlitePath: path });
      const count = await sql<{ n: number }>`select count(*) as n from probe`.execute(storage.db);
      assert.equal(Number(count.rows[0]!.n), 100);
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('opens, waiting, while another connection holds the file for a moment', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-locked-'));
    const path = join(dir, 'probe.sqlite');
    try {
      await (await openStorage({ sqlitePath: path })).close();
      // Another connection (a thread of its own, as a checkpoint is) holds the file for 300 ms.
      const holder = new Worker(
        `const { parentPort, workerData } = require('node:worker_threads');
         const { DatabaseSync } = require('node:sqlite');
         const db = new DatabaseSync(workerData.path);
         db.exec('PRAGMA locking_mode = EXCLUSIVE');
         db.exec('BEGIN EXCLUSIVE');
         parentPort.postMessage('holding');
         Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
         db.exec('COMMIT');
         db.close();`,
        { eval: true, workerData: { path } },
      );
      await new Promise((resolve) => holder.once('message', resolve));
      const storage = await openStorage({ sqlitePath: path });
      await sql`create table probe (id integer primary key)`.execute(storage.db);
      await storage.close();
      await new Promise((resolve) => holder.once('exit', resolve));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
