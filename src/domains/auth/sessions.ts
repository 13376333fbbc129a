import { randomBytes } from 'node:crypto';
import { DomainError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { CredentialEnds } from './ended.ts';
import type { Deps } from '../deps.ts';
import { SCOPES, type Actor } from '../workspace/actor.ts';
import { accountKey, membershipsOf, type Membership } from './accounts.ts';
import { RecentlyVerified } from './recent.ts';
import { hashToken } from './tokens.ts';

/** A session ends 30 days after sign-in, or after 7 days without use, whichever comes first. */
const LIFETIME_MS = 30 * 86_400_000;
const IDLE_MS = 7 * 86_400_000;
/** How stale `last_seen_at` may get before a request writes it again. */
const TOUCH_MS = 10 * 60_000;

export interface BrowserSession {
  sessionId: string;
  credentialId: string;
  email: string;
  /** A person's own browser carries every scope. */
  actor: Actor;
  expiresAt: number;
}

export const SESSION_PREFIX = 'tss_';

export function sessionsService(deps: Deps, ends?: CredentialEnds) {
  const { db } = deps;
  const recent = new RecentlyVerified<BrowserSession & { lastSeen: number }>();

  /** Starts a session as one of the account's people; the secret goes in the cookie only. */
  async function create(member: Membership): Promise<{ secret: string; expiresAt: number }> {
    const secret = `${SESSION_PREFIX}${randomBytes(32).toString('base64url')}`;
    const now = Date.now();
    const expiresAt = now + LIFETIME_MS;
    await db
      .insertInto('browser_sessions')
      .values({
        id: newId('ses'),
        hash: hashToken(secret),
        email: accountKey(member.email),
        person_id: member.personId,
        created_at: now,
        last_seen_at: now,
        expires_at: expiresAt,
      })
      .execute();
    return { secret, expiresAt };
  }

  /** The session a cookie names, or null when it ended, was revoked or never existed. */
  async function verify(secret: string): Promise<BrowserSession | null> {
    if (!secret.startsWith(SESSION_PREFIX)) return null;
    const now = Date.now();
    const cached = recent.get(secret, now);
    if (cached && cached.expiresAt > now && now - cached.lastSeen < IDLE_MS) return cached;
    const row = await db
      .selectFrom('browser_sessions')
      .innerJoin('people', 'people.id', 'browser_sessions.person_id')
      .select([
        'browser_sessions.id',
        'browser_sessions.email',
        'browser_sessions.person_id',
        'browser_sessions.expires_at',
        'browser_sessions.last_seen_at',
        'people.workspace_id',
      ])
      .where('browser_sessions.hash', '=', hashToken(secret))
      .executeTakeFirst();
    if (!row || row.expires_at <= now || now - row.last_seen_at >= IDLE_MS) return null;
    if (now - row.last_seen_at > TOUCH_MS) {
      await db.updateTable('browser_sessions').set({ last_seen_at: now }).where('id', '=', row.id).execute();
    }
    const session = {
      sessionId: row.id,
      credentialId: row.id,
      email: row.email,
      actor: { personId: row.person_id, workspaceId: row.workspace_id, scopes: new Set(SCOPES) },
      expiresAt: row.expires_at,
      lastSeen: Math.max(now, row.last_seen_at),
    };
    recent.set(secret, session, now);
    return session;
  }

  /** Ends one session (signing out); a session of someone else is not found. */
  async function revoke(sessionId: string, email?: string): Promise<void> {
    let query = db.deleteFrom('browser_sessions').where('id', '=', sessionId);
    if (email !== undefined) query = query.where('email', '=', accountKey(email));
    const result = await query.executeTakeFirst();
    recent.forget(sessionId);
    ends?.tell();
    if (Number(result.numDeletedRows) !== 1) throw new DomainError('not_found', 'Session not found');
  }

  /** Ends every session of an account but one (after a password change). */
  async function revokeOthers(email: string, keep: string): Promise<void> {
    await db
      .deleteFrom('browser_sessions')
      .where('email', '=', accountKey(email))
      .where('id', '!=', keep)
      .execute();
    recent.forget((s) => s.email === accountKey(email) && s.sessionId !== keep);
    ends?.tell();
  }

  /** Moves a session to another workspace of the same account; any other id is not found. */
  async function switchWorkspace(sessionId: string, workspaceId: string): Promise<Membership> {
    return db.transaction().execute(async (trx) => {
      const session = await trx
        .selectFrom('browser_sessions')
        .select('email')
        .where('id', '=', sessionId)
        .executeTakeFirst();
      if (!session) throw new DomainError('unauthenticated', 'This session has ended; sign in again.');
      const target = (await membershipsOf(trx, session.email)).find((m) => m.workspaceId === workspaceId);
      if (!target) throw new DomainError('not_found', 'Workspace not found');
      await trx
        .updateTable('browser_sessions')
        .set({ person_id: target.personId })
        .where('id', '=', sessionId)
        .execute();
      recent.forget(sessionId);
      ends?.tell();
      return target;
    });
  }

  return { create, verify, revoke, revokeOthers, switchWorkspace };
}

export type SessionsService = ReturnType<typeof sessionsService>;
