import { DomainError, invalid } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import type { Db } from '../../storage/schema.ts';
import { checkPassword, hashPassword, verifyPassword } from './passwords.ts';
import { claimAttempt, passwordKeys, settleAttempt } from './throttle.ts';

/** The one sentence for a wrong e-mail or password: it never says which was wrong. */
export const WRONG_CREDENTIALS = 'That e-mail address and password do not match an account.';

/** An account is its e-mail address, compared without regard to case. */
export const accountKey = (email: string) => email.trim().toLowerCase();

/** One workspace an account belongs to, as the person of that workspace. */
export interface Membership {
  personId: string;
  workspaceId: string;
  workspace: string;
  name: string;
  email: string;
}

/** Every workspace the account belongs to, by workspace name. */
export async function membershipsOf(db: Db, email: string): Promise<Membership[]> {
  const rows = await db
    .selectFrom('people')
    .innerJoin('workspaces', 'workspaces.id', 'people.workspace_id')
    .select([
      'people.id as personId',
      'people.workspace_id as workspaceId',
      'workspaces.name as workspace',
      'people.name',
      'people.email',
    ])
    .where((eb) => eb(eb.fn('lower', ['people.email']), '=', accountKey(email)))
    .orderBy('workspaces.name')
    .execute();
  return rows;
}

/** Stores a password hash for an account, creating the account row on first use. */
export async function storePasswordHash(db: Db, email: string, hash: string, now = Date.now()) {
  await db
    .insertInto('accounts')
    .values({ email: accountKey(email), password_hash: hash, password_changed_at: now, created_at: now })
    .onConflict((oc) => oc.column('email').doUpdateSet({ password_hash: hash, password_changed_at: now }))
    .execute();
}

export function accountsService(deps: Deps) {
  const { db } = deps;

  /** Sets the password of a person's account (every workspace they sign in to). */
  async function setPassword(email: string, password: string): Promise<void> {
    const hash = await hashPassword(password);
    await db.transaction().execute(async (trx) => {
      if ((await membershipsOf(trx, email)).length === 0) throw invalid(`no person with e-mail ${email}`);
      await storePasswordHash(trx, email, hash);
    });
  }

  /** The stored hash of an account's password; null when there is no such account or no password. */
  async function storedHash(key: string): Promise<string | null> {
    const account = await db
      .selectFrom('accounts')
      .select('password_hash')
      .where('email', '=', key)
      .executeTakeFirst();
    return account?.password_hash ?? null;
  }

  /**
   * Checks an e-mail and password, slowed per account and address and per address (see
   * `passwordKeys`): each attempt counts as a failure until the password proves right, so parallel
   * guesses are counted too. Returns the account's workspaces; a wrong e-mail, a wrong password
   * and an account without a password all get the same sentence and take the same time.
   */
  async function signIn(email: string, password: string, address: string): Promise<Membership[]> {
    const key = accountKey(email);
    const hash = await storedHash(key);
    const keys = passwordKeys(key, address, hash !== null);
    await claimAttempt(deps, keys);
    const matches = await verifyPassword(password, hash);
    const memberships = matches ? await membershipsOf(db, key) : [];
    if (memberships.length === 0) throw new DomainError('unauthenticated', WRONG_CREDENTIALS);
    await settleAttempt(deps, keys);
    return memberships;
  }

  /** Changes a signed-in person's password after checking the current one. */
  async function changePassword(email: string, current: string, next: string, address: string) {
    checkPassword(next);
    const key = accountKey(email);
    const hash = await storedHash(key);
    const keys = passwordKeys(key, address, hash !== null);
    await claimAttempt(deps, keys);
    if (!(await verifyPassword(current, hash))) {
      throw new DomainError('forbidden', 'The current password is not right.');
    }
    await settleAttempt(deps, keys);
    await storePasswordHash(db, key, await hashPassword(next));
  }

  /** The person an actor stands for, and every workspace their account belongs to. */
  async function whoIs(personId: string): Promise<{ me: Membership; workspaces: Membership[] }> {
    const person = await db
      .selectFrom('people')
      .select('email')
      .where('id', '=', personId)
      .executeTakeFirstOrThrow();
    const workspaces = await membershipsOf(db, person.email);
    return { me: workspaces.find((m) => m.personId === personId)!, workspaces };
  }

  return {
    setPassword,
    signIn,
    changePassword,
    whoIs,
    memberships: (email: string) => membershipsOf(db, email),
  };
}

export type AccountsService = ReturnType<typeof accountsService>;
