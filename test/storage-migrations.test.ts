import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { migrate, openStorage } from '../src/storage/db.ts';

describe('migrations on sqlite', () => {
  it('puts a snapshot’s time before its state, keeping every stored snapshot (026)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tandem-migrations-'));
    const path = join(dir, 'tandem.sqlite');
    try {
      // A database as it stood before 026: the state first, then its time.
      let storage = await openStorage({ sqlitePath: path });
      await migrate(storage);
      const db = storage.db;
      await sql`drop table doc_states`.execute(db);
      await sql`create table doc_states (artifact_id text primary key references artifacts (id), state text not null, updated_at bigint not null)`.execute(
        db,
      );
      await sql`delete from tandem_migrations where name = '026_doc_state_freshness'`.execute(db);
      await sql`insert into workspaces (id, name, created_at) values ('ws_1', 'W', 1)`.execute(db);
      await sql`insert into people (id, workspace_id, email, name, handle, created_at) values ('usr_1', 'ws_1', 'a@w.test', 'A', 'a', 1)`.execute(
        db,
      );
      for (const id of ['doc_1', 'doc_2']) {
        await sql`insert into artifacts (id, workspace_id, type, title, owner_id, scope, status, version, created_at, updated_at) values (${id}, 'ws_1', 'document', 'D', 'usr_1', 'private', 'active', 1, 1, 1)`.execute(
          db,
        );
      }
      const big = 'S'.repeat(150_000);
      await sql`insert into doc_states (artifact_id, state, updated_at) values ('doc_1', ${big}, 42), ('doc_2', 'small', 7)`.execute(
        db,
      );
      await storage.close();

      storage = await openStorage({ sqlitePath: path });
      assert.deepEqual(await migrate(storage), ['026_doc_state_freshness']);
      const columns = await sql<{ name: string }>`pragma table_info(doc_states)`.execute(storage.db);
      assert.deepEqual(
        columns.rows.map((c) => c.name),
        ['artifact_id', 'updated_at', 'state'],
      );
      const rows = await storage.db
        .selectFrom('doc_states')
        .select(['artifact_id', 'updated_at', 'state'])
        .orderBy('artifact_id')
        .execute();
      assert.deepEqual(
        rows.map((r) => ({ ...r, updated_at: Number(r.updated_at) })),
        [
          { artifact_id: 'doc_1', updated_at: 42, state: big },
          { artifact_id: 'doc_2', updated_at: 7, state: 'small' },
        ],
      );
      // The snapshot still belongs to its document: one for a document that does not exist is refused.
      await assert.rejects(
        sql`insert into doc_states (artifact_id, updated_at, state) values ('doc_none', 1, 'x')`.execute(
          storage.db,
        ),
        /FOREIGN KEY/,
      );
      await storage.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
