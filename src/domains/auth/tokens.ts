import { createHash, randomBytes } from 'node:crypto';
import { invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Deps } from '../deps.ts';
import { parseScopes, type Actor, type Scope } from '../workspace/actor.ts';

/** A personal access token is random; only its SHA-256 is stored, so a database leak reveals none. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

export interface VerifiedToken {
  actor: Actor;
  expiresAt: number | null;
  tokenId: string;
}

export function parseTtl(ttl: string): number {
  const match = /^(\d+)\s*([smhdw])$/.exec(ttl.trim());
  if (!match) throw invalid(`--ttl "${ttl}" is not a duration; use a number with s, m, h, d or w, e.g. 30d`);
  const unit = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 }[match[2] as 's' | 'm' | 'h' | 'd' | 'w'];
  const seconds = Number(match[1]) * unit;
  if (seconds <= 0) throw invalid('--ttl must be longer than zero');
  return seconds * 1000;
}

/** How long a verified token is trusted without asking the database again. */
const VERIFIED_TTL_MS = 30_000;
const VERIFIED_MAX = 10_000;

export function tokensService(deps: Deps) {
  const { db } = deps;
  // Every MCP request carries its token; remembering recent verifications saves a hash and a query.
  const verified = new Map<string, { result: VerifiedToken; until: number }>();

  async function create(personId: string, workspaceId: string, scopes: Scope[], ttlMs: number | null) {
    const token = `tdm_${randomBytes(32).toString('base64url')}`;
    const now = Date.now();
    const expiresAt = ttlMs === null ? null : now + ttlMs;
    await db
      .insertInto('tokens')
      .values({
        id: newId('tok'),
        workspace_id: workspaceId,
        person_id: personId,
        hash: hashToken(token),
        scopes: scopes.join(' '),
        expires_at: expiresAt,
        created_at: now,
      })
      .execute();
    return { token, expiresAt };
  }

  /** The actor a bearer token stands for, or null when it is unknown or expired. */
  async function verify(token: string): Promise<VerifiedToken | null> {
    if (!token.startsWith('tdm_')) return null;
    const now = Date.now();
    const cached = verified.get(token);
    if (cached && cached.until > now) {
      const { expiresAt } = cached.result;
      return expiresAt === null || expiresAt > now ? cached.result : null;
    }
    const row = await db
      .selectFrom('tokens')
      .selectAll()
      .where('hash', '=', hashToken(token))
      .executeTakeFirst();
    if (!row || (row.expires_at !== null && row.expires_at <= now)) {
      verified.delete(token);
      return null;
    }
    const result: VerifiedToken = {
      actor: {
        personId: row.person_id,
        workspaceId: row.workspace_id,
        scopes: new Set(parseScopes(row.scopes)),
      },
      expiresAt: row.expires_at,
      tokenId: row.id,
    };
    if (verified.size >= VERIFIED_MAX) verified.clear();
    verified.set(token, { result, until: now + VERIFIED_TTL_MS });
    return result;
  }

  return { create, verify };
}

export type TokensService = ReturnType<typeof tokensService>;
