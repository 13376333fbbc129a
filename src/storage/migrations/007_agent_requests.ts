import { sql, type Kysely } from 'kysely';
import type { Dialect } from '../db.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  // An agent request is work like a run's job: claimed with a lease by any worker, answered once.
  await s.alterTable('agent_requests').addColumn('workspace_id', 'text').execute();
  await s.alterTable('agent_requests').addColumn('artifact_id', 'text').execute();
  await s
    .alterTable('agent_requests')
    .addColumn('available_at', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await s.alterTable('agent_requests').addColumn('locked_by', 'text').execute();
  await s.alterTable('agent_requests').addColumn('locked_until', 'bigint').execute();
  // Times a worker took the request; one that took it and never finished died doing so.
  await s
    .alterTable('agent_requests')
    .addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await s.alterTable('agent_requests').addColumn('started_at', 'bigint').execute();
  await s.alterTable('agent_requests').addColumn('finished_at', 'bigint').execute();
  await s.alterTable('agent_requests').addColumn('reply_comment_id', 'text').execute();
  // The Builder's draft, stored in the draft's own transaction so a resumed request drafts once.
  await s.alterTable('agent_requests').addColumn('flow_version_id', 'text').execute();
  await s.alterTable('agent_requests').addColumn('error', 'text').execute();
  await sql`update agent_requests set
      artifact_id = (select artifact_id from threads where threads.id = agent_requests.thread_id),
      available_at = created_at`.execute(db);
  await sql`update agent_requests set
      workspace_id = (select workspace_id from artifacts where artifacts.id = agent_requests.artifact_id)`.execute(
    db,
  );
  await s
    .createIndex('agent_requests_due')
    .on('agent_requests')
    .columns(['status', 'available_at'])
    .execute();
  await s
    .createIndex('agent_requests_workspace')
    .on('agent_requests')
    .columns(['workspace_id', 'status'])
    .execute();

  // An agent's reply is no person's: author_id is null, `agent` names it, and `request_id` (unique)
  // makes a second reply to the same request impossible.
  if (dialect === 'postgres') {
    await sql`alter table comments alter column author_id drop not null`.execute(db);
    await s.alterTable('comments').addColumn('agent', 'text').execute();
    await s.alterTable('comments').addColumn('request_id', 'text').execute();
  } else {
    // SQLite cannot drop a NOT NULL; the table is rebuilt (nothing refers to comments).
    await s
      .createTable('comments_next')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
      .addColumn('author_id', 'text', (c) => c.references('people.id'))
      .addColumn('agent', 'text')
      .addColumn('request_id', 'text')
      .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'bigint', (c) => c.notNull())
      .addColumn('body', 'text', (c) => c.notNull())
      .execute();
    await sql`insert into comments_next (id, thread_id, author_id, deleted, created_at, body)
      select id, thread_id, author_id, deleted, created_at, body from comments`.execute(db);
    await s.dropTable('comments').execute();
    await s.alterTable('comments_next').renameTo('comments').execute();
    await s.createIndex('comments_thread').on('comments').columns(['thread_id', 'id']).execute();
  }
  await s.createIndex('comments_request').on('comments').column('request_id').unique().execute();

  // Calls an agent made for a person (the assistant's reads) name the agent in the history.
  await s.alterTable('activity').addColumn('agent', 'text').execute();
}
