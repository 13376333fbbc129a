import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  // A connector's settings: the open ones as JSON (api_url, smtp_url, from), the secret ones
  // (tokens, passwords, the webhook secret) sealed together with the deployment's key. The old
  // `secret` column held the webhook secret in the open; start-up seals what it holds and clears it.
  await s.alterTable('connectors').addColumn('config', 'text').execute();
  await s.alterTable('connectors').addColumn('sealed', 'text').execute();
  await s.alterTable('connectors').addColumn('updated_at', 'bigint').execute();
}
