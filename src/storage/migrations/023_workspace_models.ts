import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The model a workspace's assistant, @Builder and agent steps answer through, as an admin set it
  // in Settings; no row: the server's TANDEM_MODEL_* configuration. The key is sealed like a
  // connector's secrets, bound to its workspace.
  await db.schema
    .createTable('workspace_models')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('sealed_key', 'text')
    .addColumn('updated_by', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
