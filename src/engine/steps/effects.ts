import type { Transaction } from 'kysely';
import type { Db, Database } from '../../storage/schema.ts';

/**
 * The one writer of `run_effects`: what a write did, stored in the write's own transaction (or,
 * for a call to an outside service, `started` before it), so a resumed step never writes twice.
 */
export const effectKey = (runId: string, nodeKey: string) => `${runId}:${nodeKey}`;

export async function effectOf(db: Db, key: string) {
  const row = await db.selectFrom('run_effects').selectAll().where('key', '=', key).executeTakeFirst();
  if (!row) return undefined;
  return {
    state: row.state,
    result: row.result_json === null ? undefined : (JSON.parse(row.result_json) as unknown),
  };
}

export async function effectDone(
  trx: Transaction<Database> | Db,
  runId: string,
  key: string,
  result: unknown,
) {
  await trx
    .insertInto('run_effects')
    .values({
      key,
      run_id: runId,
      state: 'done',
      created_at: Date.now(),
      result_json: JSON.stringify(result),
    })
    .onConflict((oc) => oc.column('key').doUpdateSet({ state: 'done', result_json: JSON.stringify(result) }))
    .execute();
}

/** Forgets a call out that was refused before anything happened on the other side. */
export async function effectUndone(db: Db, key: string) {
  await db.deleteFrom('run_effects').where('key', '=', key).where('state', '=', 'started').execute();
}

export async function effectStarted(db: Db, runId: string, key: string) {
  await db
    .insertInto('run_effects')
    .values({ key, run_id: runId, state: 'started', created_at: Date.now(), result_json: null })
    .execute();
}
