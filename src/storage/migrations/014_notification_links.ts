import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // What an automation's notification is about, so the app links it to the automation and its
  // run (`/automations/{id}?run={run_id}`) from stored ids rather than from its words. Notices
  // stored before keep null: they stay text only.
  await db.schema.alterTable('notifications').addColumn('automation_id', 'text').execute();
  await db.schema.alterTable('notifications').addColumn('run_id', 'text').execute();
}
