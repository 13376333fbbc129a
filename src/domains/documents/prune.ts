import { sql } from 'kysely';
import type { Db } from '../../storage/schema.ts';

const DAY_MS = 86_400_000;
const WEEK_MS = 7 * DAY_MS;

/** Every automatic checkpoint stays this many days, unless configured otherwise. */
export const KEEP_DAYS = 7;
/** After that, one a day until this many days old; after that, one a week. */
export const DAILY_DAYS = 30;
/** At most this many rows go in one pass; the housekeeping runs again for the rest. */
export const PRUNE_BATCH = 500;

export interface PruneOptions {
  /** The clock: what time it is now (tests set it). */
  now?: number;
  /** Days every automatic checkpoint is kept (TANDEM_VERSIONS_KEEP_DAYS). */
  keepDays?: number;
  /** Most rows removed in this pass. */
  limit?: number;
}

/**
 * Prunes automatic checkpoints (agent writes and people's stored edits) as the spec says: all
 * of them for `keepDays`, then the newest of each document's day until 30 days, then the newest
 * of each week. `named` and `restore` rows, and pinned ones, are never pruned. Removes at most
 * `limit` rows and says how many it removed (as many as the limit: there may be more).
 */
export async function pruneVersions(db: Db, options: PruneOptions = {}): Promise<number> {
  const now = options.now ?? Date.now();
  const keepDays = options.keepDays ?? KEEP_DAYS;
  const limit = options.limit ?? PRUNE_BATCH;
  const keepFrom = now - keepDays * DAY_MS;
  const dailyFrom = now - Math.max(DAILY_DAYS, keepDays) * DAY_MS;
  // Rows of one document in one bucket (a UTC day while younger than the daily window, a week
  // after it; weeks numbered below zero so they never meet a day's number): all but the newest go.
  const result = await sql<{ id: string }>`
    delete from checkpoints where id in (
      select id from (
        select id, row_number() over (
          partition by artifact_id,
            case when created_at >= ${dailyFrom} then created_at / ${sql.lit(DAY_MS)}
                 else -1 - created_at / ${sql.lit(WEEK_MS)} end
          order by created_at desc, id desc
        ) as n
        from checkpoints
        where created_at < ${keepFrom} and pinned = 0 and reason in ('agent_edit', 'edit')
      ) ranked
      where n > 1
      limit ${limit}
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
