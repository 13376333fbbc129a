import { DomainError } from '../../errors.ts';
import type { Deps } from '../deps.ts';

type Store = Pick<Deps, 'db' | 'dialect'>;

/** Failures older than this are forgotten. */
const WINDOW_MS = 15 * 60_000;
const MAX_WAIT_MS = 15 * 60_000;

/** Failures allowed before each further attempt must wait: an account's, and an address's (shared by NATs). */
function threshold(key: string): number {
  return key.startsWith('address:') ? 20 : 5;
}

/** The wait after the n-th failure: none below the threshold, then 2, 4, 8 … seconds up to 15 minutes. */
export function waitAfter(key: string, failures: number): number {
  const over = failures - threshold(key);
  if (over < 0) return 0;
  return Math.min(MAX_WAIT_MS, 2 ** Math.min(over + 1, 30) * 1000);
}

/**
 * Counts an attempt against every key before the password is checked, refusing it while any key
 * must still wait; the rows are locked for the check, so parallel attempts are all counted.
 */
export async function claimAttempt({ db, dialect }: Store, keys: string[], now = Date.now()): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const rows = [];
    for (const key of keys) {
      await trx
        .insertInto('sign_in_attempts')
        .values({ key, failures: 0, last_at: now, wait_until: 0 })
        .onConflict((oc) => oc.column('key').doNothing())
        .execute();
      let query = trx.selectFrom('sign_in_attempts').selectAll().where('key', '=', key);
      // SQLite runs one transaction at a time; Postgres needs the row lock.
      if (dialect === 'postgres') query = query.forUpdate();
      rows.push(await query.executeTakeFirstOrThrow());
    }
    const waiting = Math.max(...rows.map((r) => r.wait_until));
    if (waiting > now) {
      const seconds = Math.ceil((waiting - now) / 1000);
      throw new DomainError(
        'rate_limited',
        `Too many sign-in attempts; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
        { data: { retry_after_seconds: seconds } },
      );
    }
    for (const row of rows) {
      const failures = (now - row.last_at > WINDOW_MS ? 0 : row.failures) + 1;
      await trx
        .updateTable('sign_in_attempts')
        .set({ failures, last_at: now, wait_until: now + waitAfter(row.key, failures) })
        .where('key', '=', row.key)
        .execute();
    }
  });
}

/** A right password: the account's failures are forgotten; the address's attempt no longer counts. */
export async function settleAttempt({ db }: Store, keys: string[], now = Date.now()): Promise<void> {
  for (const key of keys) {
    if (key.startsWith('account:')) {
      await db.deleteFrom('sign_in_attempts').where('key', '=', key).execute();
      continue;
    }
    await db
      .updateTable('sign_in_attempts')
      .set((eb) => ({ failures: eb('failures', '-', 1), wait_until: now }))
      .where('key', '=', key)
      .where('failures', '>', 0)
      .execute();
  }
}
