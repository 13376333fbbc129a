import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { dropPgSchema } from '../../src/storage/db.ts';
import { openServices, type ServiceOptions, type Services } from '../../src/services.ts';

export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export interface TestDatabase {
  name: 'sqlite' | 'postgres';
  open(options?: ServiceOptions): Promise<Services & { dispose(): Promise<void> }>;
}

let pgChecked: Promise<void> | undefined;

/** Postgres must be up for the suite; say how to start it rather than skipping quietly. */
function checkPostgres(): Promise<void> {
  pgChecked ??= (async () => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
    try {
      await client.connect();
      await client.end();
    } catch (error) {
      throw new Error(
        `Postgres is not reachable at ${PG_URL} (${(error as Error).message}). Start it, set TEST_DATABASE_URL, or run with TANDEM_TEST_POSTGRES=skip.`,
        { cause: error },
      );
    }
  })();
  return pgChecked;
}

const sqlite: TestDatabase = {
  name: 'sqlite',
  async open(options = {}) {
    const services = await openServices({ ...options, sqlitePath: ':memory:' });
    return Object.assign(services, { dispose: () => services.close() });
  },
};

const postgres: TestDatabase = {
  name: 'postgres',
  async open(options = {}) {
    await checkPostgres();
    const schema = `t_${randomBytes(6).toString('hex')}`;
    const services = await openServices({
      ...options,
      databaseUrl: PG_URL,
      pgSchema: schema,
      poolSize: 20,
    }).catch(async (error: unknown) => {
      await dropPgSchema(PG_URL, schema);
      throw error;
    });
    return Object.assign(services, {
      async dispose() {
        await services.close();
        await dropPgSchema(PG_URL, schema);
      },
    });
  },
};

/** Every database a storage-backed test runs on. */
export const DATABASES: TestDatabase[] =
  process.env.TANDEM_TEST_POSTGRES === 'skip' ? [sqlite] : [sqlite, postgres];
