import { sql, type ExpressionBuilder, type QueryCreator, type RawBuilder } from 'kysely';
import { compiled, compiledRows } from '../storage/compiled.ts';
import { onPostgres } from '../storage/db.ts';
import type { Database, Db } from '../storage/schema.ts';

/**
 * The run queue: every write to `jobs`, one row per run that has work (its due time
 * `available_at`, its lease `locked_by`/`locked_until`, and `claims`). The automations service
 * adds and wakes jobs inside the transactions that cause them; the engine claims, renews and lets
 * go of them. Statements that must be one with another table's write (a claim that reads its run,
 * a quiet end) take their part from here.
 */

/** The rows of a due job for each new run. */
export const dueJobs = (runIds: readonly string[], now: number) =>
  runIds.map((runId) => ({
    run_id: runId,
    available_at: now,
    locked_by: null,
    locked_until: null,
    created_at: now,
    claims: 0,
  }));

/** Adds a due job for each new run, in the transaction that inserts the runs. */
export async function addJobs(trx: Db, runIds: readonly string[], now: number): Promise<void> {
  if (runIds.length <= FEW_JOBS) {
    await addFewJobs(
      trx,
      runIds.map((run_id) => ({ run_id, now })),
    );
    return;
  }
  const jobs = dueJobs(runIds, now);
  for (let i = 0; i < jobs.length; i += 1000)
    await trx
      .insertInto('jobs')
      .values(jobs.slice(i, i + 1000))
      .execute();
}

const FEW_JOBS = 16;

/** The jobs of a few runs (compiled once per number: most runs are queued one or a few at a time). */
const addFewJobs = compiledRows(['run_id', 'now'], FEW_JOBS, (db, few: { run_id: string; now: number }[]) =>
  db.insertInto('jobs').values(few.flatMap(({ run_id, now }) => dueJobs([run_id], now))),
);

/** Makes a run's job due at `at` (creating the job when the run has none). */
export async function wake(trx: Db, runId: string, at = Date.now()): Promise<void> {
  await trx
    .insertInto('jobs')
    .values({
      run_id: runId,
      available_at: at,
      locked_by: null,
      locked_until: null,
      created_at: Date.now(),
      claims: 0,
    })
    .onConflict((oc) => oc.column('run_id').doUpdateSet({ available_at: at }))
    .execute();
}

/** Removes the jobs of runs that ended: nothing takes them up again. */
export async function dropJobs(trx: Db, runIds: readonly string[]): Promise<void> {
  await trx.deleteFrom('jobs').where('run_id', 'in', runIds).execute();
}

/** Jobs due at `now` and held by nobody (`only`: that run's; `mine`: not those runs'). */
const freeAt =
  (now: number, only: string | undefined, mine: readonly string[]) =>
  (eb: ExpressionBuilder<Database, 'jobs'>) =>
    eb.and([
      eb('available_at', '<=', now),
      eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]),
      ...(only ? [eb('run_id', '=', only)] : []),
      ...(mine.length > 0 ? [eb('run_id', 'not in', mine)] : []),
    ]);

/** A worker's lease on the jobs it claims, and how it counts a claim. */
export interface Holder {
  workerId: string;
  leaseMs: number;
}

/** A claim: the holder's lease from `now`, counted (a step that ends sets the count back). */
const claimedBy = (workerId: string, lockedUntil: number) => (eb: ExpressionBuilder<Database, 'jobs'>) => ({
  locked_by: workerId,
  locked_until: lockedUntil,
  claims: eb('claims', '+', 1),
});
const claimedAt = (holder: Holder, now: number) => claimedBy(holder.workerId, now + holder.leaseMs);

/** Claims at most `limit` due jobs that `free` admits, in one statement (skipping locked rows on Postgres). */
const claimStatement = (
  db: Db,
  free: ReturnType<typeof freeAt>,
  workerId: string,
  lockedUntil: number,
  limit: number,
) =>
  db
    .updateTable('jobs')
    .set(claimedBy(workerId, lockedUntil))
    .where('run_id', 'in', (eb) => {
      const due = eb.selectFrom('jobs').select('run_id').where(free).orderBy('available_at').limit(limit);
      return onPostgres(db) ? due.forUpdate().skipLocked() : due;
    })
    .where(free)
    .returning(['run_id', 'claims', 'available_at']);

/**
 * Claims due jobs (at most `limit`, only run `only` if given, never those in `mine`) in one
 * statement, counting the claim. On Postgres, rows other workers are claiming are skipped.
 */
export async function claimDue(
  db: Db,
  holder: Holder,
  limit: number,
  only: string | undefined,
  mine: readonly string[],
): Promise<{ run_id: string; claims: number; available_at: number }[]> {
  const now = Date.now();
  if (only === undefined && mine.length === 0) {
    const claimed = await claimAnyDue(db, now, holder.workerId, now + holder.leaseMs, limit);
    return claimed.rows;
  }
  return claimStatement(db, freeAt(now, only, mine), holder.workerId, now + holder.leaseMs, limit).execute();
}

/** `claimDue`'s most common statement (any due run), compiled once. */
const claimAnyDue = compiled((db, now: number, workerId: string, lockedUntil: number, limit: number) =>
  claimStatement(db, freeAt(now, undefined, []), workerId, lockedUntil, limit),
);

/** The claim of runs `runIds` that are due and free, for a statement that also reads the runs. */
export function claimJobs(
  qb: QueryCreator<Database>,
  holder: Holder,
  runIds: readonly string[],
  now: number,
) {
  return qb
    .updateTable('jobs')
    .set(claimedAt(holder, now))
    .where(freeAt(now, undefined, []))
    .where('run_id', 'in', [...new Set(runIds)])
    .returning(['run_id', 'claims', 'available_at as job_available_at']);
}

/** Renews the holder's lease; the number of jobs renewed (0: the run is no longer held). */
export async function renewLease(db: Db, runId: string, holder: Holder, progressed = false): Promise<number> {
  const held = await db
    .updateTable('jobs')
    // A step that ended is progress: the deaths counted before it were not this run's doing.
    .set({ locked_until: Date.now() + holder.leaseMs, ...(progressed ? { claims: 0 } : {}) })
    .where('run_id', '=', runId)
    .where('locked_by', '=', holder.workerId)
    .executeTakeFirst();
  return Number(held.numUpdatedRows);
}

/** Takes a run's job now, whatever it says (creating it when the run has none). */
export async function takeJob(db: Db, runId: string, holder: Holder, now: number): Promise<void> {
  await db
    .insertInto('jobs')
    .values({
      run_id: runId,
      available_at: now,
      locked_by: holder.workerId,
      locked_until: now + holder.leaseMs,
      created_at: now,
      claims: 0,
    })
    .onConflict((oc) =>
      oc
        .column('run_id')
        .doUpdateSet({ available_at: now, locked_by: holder.workerId, locked_until: now + holder.leaseMs }),
    )
    .execute();
}

/**
 * Lets a held run go: its job is due at `at`, or removed (null) until something wakes the run. A
 * wake while the worker held it moved the job's due time from `availableAt`: then the job stays
 * due as the wake set it.
 */
export async function letGo(
  db: Db,
  runId: string,
  workerId: string,
  availableAt: number,
  at: number | null,
): Promise<void> {
  const mine = db.updateTable('jobs').where('run_id', '=', runId).where('locked_by', '=', workerId);
  if (at === null) {
    await db
      .deleteFrom('jobs')
      .where('run_id', '=', runId)
      .where('locked_by', '=', workerId)
      .where('available_at', '=', availableAt)
      .execute();
    await mine.set({ locked_by: null, locked_until: null, claims: 0 }).execute();
    return;
  }
  await mine
    .set((eb) => ({
      available_at: eb
        .case()
        .when('available_at', '=', availableAt)
        .then(at)
        .else(eb.ref('available_at'))
        .end(),
      locked_by: null,
      locked_until: null,
      claims: 0,
    }))
    .execute();
}

/** Removes the job of a run that ends, if `workerId` still holds it (the ending's lease check). */
export async function endJob(trx: Db, runId: string, workerId: string): Promise<boolean> {
  return Number((await deleteHeld(trx, runId, workerId)).numAffectedRows) === 1;
}

const deleteHeld = compiled((db, runId: string, workerId: string) =>
  db.deleteFrom('jobs').where('run_id', '=', runId).where('locked_by', '=', workerId),
);

/**
 * On Postgres, the statement (for a common table expression) that removes the jobs of the runs
 * `asked` names that `workerId` still holds, returning their run ids: the quiet end's lease check.
 */
export function endHeldJobs(workerId: string): RawBuilder<unknown> {
  return sql`delete from jobs using asked
        where jobs.run_id = asked.run_id and jobs.locked_by = ${workerId} returning jobs.run_id`;
}

/**
 * On Postgres: frees the jobs of workers whose lease ran out, and sends again a due job nobody
 * took for a while that has no graphile job still to run (`waiting` says whether one has). Rows
 * another transaction holds are skipped, not waited for (the next sweep finds them), so a sweep
 * never deadlocks with a worker claiming or ending jobs in another order.
 */
export async function sweepJobs(db: Db, now: number, staleMs: number, waiting: RawBuilder<boolean>) {
  await db
    .updateTable('jobs')
    .set({ locked_by: null, locked_until: null })
    .where('run_id', 'in', (eb) =>
      eb
        .selectFrom('jobs')
        .select('run_id')
        .where('locked_by', 'is not', null)
        .where('locked_until', '<', now)
        .forUpdate()
        .skipLocked(),
    )
    .execute();
  await db
    .updateTable('jobs')
    .set((eb) => ({ available_at: eb.ref('available_at') }))
    .where('run_id', 'in', (eb) =>
      eb
        .selectFrom('jobs')
        .select('run_id')
        .where('locked_by', 'is', null)
        .where('available_at', '<', now - staleMs)
        .where((inner) => inner.not(waiting))
        .forUpdate()
        .skipLocked(),
    )
    .execute();
}
