import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The scopes of the credential that wrote a mention (space separated): the agent answering it
  // may do no more. Requests stored before keep null and read only.
  await db.schema.alterTable('agent_requests').addColumn('scopes', 'text').execute();
  // A rotated refresh token's answer (the pair it was exchanged for), so a retry within the retry
  // window is given that same pair again rather than a new one.
  await db.schema.alterTable('oauth_records').addColumn('answer', 'text').execute();
}
