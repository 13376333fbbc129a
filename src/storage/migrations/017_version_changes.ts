import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What a write changed, block by block (the blocks it added, removed and changed, with their
  // text and where they stood), so it can be shown and undone on its own. Rows stored before it
  // was recorded keep null: they can be compared and restored, not undone.
  await db.schema.alterTable('checkpoints').addColumn('changes_json', 'text').execute();
}
