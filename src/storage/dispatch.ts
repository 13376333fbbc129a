import { log } from '../observability/log.ts';
import { Logger, runMigrations } from 'graphile-worker';
import type pg from 'pg';
import { sql, type Kysely } from 'kysely';
import type { Database } from './schema.ts';

/**
 * On Postgres, runs reach workers through graphile-worker (see engine/dispatch-pg.ts). Its tables
 * live in their own schema, installed with Tandem's migrations, together with the trigger that adds
 * its job whenever a run's `jobs` row becomes due for someone to take.
 */

/** graphile-worker's schema for a Tandem schema (tests give each suite its own). */
export const dispatchSchema = (schema: string | undefined) => (schema ? `${schema}_gw` : 'graphile_worker');

export const dispatchLogger = new Logger(() => (level, message) => {
  if (level === 'error') log.error({ component: 'dispatch' }, message);
});

/** Installs graphile-worker's tables and the trigger that turns `jobs` changes into its jobs. */
export async function installDispatch(pool: pg.Pool, db: Kysely<Database>, schema: string | undefined) {
  const gw = dispatchSchema(schema);
  const exists = await pool.query('select 1 from pg_namespace where nspname = $1', [gw]);
  await runMigrations({
    pgPool: exists.rowCount === 0 ? withoutMigrationNotices(pool) : pool,
    schema: gw,
    logger: dispatchLogger,
  });
  const fn = sql.id(`${schema ?? 'public'}`, 'tandem_dispatch_jobs');
  await sql`
    create or replace function ${fn}() returns trigger language plpgsql as $$
    begin
      if exists (select 1 from new_jobs where locked_by is null) then
        perform ${sql.raw(`"${gw}"`)}.add_jobs(array(
          select row('advance', json_build_object('run_id', n.run_id), null,
                     to_timestamp(n.available_at / 1000.0), 1, n.run_id,
                     -- A run that has started (woken by a decision, a delay's end, a child run)
                     -- goes before runs still to start, so a backlog does not hold it up.
                     case when r.started_at is null then 0 else -1 end, null
                 )::${sql.raw(`"${gw}"`)}.job_spec
          from new_jobs n left join runs r on r.id = n.run_id where n.locked_by is null));
      end if;
      return null;
    end $$`.execute(db);
  for (const op of ['insert', 'update'] as const) {
    const name = sql.id(`jobs_dispatch_${op}`);
    await sql`drop trigger if exists ${name} on jobs`.execute(db);
    await sql`create trigger ${name} after ${sql.raw(op)} on jobs referencing new table as new_jobs
              for each statement execute function ${fn}()`.execute(db);
  }
}

/**
 * graphile-worker announces each migration it applies on the channel `worker:migrate`, and a
 * running worker that hears of a breaking one stops and sets the process's exit code. Channels
 * are per database, not per schema, so installing a fresh schema's tables (one no worker can be
 * using yet) would stop the workers of every other schema in the database. For a fresh install
 * the announcement is left out; an upgrade of an existing schema still announces itself.
 */
function withoutMigrationNotices(pool: pg.Pool): pg.Pool {
  const quiet = (client: pg.PoolClient) =>
    new Proxy(client, {
      get(target, prop) {
        const value: unknown = Reflect.get(target, prop, target);
        if (prop !== 'query' || typeof value !== 'function') {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return (text: unknown, values?: unknown[], ...rest: unknown[]) =>
          typeof text === 'string' && /pg_notify/.test(text) && values?.[0] === 'worker:migrate'
            ? Promise.resolve({ rows: [], rowCount: 0 })
            : (value as (...args: unknown[]) => unknown).call(target, text, values, ...rest);
      },
    });
  return new Proxy(pool, {
    get(target, prop) {
      if (prop === 'connect') return async () => quiet(await target.connect());
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
