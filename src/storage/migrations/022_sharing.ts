import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The role an artifact's audience (its pod's members, or everyone in the workspace) gets, when
  // it is not `editor`. No row: editor, as before sharing could say otherwise. A table of its own
  // so reading it never passes the artifact's large text.
  await db.schema
    .createTable('artifact_scope_roles')
    .addColumn('artifact_id', 'text', (c) => c.primaryKey().references('artifacts.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .execute();
}
