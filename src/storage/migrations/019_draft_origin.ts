import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Which of Tandem's agents drafted a version (`Builder`), when one did; null otherwise.
  await db.schema.alterTable('flow_versions').addColumn('agent', 'text').execute();
  // The trigger a draft proposes (a template's, filled in), offered when it is published; null when
  // the draft proposes none. Publishing takes its trigger from the caller as before.
  await db.schema.alterTable('flow_versions').addColumn('trigger_json', 'text').execute();
}
