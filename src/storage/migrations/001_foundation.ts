import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  await s
    .createTable('workspaces')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createTable('people')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('handle', 'text', (c) => c.notNull())
    .addColumn('admin', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addUniqueConstraint('people_email', ['workspace_id', 'email'])
    .addUniqueConstraint('people_handle', ['workspace_id', 'handle'])
    .execute();
  await s
    .createTable('agents')
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('handle', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('agents_pk', ['workspace_id', 'handle'])
    .execute();
  await s
    .createTable('pods')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createTable('pod_members')
    .addColumn('pod_id', 'text', (c) => c.notNull().references('pods.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addPrimaryKeyConstraint('pod_members_pk', ['pod_id', 'person_id'])
    .execute();
  await s.createIndex('pod_members_person').on('pod_members').column('person_id').execute();
  await s
    .createTable('conversations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('archived', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createTable('conversation_participants')
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addPrimaryKeyConstraint('conversation_participants_pk', ['conversation_id', 'person_id'])
    .execute();
  await s
    .createIndex('conversation_participants_person')
    .on('conversation_participants')
    .column('person_id')
    .execute();
  await s
    .createTable('messages')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('conversation_id', 'text', (c) => c.notNull().references('conversations.id'))
    .addColumn('author_id', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('card_json', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('messages_conversation').on('messages').columns(['conversation_id', 'id']).execute();
  await s
    .createTable('artifacts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('pod_id', 'text', (c) => c.references('pods.id'))
    .addColumn('conversation_id', 'text', (c) => c.references('conversations.id'))
    .addColumn('chat_id', 'text', (c) => c.references('conversations.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    // Large text goes last: SQLite reads a row's columns in order, through any overflow pages.
    .addColumn('table_json', 'text')
    .addColumn('content', 'text')
    .execute();
  await s.createIndex('artifacts_workspace').on('artifacts').columns(['workspace_id', 'scope']).execute();
  await s.createIndex('artifacts_owner').on('artifacts').column('owner_id').execute();
  await s.createIndex('artifacts_pod').on('artifacts').column('pod_id').execute();
  await s.createIndex('artifacts_conversation').on('artifacts').column('conversation_id').execute();
  await s
    .createTable('artifact_roles')
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('role', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('artifact_roles_pk', ['artifact_id', 'person_id'])
    .execute();
  await s.createIndex('artifact_roles_person').on('artifact_roles').column('person_id').execute();
  await s
    .createTable('checkpoints')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id'))
    .addColumn('doc_version', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('label', 'text')
    .addColumn('pinned', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('author_id', 'text')
    .addColumn('instruction', 'text')
    .addColumn('kept_json', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // Large text goes last: SQLite reads a row's columns in order, through any overflow pages.
    .addColumn('content', 'text')
    .execute();
  await s.createIndex('checkpoints_artifact').on('checkpoints').columns(['artifact_id', 'id']).execute();
  await s
    .createIndex('checkpoints_artifact_version')
    .on('checkpoints')
    .columns(['artifact_id', 'doc_version'])
    .execute();
  await s
    .createIndex('checkpoints_artifact_created')
    .on('checkpoints')
    .columns(['artifact_id', 'created_at'])
    .execute();
  await s
    .createTable('threads')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id'))
    .addColumn('author_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('anchor_excerpt', 'text')
    .addColumn('anchor_start', 'integer')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('resolved_by', 'text')
    .addColumn('resolved_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('threads_artifact').on('threads').columns(['artifact_id', 'id']).execute();
  await s
    .createTable('comments')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('author_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('deleted', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('comments_thread').on('comments').columns(['thread_id', 'id']).execute();
  await s
    .createTable('agent_requests')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('thread_id', 'text', (c) => c.notNull().references('threads.id'))
    .addColumn('comment_id', 'text')
    .addColumn('agent', 'text', (c) => c.notNull())
    .addColumn('requested_by', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('agent_requests_thread').on('agent_requests').column('thread_id').execute();
  await s
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('artifact_id', 'text')
    .addColumn('thread_id', 'text')
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('read', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('notifications_person').on('notifications').columns(['person_id', 'id']).execute();
  await s
    .createTable('activity')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('tool', 'text', (c) => c.notNull())
    .addColumn('targets_json', 'text', (c) => c.notNull())
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('activity_person').on('activity').columns(['person_id', 'id']).execute();
  await s
    .createTable('tokens')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('scopes', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createTable('connectors')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('connected', 'integer', (c) => c.notNull())
    .addColumn('personal', 'integer', (c) => c.notNull())
    .addColumn('owner_id', 'text', (c) => c.references('people.id'))
    .addColumn('secret', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createIndex('connectors_workspace')
    .on('connectors')
    .columns(['workspace_id', 'provider'])
    .execute();
}
