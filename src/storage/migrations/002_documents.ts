import type { Kysely } from 'kysely';
import type { Dialect } from '../db.ts';

export async function up(db: Kysely<unknown>, dialect: Dialect): Promise<void> {
  const s = db.schema;
  // The Yjs state of each document, base64; the markdown projection stays in artifacts.content.
  await s
    .createTable('doc_states')
    .addColumn('artifact_id', 'text', (c) => c.primaryKey().references('artifacts.id'))
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  // Changes since the snapshot, in the order they were stored; folded into the snapshot now and then.
  await s
    .createTable('doc_updates')
    .addColumn('seq', dialect === 'postgres' ? 'bigserial' : 'integer', (c) =>
      dialect === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
    )
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id'))
    .addColumn('update', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await s.createIndex('doc_updates_artifact').on('doc_updates').columns(['artifact_id', 'seq']).execute();
  await s
    .createTable('doc_leases')
    .addColumn('artifact_id', 'text', (c) => c.primaryKey())
    .addColumn('holder', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await s
    .createTable('idempotency_keys')
    .addColumn('person_id', 'text', (c) => c.notNull().references('people.id'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('artifact_id', 'text', (c) => c.notNull().references('artifacts.id'))
    .addColumn('content_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['person_id', 'key'])
    .execute();
  await s.alterTable('checkpoints').addColumn('blocks_json', 'text').execute();
  // The version an agent write produced and its block list, so drift can be counted from it too.
  await s.alterTable('checkpoints').addColumn('result_version', 'integer').execute();
  await s.alterTable('checkpoints').addColumn('result_blocks_json', 'text').execute();
  await s
    .createIndex('checkpoints_artifact_result')
    .on('checkpoints')
    .columns(['artifact_id', 'result_version'])
    .execute();
  // Document anchors: Yjs relative positions of the quoted passage's ends, base64.
  await s.alterTable('threads').addColumn('anchor_rel_start', 'text').execute();
  await s.alterTable('threads').addColumn('anchor_rel_end', 'text').execute();
  await s
    .createTable('settings')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
