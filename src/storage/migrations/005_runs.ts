import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  // One row per run; a run is pinned to the version it started on.
  await s
    .createTable('runs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('automation_id', 'text', (c) => c.notNull().references('automations.id'))
    .addColumn('flow_version_id', 'text', (c) => c.notNull().references('flow_versions.id'))
    .addColumn('parent_run_id', 'text')
    .addColumn('parent_node_key', 'text')
    .addColumn('cause', 'text', (c) => c.notNull())
    .addColumn('dry_run', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('acting_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('requested_by', 'text')
    .addColumn('error', 'text')
    .addColumn('queued_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('trigger_json', 'text', (c) => c.notNull())
    .addColumn('output_json', 'text')
    .execute();
  await s.createIndex('runs_automation').on('runs').columns(['automation_id', 'id']).execute();
  await s.createIndex('runs_parent').on('runs').column('parent_run_id').execute();
  // The state of each node of a run; map items and their body nodes have keys of their own.
  await s
    .createTable('run_nodes')
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
    .addColumn('node_key', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('wait_until', 'bigint')
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .addColumn('output_json', 'text')
    .addPrimaryKeyConstraint('run_nodes_pk', ['run_id', 'node_key'])
    .execute();
  // Work to do: advance a run. Enqueued in the transaction that makes it needed; claimed with a lease.
  await s
    .createTable('jobs')
    .addColumn('run_id', 'text', (c) => c.primaryKey().references('runs.id'))
    .addColumn('available_at', 'bigint', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_until', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('jobs_available').on('jobs').column('available_at').execute();
  // What a write did, stored in the write's own transaction: a write with a key here never runs again.
  await s
    .createTable('run_effects')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('run_id', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('result_json', 'text')
    .execute();
  await s
    .createTable('approvals')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('run_id', 'text', (c) => c.notNull().references('runs.id'))
    .addColumn('node_key', 'text', (c) => c.notNull())
    .addColumn('node_id', 'text', (c) => c.notNull())
    .addColumn('automation_id', 'text', (c) => c.notNull())
    .addColumn('session_id', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('approvers_json', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('decided_by', 'text')
    .addColumn('decided_at', 'bigint')
    .addColumn('note', 'text')
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('approvals_run').on('approvals').column('run_id').execute();
  await s
    .alterTable('automations')
    .addColumn('dropped_events', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await s.alterTable('automations').addColumn('last_event_at', 'bigint').execute();
}
