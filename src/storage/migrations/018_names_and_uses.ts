import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // The approval an approval's notice is about, so the notification shows its card and its
  // `Approve`. Notices stored before keep null.
  await db.schema.alterTable('notifications').addColumn('approval_id', 'text').execute();
  // A personal access token's name (given when it is made in Settings) and when it was last used
  // (moved at most once a minute). Tokens made before have no name and no known use.
  await db.schema.alterTable('tokens').addColumn('name', 'text').execute();
  await db.schema.alterTable('tokens').addColumn('last_used_at', 'bigint').execute();
  // What a tool call came through: `token` (a personal access token), `oauth` (an app), `session`
  // or `local` (the command line), and the token's or the app's id; names are looked up when read.
  await db.schema.alterTable('activity').addColumn('via_kind', 'text').execute();
  await db.schema.alterTable('activity').addColumn('via_id', 'text').execute();
}
