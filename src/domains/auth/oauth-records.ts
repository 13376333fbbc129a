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
const PRUNE_EVERY_MS = 60 * 60_000;

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

export function oauthRecords(deps: Deps) {
  const { db } = deps;
  const recent = new RecentlyVerified<VerifiedAccess>();
  let prunedAt = 0;

  async function upsert(model: string, id: string, payload: Payload, expiresIn: number | undefined) {
    const now = Date.now();
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
    if (now - prunedAt > PRUNE_EVERY_MS) {
      prunedAt = now;
      await db
        .deleteFrom('oauth_records')
        .where('expires_at', '<', now - 86_400_000)
        .execute();
    }
  }

  async function find(model: string, id: string): Promise<Payload | undefined> {
    const row = await db
      .selectFrom('oauth_records')
      .select(['payload', 'expires_at', 'consumed_at', 'grant_id'])
      .where('model', '=', model)
      .where('id', '=', id)
      .executeTakeFirst();
    const now = Date.now();
    if (!row || (row.expires_at !== null && row.expires_at <= now)) return undefined;
    const payload = JSON.parse(row.payload) as Payload;
    if (row.consumed_at === null) return payload;
    if (model === 'RefreshToken' && now - row.consumed_at <= REFRESH_RETRY_S * 1000) {
      // A client that lost the answer to its refresh asks again with the same token: it gets a new
      // pair, and the pair it never received is dropped so one chain of tokens stays alive.
      await dropSuccessors(row.grant_id, payload, row.consumed_at);
      return payload;
    }
    return { ...payload, consumed: Math.floor(row.consumed_at / 1000) };
  }

  async function dropSuccessors(grantId: string | null, parent: Payload, consumedAt: number) {
    if (!grantId) return;
    const siblings = await db
      .selectFrom('oauth_records')
      .select(['id', 'payload'])
      .where('model', '=', 'RefreshToken')
      .where('grant_id', '=', grantId)
      .where('created_at', '>=', consumedAt)
      .execute();
    const rotations = typeof parent.rotations === 'number' ? parent.rotations + 1 : 1;
    const successors = siblings.filter((s) => {
      const p = JSON.parse(s.payload) as Payload;
      return p.iiat === parent.iiat && p.rotations === rotations;
    });
    for (const s of successors) await destroy('RefreshToken', s.id);
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

  return { upsert, find, findByUid, consume, destroy, revokeByGrantId, forgetGrant, verifyAccessToken };
}

export type OAuthRecords = ReturnType<typeof oauthRecords>;
