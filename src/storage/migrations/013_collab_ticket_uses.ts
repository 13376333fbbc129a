import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // A live-socket ticket opens one connection: its first use is recorded here (by its signature),
  // on whichever instance, and any later use is refused. A row is pruned once its ticket has
  // expired everywhere.
  await db.schema
    .createTable('collab_ticket_uses')
    .addColumn('ticket', 'text', (c) => c.primaryKey())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('collab_ticket_uses_expiry')
    .on('collab_ticket_uses')
    .column('expires_at')
    .execute();
}
