import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { DomainError } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import type { Db } from '../../storage/schema.ts';

type Store = Pick<Deps, 'db' | 'dialect'>;

/** Failures older than this are forgotten. */
const WINDOW_MS = 15 * 60_000;
const MAX_WAIT_MS = 15 * 60_000;
/** Rows idle this long are deleted, checked at most this often. */
const KEEP_MS = 2 * 60 * 60_000;
const PRUNE_EVERY_MS = 60 * 60_000;

/**
 * The key a throttle counts an address under: an IPv4 address as it is, an IPv6 address by its
 * /64 (one subscriber's network, which a single machine can fill with addresses at will).
 */
export function addressKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = address.includes('::')
    ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right]
    : left;
  const prefix = groups.slice(0, 4).map((g) => (parseInt(g, 16) || 0).toString(16));
  return `${prefix.join(':')}::/64`;
}

/** A key an attempt is held to: `counts` when a failure adds to it, otherwise it is only checked. */
export interface AttemptKey {
  key: string;
  counts: boolean;
}

/**
 * The keys a password check is held to: the account from this address (so guessing from one place
 * slows that place only, and the owner elsewhere still signs in), and the address across accounts
 * (spraying). A failure for an e-mail without an account counts against its own pair only: made-up
 * e-mails never slow anyone with a real password down. Keys are hashed, so any e-mail fits.
 */
export function passwordKeys(email: string, address: string, accountExists: boolean): AttemptKey[] {
  const where = addressKey(address);
  const pair = createHash('sha256').update(`${email}\n${where}`).digest('base64url').slice(0, 32);
  return [
    { key: `account-address:${pair}`, counts: true },
    { key: `address:${where}`, counts: accountExists },
  ];
}

/** Failures allowed before each further attempt must wait: an account from one address's, an address's (NATs). */
function threshold(key: string): number {
  return key.startsWith('address:') ? 20 : 5;
}

/** The wait after the n-th failure: none below the threshold, then 2, 4, 8 … seconds up to 15 minutes. */
export function waitAfter(key: string, failures: number): number {
  const over = failures - threshold(key);
  if (over < 0) return 0;
  return Math.min(MAX_WAIT_MS, 2 ** Math.min(over + 1, 30) * 1000);
}

const prunedAt = new WeakMap<object, number>();

/** Deletes rows nobody has tried for a while (at most once an hour per database). */
async function pruneIdle({ db }: Store, now: number): Promise<void> {
  if (now - (prunedAt.get(db) ?? 0) < PRUNE_EVERY_MS) return;
  prunedAt.set(db, now);
  await db
    .deleteFrom('sign_in_attempts')
    .where('last_at', '<', now - KEEP_MS)
    .where('wait_until', '<', now)
    .execute();
}

const tooMany = (what: string, waitMs: number) => {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return new DomainError(
    'rate_limited',
    `Too many ${what}; try again in ${seconds} second${seconds === 1 ? '' : 's'}.`,
    { data: { retry_after_seconds: seconds } },
  );
};

/** The key's row, made if new, held for this transaction (SQLite runs one at a time; Postgres locks it). */
async function lockedRow(trx: Db, dialect: Store['dialect'], key: string, now: number) {
  await trx
    .insertInto('sign_in_attempts')
    .values({ key, failures: 0, last_at: now, wait_until: 0 })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  let query = trx.selectFrom('sign_in_attempts').selectAll().where('key', '=', key);
  if (dialect === 'postgres') query = query.forUpdate();
  return query.executeTakeFirstOrThrow();
}

/**
 * Counts an attempt against its counting keys before the password is checked, refusing it while
 * any key must still wait; the rows are locked for the check, so parallel attempts are all counted.
 */
export async function claimAttempt(
  { db, dialect }: Store,
  keys: AttemptKey[],
  now = Date.now(),
): Promise<void> {
  await pruneIdle({ db, dialect }, now);
  await db.transaction().execute(async (trx) => {
    const rows = [];
    for (const { key } of keys) {
      rows.push(await lockedRow(trx, dialect, key, now));
    }
    const waiting = Math.max(...rows.map((r) => r.wait_until));
    if (waiting > now) throw tooMany('sign-in attempts', waiting - now);
    for (const [i, row] of rows.entries()) {
      if (!keys[i]!.counts) continue;
      const failures = (now - row.last_at > WINDOW_MS ? 0 : row.failures) + 1;
      const wait = waitAfter(row.key, failures);
      // No wait is 0, not `now`: an attempt that read the clock a moment earlier must not wait for it.
      await trx
        .updateTable('sign_in_attempts')
        .set({ failures, last_at: Math.max(now, row.last_at), wait_until: wait > 0 ? now + wait : 0 })
        .where('key', '=', row.key)
        .execute();
    }
  });
}

/**
 * A right password: the pair's failures are forgotten; the address's attempt no longer counts, but
 * a wait it is under stays (signing in to one's own account between guesses shortens nothing).
 */
export async function settleAttempt({ db }: Store, keys: AttemptKey[]): Promise<void> {
  for (const { key, counts } of keys) {
    if (!counts) continue;
    if (!key.startsWith('address:')) {
      await db.deleteFrom('sign_in_attempts').where('key', '=', key).execute();
      continue;
    }
    await db
      .updateTable('sign_in_attempts')
      .set((eb) => ({ failures: eb('failures', '-', 1) }))
      .where('key', '=', key)
      .where('failures', '>', 0)
      .execute();
  }
}

/**
 * Counts one request against `key` in a fixed window, refusing it (`rate_limited`, with the wait)
 * once `limit` were made in the window; a refused request is not counted.
 */
export async function countRequest(
  { db, dialect }: Store,
  key: string,
  limit: number,
  windowMs: number,
  what: string,
  now = Date.now(),
): Promise<void> {
  await pruneIdle({ db, dialect }, now);
  await db.transaction().execute(async (trx) => {
    const row = await lockedRow(trx, dialect, key, now);
    // `last_at` is when the window began.
    const fresh = now - row.last_at >= windowMs;
    const made = fresh ? 0 : row.failures;
    if (made >= limit) throw tooMany(what, row.last_at + windowMs - now);
    await trx
      .updateTable('sign_in_attempts')
      .set({ failures: made + 1, last_at: fresh ? now : row.last_at })
      .where('key', '=', key)
      .execute();
  });
}
