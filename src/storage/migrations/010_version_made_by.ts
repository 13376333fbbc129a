import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // Who made a plan version: `person` (the person themselves: the app, the JSON API) or `agent`
  // (an agent acting for them: MCP, a mention's agent). Versions stored before it was recorded
  // keep null: nobody knows.
  await db.schema.alterTable('flow_versions').addColumn('made_by', 'text').execute();
}
