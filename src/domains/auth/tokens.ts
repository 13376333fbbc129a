import { createHash, randomBytes } from 'node:crypto';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { CredentialEnds } from './ended.ts';
import type { Deps } from '../deps.ts';
import { parseScopes, type Actor, type Scope } from '../workspace/actor.ts';
import { RecentlyVerified } from './recent.ts';

/** A personal access token is random; only its SHA-256 is stored, so a database leak reveals none. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface VerifiedToken {
  actor: Actor;
  expiresAt: number | null;
  tokenId: string;
  credentialId: string;
}

/** A personal access token as its owner sees it listed (never the token itself). */
export interface TokenRow {
  token_id: string;
  /** The name given when it was made in Settings; null for tokens made on the command line. */
  name: string | null;
  scopes: Scope[];
  created_at: number;
  expires_at: number | null;
  /** When it was last used (to within a minute), or null if never since it was named. */
  last_used_at: number | null;
}

/** How stale a token's `last_used_at` may get before a use moves it (one write a minute at most). */
const LAST_USED_EVERY_MS = 60_000;

/** A token's name as given in Settings: 1–100 characters. */
export function tokenName(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw invalid('name is required: say what the token is for, e.g. "Laptop scripts"');
  const name = value.trim();
  if (name.length > 100) throw invalid('name must be at most 100 characters');
  return name;
}

export function parseTtl(ttl: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(ttl.trim());
  if (!match) throw invalid(`--ttl "${ttl}" is not a duration; use a number with s, m, h, d or w, e.g. 30d`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  const seconds = Number(match[1]) * unit;
  if (seconds <= 0) throw invalid('--ttl must be longer than zero');
  return seconds * 1000;
}

export const tokenNotFound = () => new DomainError('not_found', 'Token not found');

export function tokensService(deps: Deps, ends?: CredentialEnds) {
  const { db } = deps;
  // Every MCP request carries its token; remembering recent verifications saves a hash and a query.
  const recent = new RecentlyVerified<VerifiedToken>();

  async function create(
    personId: string,
    workspaceId: string,
    scopes: Scope[],
    ttlMs: number | null,
    name: string | null = null,
  ) {
    const token = `tdm_${randomBytes(32).toString('base64url')}`;
    const now = Date.now();
    const expiresAt = ttlMs === null ? null : now + ttlMs;
    const id = newId('tok');
    await db
      .insertInto('tokens')
      .values({
        id,
        workspace_id: workspaceId,
        person_id: personId,
        hash: hashToken(token),
        scopes: scopes.join(' '),
        expires_at: expiresAt,
        created_at: now,
        name,
        last_used_at: null,
      })
      .execute();
    return { token, expiresAt, tokenId: id };
  }

  /** The actor a bearer token stands for, or null when it is unknown, revoked or expired. */
  async function verify(token: string): Promise<VerifiedToken | null> {
    if (!token.startsWith('tdm_')) return null;
    const now = Date.now();
    const cached = recent.get(token, now);
    if (cached) return cached.expiresAt === null || cached.expiresAt > now ? cached : null;
    const row = await db
      .selectFrom('tokens')
      .selectAll()
      .where('hash', '=', hashToken(token))
      .executeTakeFirst();
    if (!row || (row.expires_at !== null && row.expires_at <= now)) return null;
    // Settings shows when each token was last used; a minute's precision costs one write a minute.
    if (row.last_used_at === null || row.last_used_at < now - LAST_USED_EVERY_MS) {
      await db
        .updateTable('tokens')
        .set({ last_used_at: now })
        .where('id', '=', row.id)
        .where((eb) =>
          eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - LAST_USED_EVERY_MS)]),
        )
        .execute();
    }
    const result: VerifiedToken = {
      actor: {
        personId: row.person_id,
        workspaceId: row.workspace_id,
        scopes: new Set(parseScopes(row.scopes)),
      },
      expiresAt: row.expires_at,
      tokenId: row.id,
      credentialId: row.id,
    };
    recent.set(token, result, now);
    return result;
  }

  /** A person's tokens that still work, newest first. */
  async function list(personId: string): Promise<TokenRow[]> {
    const rows = await db
      .selectFrom('tokens')
      .select(['id', 'name', 'scopes', 'created_at', 'expires_at', 'last_used_at'])
      .where('person_id', '=', personId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', Date.now())]))
      .orderBy('id', 'desc')
      .execute();
    return rows.map((r) => ({
      token_id: r.id,
      name: r.name,
      scopes: parseScopes(r.scopes),
      created_at: r.created_at,
      expires_at: r.expires_at,
      last_used_at: r.last_used_at,
    }));
  }

  /**
   * Revokes a token: `owner` limits it to that person's own tokens (anything else is not found);
   * without it (the operator's command line) any token goes. Works at once in this process.
   */
  async function revoke(tokenId: string, owner?: string): Promise<void> {
    let query = db.deleteFrom('tokens').where('id', '=', tokenId);
    if (owner !== undefined) query = query.where('person_id', '=', owner);
    const result = await query.executeTakeFirst();
    recent.forget(tokenId);
    if (Number(result.numDeletedRows) !== 1) throw tokenNotFound();
    ends?.tell();
  }

  return { create, verify, list, revoke };
}

export type TokensService = ReturnType<typeof tokensService>;
