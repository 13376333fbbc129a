import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  // One account per e-mail address (lower-cased), whatever workspaces it belongs to.
  await s
    .createTable('accounts')
    .addColumn('email', 'text', (c) => c.primaryKey())
    .addColumn('password_hash', 'text')
    .addColumn('password_changed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  // A browser's session: the cookie holds a random secret, the row its SHA-256.
  await s
    .createTable('browser_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('browser_sessions_email').on('browser_sessions').column('email').execute();
  // Failed sign-ins per account (`account:<email>`) and per address (`address:<ip>`).
  await s
    .createTable('sign_in_attempts')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('last_at', 'bigint', (c) => c.notNull())
    .addColumn('wait_until', 'bigint', (c) => c.notNull())
    .execute();
  // The authorization server's records (clients, grants, codes, tokens, interactions), one table.
  await s
    .createTable('oauth_records')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('id', 'text', (c) => c.notNull())
    .addColumn('grant_id', 'text')
    .addColumn('uid', 'text')
    .addColumn('account_id', 'text')
    .addColumn('client_id', 'text')
    .addColumn('expires_at', 'bigint')
    .addColumn('consumed_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // What a person reads about a grant in their settings: the client's name, its redirect host.
    .addColumn('label', 'text')
    .addColumn('payload', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('oauth_records_pk', ['model', 'id'])
    .execute();
  await s.createIndex('oauth_records_grant').on('oauth_records').column('grant_id').execute();
  await s.createIndex('oauth_records_uid').on('oauth_records').columns(['model', 'uid']).execute();
  await s
    .createIndex('oauth_records_account')
    .on('oauth_records')
    .columns(['model', 'account_id', 'client_id'])
    .execute();
  await s.createIndex('tokens_person').on('tokens').column('person_id').execute();
}
