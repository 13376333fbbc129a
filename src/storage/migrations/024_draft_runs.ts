import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.ts';

/**
 * A dry run of a draft that was never published belongs to no automation: `runs.automation_id`
 * may be null, and such a run is found by its `flow_version_id` (the draft it ran).
 */
export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  if (dialect === 'postgres') {
    await sql`alter table runs alter column automation_id drop not null`.execute(db);
  } else {
    // SQLite cannot drop a NOT NULL: the table is rebuilt. Other tables refer to runs by name, so
    // their references are checked at commit (deferred), against the rebuilt table: its rows are
    // copied aside, the table replaced, then the rows inserted into it (each insert settles the
    // references the drop left open; renaming a full table would leave them counted as broken).
    await sql`pragma defer_foreign_keys = on`.execute(db);
    await sql`create table runs_copy as select * from runs`.execute(db);
    await s
      .createTable('runs_next')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
      .addColumn('automation_id', 'text', (c) => c.references('automations.id'))
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
      .addColumn('event_depth', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('subflow_depth', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('root_run_id', 'text')
      .addColumn('rerun_of', 'text')
      .execute();
    const columns = sql.raw(
      'id, workspace_id, automation_id, flow_version_id, parent_run_id, parent_node_key, cause, dry_run, status, acting_id, requested_by, error, queued_at, started_at, finished_at, updated_at, trigger_json, output_json, event_depth, subflow_depth, root_run_id, rerun_of',
    );
    await s.dropTable('runs').execute();
    await s.alterTable('runs_next').renameTo('runs').execute();
    await sql`insert into runs (${columns}) select ${columns} from runs_copy`.execute(db);
    await s.dropTable('runs_copy').execute();
    await s.createIndex('runs_automation').on('runs').columns(['automation_id', 'id']).execute();
    await s.createIndex('runs_parent').on('runs').column('parent_run_id').execute();
    await s.createIndex('runs_root').on('runs').column('root_run_id').execute();
  }
  await s.createIndex('runs_draft').on('runs').columns(['flow_version_id', 'id']).execute();
}
