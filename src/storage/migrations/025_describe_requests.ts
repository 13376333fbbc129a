import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // `Describe it` in the app: @Builder drafting from a person's sentence in the background. The
  // row is where the drafting stands, read by whichever instance the person's next request reaches.
  await db.schema
    .createTable('describe_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('person_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('flow_version_id', 'text')
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('ended_at', 'bigint')
    .execute();
}
