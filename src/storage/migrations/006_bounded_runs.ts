import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  // Loop, depth and fan-out guards are columns of the run, not state of the process that queued it.
  await s
    .alterTable('runs')
    .addColumn('event_depth', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await s
    .alterTable('runs')
    .addColumn('subflow_depth', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await s.alterTable('runs').addColumn('root_run_id', 'text').execute();
  await s.createIndex('runs_root').on('runs').column('root_run_id').execute();
  // Why a node failed, as a value: `rejected`, `outcome_unknown`, `limit`, `timeout`, `paused`.
  await s.alterTable('run_nodes').addColumn('error_code', 'text').execute();
  // How often a worker took the run without letting it go again: a crash counter.
  await s
    .alterTable('jobs')
    .addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Events are written in the transaction of the write that caused them and delivered by any engine.
  await s
    .createTable('event_outbox')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('action', 'text')
    .addColumn('repo', 'text')
    .addColumn('artifact_id', 'text')
    .addColumn('actor_id', 'text')
    .addColumn('source_automation_id', 'text')
    .addColumn('depth', 'integer', (c) => c.notNull().defaultTo(0))
    // A signed delivery's id (GitHub's X-GitHub-Delivery, a connector signature): seen once only.
    .addColumn('delivery_key', 'text', (c) => c.unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at', 'bigint')
    .addColumn('data_json', 'text', (c) => c.notNull())
    .execute();
  await s.createIndex('event_outbox_pending').on('event_outbox').columns(['delivered_at', 'id']).execute();
}
