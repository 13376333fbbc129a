import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import pg from 'pg';
import { dropPgSchema, openStorage, type Storage } from '../src/storage/db.ts';
import { PreparedStatements } from '../src/storage/prepared.ts';
import { PG_URL } from './support/databases.ts';

const SKIP = process.env.TANDEM_TEST_POSTGRES === 'skip';

describe('which statements are prepared', () => {
  it('names a query on its third use, and never transaction control or other commands', () => {
    const statements = new PreparedStatements();
    const text = 'select * from runs where id = $1';
    assert.equal(statements.nameFor(text), undefined);
    assert.equal(statements.nameFor(text), undefined);
    const name = statements.nameFor(text);
    assert.match(name ?? '', /^t_[0-9a-f]{24}$/);
    assert.equal(statements.nameFor(text), name, 'the name stays the same');
    for (const other of ['begin', 'commit', 'create table x (a int)', 'set local lock_timeout = 1']) {
      for (let i = 0; i < 5; i++) assert.equal(statements.nameFor(other), undefined, other);
    }
  });

  it('stops naming past its cap, so a connection holds a bounded number of plans', () => {
    const statements = new PreparedStatements();
    let named = 0;
    for (let i = 0; i < 600; i++) {
      const text = `select ${i} from runs where id = $1`;
      statements.nameFor(text);
      statements.nameFor(text);
      if (statements.nameFor(text) !== undefined) named += 1;
    }
    assert.equal(named, 500);
  });
});

describe('prepared statements on Postgres', { skip: SKIP }, () => {
  let storage: Storage;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let other: pg.Client;

  before(async () => {
    storage = await openStorage({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 1 });
    await sql`create table probe (id int primary key, label text)`.execute(storage.db);
    await sql`insert into probe values (1, 'one')`.execute(storage.db);
    other = new pg.Client({ connectionString: PG_URL, options: `-c search_path=${schema}` });
    await other.connect();
  });
  after(async () => {
    await other?.end();
    await storage?.close();
    await dropPgSchema(PG_URL, schema);
  });

  const read = (id: number) =>
    sql<Record<string, unknown>>`select * from probe where id = ${id}`.execute(storage.db);
  const prepared = async () =>
    (
      await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(storage.db)
    ).rows.map((r) => r.statement);

  it('prepares a repeated query on the connection and answers as before', async () => {
    for (let i = 0; i < 2; i++) assert.deepEqual((await read(1)).rows, [{ id: 1, label: 'one' }]);
    assert.ok(!(await prepared()).some((s) => s.includes('from probe')), 'not prepared before its third use');
    for (let i = 0; i < 3; i++) assert.deepEqual((await read(1)).rows, [{ id: 1, label: 'one' }]);
    assert.ok(
      (await prepared()).some((s) => s.includes('from probe')),
      'prepared after it repeated',
    );
    assert.deepEqual((await read(2)).rows, [], 'a prepared query takes new parameters');
  });

  it('answers when another process changed the table under a prepared query', async () => {
    await other.query(`alter table probe add column note text default 'added'`);
    // Outside a transaction the query is sent again, unprepared, and sees the new column.
    assert.deepEqual((await read(1)).rows, [{ id: 1, label: 'one', note: 'added' }]);
    assert.deepEqual((await read(1)).rows, [{ id: 1, label: 'one', note: 'added' }]);
  });

  it('fails a transaction that met such a change once, and the next one succeeds', async () => {
    const text = (id: number) => sql<Record<string, unknown>>`select label, * from probe where id = ${id}`;
    for (let i = 0; i < 4; i++) await text(1).execute(storage.db);
    await other.query(`alter table probe add column extra int default 7`);
    await assert.rejects(
      storage.db.transaction().execute((trx) => text(1).execute(trx)),
      /cached plan must not change result type/,
    );
    const again = await storage.db.transaction().execute((trx) => text(1).execute(trx));
    assert.equal(again.rows[0]?.extra, 7);
  });
});
