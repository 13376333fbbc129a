import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  // A flow groups the versions of one plan: a new draft starts one, an automation owns one.
  await s
    .createTable('flows')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('created_by', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('automation_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // Versions are immutable once stored; publishing moves the automation's pointer.
  await s
    .createTable('flow_versions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('flow_id', 'text', (c) => c.notNull().references('flows.id'))
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('ask', 'text', (c) => c.notNull())
    .addColumn('write_approval', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('summary_json', 'text', (c) => c.notNull())
    .addColumn('plan_json', 'text', (c) => c.notNull())
    .addUniqueConstraint('flow_versions_flow_version', ['flow_id', 'version'])
    .execute();
  await s
    .createTable('automations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('flow_id', 'text', (c) => c.notNull().unique().references('flows.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('tags_json', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_by', 'text', (c) => c.notNull().references('people.id'))
    // Whose rights its runs use: the creator (personal) or the admin who published the live version.
    .addColumn('acting_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('live_version_id', 'text', (c) => c.notNull().references('flow_versions.id'))
    .addColumn('trigger_kind', 'text', (c) => c.notNull())
    .addColumn('trigger_json', 'text', (c) => c.notNull())
    .addColumn('notify', 'text', (c) => c.notNull())
    .addColumn('cooldown_s', 'integer', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull().references('conversations.id'))
    .addColumn('next_fire_at', 'bigint')
    .addColumn('last_fired_at', 'bigint')
    .addColumn('consecutive_failures', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('automations_workspace').on('automations').columns(['workspace_id', 'id']).execute();
  await s.createIndex('automations_due').on('automations').columns(['enabled', 'next_fire_at']).execute();
}
