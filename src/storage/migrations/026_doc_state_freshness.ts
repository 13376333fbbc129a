import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  // Every agent write asks whether a newer snapshot of its document was stored. On SQLite a row's
  // columns are read in order, and the snapshot's time came after its state (often 100 KB, kept
  // in overflow pages): finding the time meant reading through the whole state. The time now
  // comes first. PostgreSQL keeps large values apart from the row, so its table stays as it is.
  if (dialect === 'postgres') return;
  await db.schema
    .createTable('doc_states_next')
    .addColumn('artifact_id', 'text', (c) => c.primaryKey().references('artifacts.id'))
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .execute();
  await sql`insert into doc_states_next (artifact_id, updated_at, state) select artifact_id, updated_at, state from doc_states`.execute(
    db,
  );
  await db.schema.dropTable('doc_states').execute();
  await db.schema.alterTable('doc_states_next').renameTo('doc_states').execute();
}
