import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A signed delivery's body by its SHA-256 (`workspace:provider:hex`), next to its delivery id:
  // GitHub signs the body only, so the same body is refused under a new X-GitHub-Delivery. It is
  // kept as long as the delivery id is, in the same row, and pruned with it.
  await db.schema.alterTable('event_outbox').addColumn('body_key', 'text').execute();
  await db.schema
    .createIndex('event_outbox_body_key')
    .on('event_outbox')
    .column('body_key')
    .unique()
    .execute();
}
