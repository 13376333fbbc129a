import type { CredentialEnds } from './ended.ts';
import type { Deps } from '../deps.ts';
import { RecentlyVerified } from './recent.ts';

/**
 * The authorization server's records (clients, grants, codes, tokens, interactions) in one table,
 * keyed by kind and id. The provider reads and writes them through its adapter; the domain reads
 * them to know who an access token stands for and which apps a person connected.
 */
export type Payload = Record<string, unknown> & {
  grantId?: string;
  uid?: string;
  accountId?: string;
  clientId?: string;
  consumed?: number | boolean;
};

/** A refresh token presented again within this long of its first use is a retry, not theft. */
export const REFRESH_RETRY_S = 60;
/** A client registered (RFC 7591) that no person has authorized yet is forgotten after this long. */
export const UNAUTHORIZED_CLIENT_S = 24 * 3600;
const PRUNE_EVERY_MS = 60 * 60_000;

/** A token response as the token endpoint sends it. */
export type TokenAnswer = Record<string, unknown> & { access_token?: unknown; refresh_token?: unknown };

interface VerifiedAccess {
  credentialId: string;
  grantId: string;
  clientId: string;
  personId: string;
  workspaceId: string;
  audience: string | undefined;
  scopes: string[];
  expiresAt: number;
}

export function oauthRecords(deps: Deps, ends?: CredentialEnds) {
  const { db } = deps;
  const recent = new RecentlyVerified<VerifiedAccess>();
  let prunedAt = 0;

  async function upsert(model: string, id: string, payload: Payload, expiresIn: number | undefined) {
    const now = Date.now();
    // A registered client lasts until a person authorizes it, or a day.
    if (model === 'Client' && expiresIn === undefined) expiresIn = UNAUTHORIZED_CLIENT_S;
    const row = {
      grant_id: payload.grantId ?? null,
      uid: payload.uid ?? null,
      account_id: payload.accountId ?? null,
      client_id: model === 'Client' ? id : (payload.clientId ?? null),
      expires_at: expiresIn ? now + expiresIn * 1000 : null,
      payload: JSON.stringify(payload),
    };
    await db
      .insertInto('oauth_records')
      .values({ model, id, ...row, consumed_at: null, created_at: now, label: null })
      .onConflict((oc) => oc.columns(['model', 'id']).doUpdateSet(row))
      .execute();
    if (model === 'Grant' && payload.clientId) {
      // A person authorized the client: it stays registered.
      await db
        .updateTable('oauth_records')
        .set({ expires_at: null })
        .where('model', '=', 'Client')
        .where('id', '=', payload.clientId)
        .where('expires_at', 'is not', null)
        .execute();
    }
    if (now - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = now;
      await prune(now);
    }
  }

  /**
   * Deletes what has expired: registered clients nobody authorized at once, other records a day
   * after they expired (a consumed refresh token is kept that long to recognise its reuse).
   */
  async function prune(now = Date.now()) {
    await db
      .deleteFrom('oauth_records')
      .where((eb) =>
        eb.or([
          eb.and([eb('model', '=', 'Client'), eb('expires_at', '<=', now)]),
          eb('expires_at', '<', now - 86_400_000),
        ]),
      )
      .execute();
  }

  async function find(model: string, id: string): Promise<Payload | undefined> {
    const row = await db
      .selectFrom('oauth_records')
      .select(['payload', 'expires_at', 'consumed_at', 'answer'])
      .where('model', '=', model)
      .where('id', '=', id)
      .executeTakeFirst();
    const now = Date.now();
    if (!row || (row.expires_at !== null && row.expires_at <= now)) return undefined;
    const payload = JSON.parse(row.payload) as Payload;
    if (row.consumed_at === null) return payload;
    if (
      model === 'RefreshToken' &&
      now - row.consumed_at <= REFRESH_RETRY_S * 1000 &&
      (await isRetry(row.answer))
    ) {
      // A client that lost the answer to its refresh asks again with the same token: the exchange
      // goes on, and `settleRefresh` gives it the answer it lost instead of a new pair.
      return payload;
    }
    return { ...payload, consumed: Math.floor(row.consumed_at / 1000) };
  }

  /**
   * Whether a rotated refresh token presented again is a retry: the pair it was exchanged for was
   * never used (its refresh token is still unused), or its first exchange is still under way.
   * Anything else (the new refresh token was used, or revoked) is reuse, and revokes the grant.
   */
  async function isRetry(answer: string | null): Promise<boolean> {
    if (answer === null) return true;
    const next = (JSON.parse(answer) as { body: TokenAnswer }).body.refresh_token;
    if (typeof next !== 'string') return false;
    const successor = await db
      .selectFrom('oauth_records')
      .select(['consumed_at', 'expires_at'])
      .where('model', '=', 'RefreshToken')
      .where('id', '=', next)
      .executeTakeFirst();
    return (
      successor !== undefined &&
      successor.consumed_at === null &&
      (successor.expires_at === null || successor.expires_at > Date.now())
    );
  }

  /**
   * After a refresh token was exchanged: the first answer is recorded with it, and every later
   * exchange of it (a retry, see `find`) is given that same answer, the pair made for the retry
   * deleted, so one chain of tokens stays alive. Returns the answer to send.
   */
  async function settleRefresh(presented: string, made: TokenAnswer): Promise<TokenAnswer> {
    const now = Date.now();
    const recorded = await db
      .updateTable('oauth_records')
      .set({ answer: JSON.stringify({ body: made, at: now }) })
      .where('model', '=', 'RefreshToken')
      .where('id', '=', presented)
      .where('answer', 'is', null)
      .executeTakeFirst();
    if (Number(recorded.numUpdatedRows) === 1) return made;
    const row = await db
      .selectFrom('oauth_records')
      .select('answer')
      .where('model', '=', 'RefreshToken')
      .where('id', '=', presented)
      .executeTakeFirst();
    if (!row?.answer) return made;
    const first = JSON.parse(row.answer) as { body: TokenAnswer; at: number };
    if (typeof made.refresh_token === 'string' && made.refresh_token !== first.body.refresh_token)
      await destroy('RefreshToken', made.refresh_token);
    if (typeof made.access_token === 'string' && made.access_token !== first.body.access_token)
      await destroy('AccessToken', made.access_token);
    const expiresIn = typeof first.body.expires_in === 'number' ? first.body.expires_in : undefined;
    return {
      ...first.body,
      ...(expiresIn === undefined
        ? {}
        : { expires_in: Math.max(0, expiresIn - Math.floor((now - first.at) / 1000)) }),
    };
  }

  async function findByUid(model: string, uid: string): Promise<Payload | undefined> {
    const row = await db
      .selectFrom('oauth_records')
      .select('id')
      .where('model', '=', model)
      .where('uid', '=', uid)
      .executeTakeFirst();
    return row ? find(model, row.id) : undefined;
  }

  async function consume(model: string, id: string) {
    await db
      .updateTable('oauth_records')
      .set({ consumed_at: Date.now() })
      .where('model', '=', model)
      .where('id', '=', id)
      .where('consumed_at', 'is', null)
      .execute();
  }

  async function destroy(model: string, id: string) {
    await db.deleteFrom('oauth_records').where('model', '=', model).where('id', '=', id).execute();
    recent.forget(id);
  }

  /** Everything issued under a grant goes with it (the grant itself is removed by its own id). */
  async function revokeByGrantId(grantId: string) {
    await db.deleteFrom('oauth_records').where('grant_id', '=', grantId).execute();
    forgetGrant(grantId);
  }

  /** This process stops trusting the grant's tokens at once (other processes within TRUST_MS). */
  function forgetGrant(grantId: string) {
    recent.forget((v) => v.grantId === grantId);
    ends?.tell();
  }

  /**
   * Who an opaque access token stands for: null when unknown, expired, or its grant was revoked.
   * The audience is returned for the caller to check against the resource it guards.
   */
  async function verifyAccessToken(token: string): Promise<VerifiedAccess | null> {
    const now = Date.now();
    const cached = recent.get(token, now);
    if (cached) return cached.expiresAt > now ? cached : null;
    const payload = await find('AccessToken', token);
    if (!payload?.grantId || !payload.accountId || !payload.clientId) return null;
    if (!(await find('Grant', payload.grantId))) return null;
    const exp = typeof payload.exp === 'number' ? payload.exp * 1000 : 0;
    if (exp <= now) return null;
    const person = await db
      .selectFrom('people')
      .select('workspace_id')
      .where('id', '=', payload.accountId)
      .executeTakeFirst();
    if (!person) return null;
    const verified: VerifiedAccess = {
      credentialId: token,
      grantId: payload.grantId,
      clientId: payload.clientId,
      personId: payload.accountId,
      workspaceId: person.workspace_id,
      audience: typeof payload.aud === 'string' ? payload.aud : undefined,
      scopes: typeof payload.scope === 'string' ? payload.scope.split(' ').filter(Boolean) : [],
      expiresAt: exp,
    };
    recent.set(token, verified, now);
    return verified;
  }

  return {
    upsert,
    find,
    findByUid,
    consume,
    destroy,
    revokeByGrantId,
    forgetGrant,
    verifyAccessToken,
    settleRefresh,
    prune,
  };
}

export type OAuthRecords = ReturnType<typeof oauthRecords>;
