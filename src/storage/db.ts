import { log } from '../observability/log.ts';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { openSqlite } from './sqlite-adapter.ts';
import { PreparedStatements, preparingClient } from './prepared.ts';
import type { Database } from './schema.ts';
import { dispatchSchema, installDispatch } from './dispatch.ts';
import * as m001 from './migrations/001_foundation.ts';
import * as m002 from './migrations/002_documents.ts';
import * as m004 from './migrations/004_automations.ts';
import * as m005 from './migrations/005_runs.ts';
import * as m006 from './migrations/006_bounded_runs.ts';
import * as m007 from './migrations/007_agent_requests.ts';
import * as m008 from './migrations/008_identity.ts';
import * as m009 from './migrations/009_connectors.ts';
import * as m010 from './migrations/010_version_made_by.ts';
import * as m011 from './migrations/011_reruns.ts';
import * as m012 from './migrations/012_delivery_bodies.ts';
import * as m013 from './migrations/013_collab_ticket_uses.ts';
import * as m014 from './migrations/014_notification_links.ts';
import * as m015 from './migrations/015_credential_bounds.ts';
import * as m017 from './migrations/017_version_changes.ts';
import * as m018 from './migrations/018_names_and_uses.ts';
import * as m019 from './migrations/019_draft_origin.ts';
import * as m022 from './migrations/022_sharing.ts';
import * as m023 from './migrations/023_workspace_models.ts';
import * as m024 from './migrations/024_draft_runs.ts';
import * as m025 from './migrations/025_describe_requests.ts';
import * as m026 from './migrations/026_doc_state_freshness.ts';

export type Dialect = 'sqlite' | 'postgres';

/** Whether a handle (or a transaction on it) speaks to Postgres, for a statement only Postgres can make one. */
export const onPostgres = (db: Pick<Kysely<Database>, 'getExecutor'>): boolean =>
  db.getExecutor().adapter instanceof PostgresAdapter;

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Postgres only: the schema Tandem's tables live in, when not the default. */
  schema?: string | undefined;
  /** Postgres only: the connection pool (graphile-worker shares it). */
  pool?: pg.Pool | undefined;
  close(): Promise<void>;
}

export interface StorageOptions {
  /** `postgres://…` selects Postgres; otherwise `sqlitePath` is used. */
  databaseUrl?: string | undefined;
  sqlitePath?: string | undefined;
  /** Postgres only: the schema to work in (created if missing). Tests use one per suite. */
  pgSchema?: string | undefined;
  poolSize?: number | undefined;
}

// int8 and numeric come back from pg as strings; every such column here holds milliseconds or counts.
pg.types.setTypeParser(20, (v) => Number(v));
pg.types.setTypeParser(1700, (v) => Number(v));

interface Migration {
  up(db: Kysely<unknown>, dialect: Dialect): Promise<void>;
}

/** Numbered migrations, applied in name order; a name, once applied, never changes meaning. */
const migrations: [string, Migration][] = [
  ['001_foundation', m001],
  ['002_documents', m002],
  ['004_automations', m004],
  ['005_runs', m005],
  ['006_bounded_runs', m006],
  ['007_agent_requests', m007],
  ['008_identity', m008],
  ['009_connectors', m009],
  ['010_version_made_by', m010],
  ['011_reruns', m011],
  ['012_delivery_bodies', m012],
  ['013_collab_ticket_uses', m013],
  ['014_notification_links', m014],
  ['015_credential_bounds', m015],
  ['017_version_changes', m017],
  ['018_names_and_uses', m018],
  ['019_draft_origin', m019],
  ['022_sharing', m022],
  ['023_workspace_models', m023],
  ['024_draft_runs', m024],
  ['025_describe_requests', m025],
  ['026_doc_state_freshness', m026],
];

export async function openStorage(options: StorageOptions): Promise<Storage> {
  if (options.databaseUrl && /^postgres(ql)?:\/\//.test(options.databaseUrl)) {
    const schema = options.pgSchema;
    if (schema && !/^[a-z_][a-z0-9_]*$/.test(schema))
      throw new Error(`invalid Postgres schema name: ${schema}`);
    if (schema) {
      const admin = new pg.Client({ connectionString: options.databaseUrl });
      await admin.connect();
      try {
        await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      } finally {
        await admin.end();
      }
    }
    const pool = new pg.Pool({
      Client: preparingClient(new PreparedStatements()),
      connectionString: options.databaseUrl,
      max: options.poolSize ?? 10,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // An idle connection the server dropped is replaced on next use; it must not end the process.
    // (Once closing, a connection the server ends first is what was asked for.)
    let closing = false;
    const failed = (what: string) => (error: Error) => closing || log.warn({ err: error }, what);
    pool.on('error', failed('a Postgres connection failed while idle'));
    pool.on('connect', (client) => client.on('error', failed('a Postgres connection failed')));
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    const close = () => ((closing = true), db.destroy());
    return { db, dialect: 'postgres', schema, pool, close };
  }
  const path = options.sqlitePath ?? ':memory:';
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: openSqlite(path) }) });
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/**
 * Applies every pending migration in one transaction, recording each in `tandem_migrations`.
 * On Postgres an advisory lock makes concurrent starts wait for each other instead of racing.
 */
export async function migrate(storage: Storage): Promise<string[]> {
  const ran = await storage.db.transaction().execute(async (trx) => {
    if (storage.dialect === 'postgres') {
      await sql`select pg_advisory_xact_lock(hashtext(${`tandem_migrations:${storage.schema ?? 'public'}`}))`.execute(
        trx,
      );
    }
    await sql`create table if not exists tandem_migrations (name text primary key, applied_at bigint not null)`.execute(
      trx,
    );
    const done = await sql<{ name: string }>`select name from tandem_migrations`.execute(trx);
    const applied = new Set(done.rows.map((r) => r.name));
    const ran: string[] = [];
    for (const [name, migration] of migrations) {
      if (applied.has(name)) continue;
      await migration.up(trx as unknown as Kysely<unknown>, storage.dialect);
      await sql`insert into tandem_migrations (name, applied_at) values (${name}, ${Date.now()})`.execute(
        trx,
      );
      ran.push(name);
    }
    if (storage.dialect === 'postgres' && storage.pool)
      await installDispatch(storage.pool, trx, storage.schema);
    return ran;
  });
  return ran;
}

export async function dropPgSchema(databaseUrl: string, schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.query(`DROP SCHEMA IF EXISTS ${dispatchSchema(schema)} CASCADE`);
  } finally {
    await client.end();
  }
}

export { sql };
