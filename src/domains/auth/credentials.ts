import type { Deps } from '../deps.ts';
import { SCOPES, type Actor, type Scope } from '../workspace/actor.ts';
import type { OAuthRecords } from './oauth-records.ts';
import type { SessionsService } from './sessions.ts';
import type { TokensService } from './tokens.ts';

/** Whoever a request's credential stands for, and what kind of credential it was. */
export interface Credential {
  kind: 'token' | 'oauth' | 'session';
  actor: Actor;
  /** The id that revokes it: a token id, an OAuth access token, a session id. */
  credentialId: string;
  expiresAt: number | null;
  /** OAuth only: the client the person authorized. */
  clientId?: string;
  /** Session only: the account (e-mail) signed in. */
  email?: string;
}

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/**
 * The one place a secret becomes a person: a personal access token (`tdm_…`), an OAuth access
 * token (bound to the resource it was issued for), or a browser session's cookie (`tss_…`).
 */
export function credentialsService(
  deps: Deps,
  parts: { tokens: TokensService; sessions: SessionsService; records: OAuthRecords },
) {
  const { tokens, sessions, records } = parts;

  /**
   * A bearer token: a personal access token anywhere, an OAuth access token only at the resource
   * (`audience`) it was issued for. Null when unknown, expired, revoked or meant for elsewhere.
   */
  async function bearer(token: string, audience: string | undefined): Promise<Credential | null> {
    if (token.startsWith('tdm_')) {
      const verified = await tokens.verify(token);
      return verified && { kind: 'token', ...verified };
    }
    if (audience === undefined) return null;
    const access = await records.verifyAccessToken(token);
    if (!access || access.audience !== audience) return null;
    return {
      kind: 'oauth',
      actor: {
        personId: access.personId,
        workspaceId: access.workspaceId,
        scopes: new Set(access.scopes.filter(isScope)),
      },
      credentialId: access.credentialId,
      expiresAt: access.expiresAt,
      clientId: access.clientId,
    };
  }

  /** A browser session's cookie. */
  async function session(secret: string): Promise<Credential | null> {
    const verified = await sessions.verify(secret);
    return (
      verified && {
        kind: 'session',
        actor: verified.actor,
        credentialId: verified.sessionId,
        expiresAt: verified.expiresAt,
        email: verified.email,
      }
    );
  }

  /**
   * Whether a credential verified earlier still stands for `personId`: not revoked, not expired,
   * the session not signed out or moved to another workspace, the OAuth grant not revoked. Asks
   * the database (or this process's own recent verification, for OAuth).
   */
  async function stillValid(
    kind: Credential['kind'],
    credentialId: string,
    personId: string,
  ): Promise<boolean> {
    const now = Date.now();
    if (kind === 'token') {
      const row = await deps.db
        .selectFrom('tokens')
        .select(['person_id', 'expires_at'])
        .where('id', '=', credentialId)
        .executeTakeFirst();
      return (
        row !== undefined && row.person_id === personId && (row.expires_at === null || row.expires_at > now)
      );
    }
    if (kind === 'session') {
      const row = await deps.db
        .selectFrom('browser_sessions')
        .select(['person_id', 'expires_at'])
        .where('id', '=', credentialId)
        .executeTakeFirst();
      return row !== undefined && row.person_id === personId && row.expires_at > now;
    }
    const access = await records.verifyAccessToken(credentialId);
    return access !== null && access.personId === personId;
  }

  return { bearer, session, stillValid };
}

export type CredentialsService = ReturnType<typeof credentialsService>;
