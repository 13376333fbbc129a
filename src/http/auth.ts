import { getCookie } from 'hono/cookie';
import type { Context } from 'hono';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import { addLogContext } from '../observability/log.ts';
import type { Services } from '../services.ts';

export const SESSION_COOKIE = 'tandem_session';

/**
 * The secret a request carries. A request with an Authorization header is judged by that header
 * alone (a bearer token, or nothing); only a request without one falls back to the browser's
 * session cookie, so a header can never mask which credential acted.
 */
export function requestToken(c: Context): { token: string; via: 'bearer' | 'cookie' } | null {
  const header = c.req.header('authorization');
  if (header !== undefined) {
    const bearer = header.match(/^Bearer\s+(\S+)$/i)?.[1];
    return bearer ? { token: bearer, via: 'bearer' } : null;
  }
  const cookie = getCookie(c, SESSION_COOKIE);
  return cookie ? { token: cookie, via: 'cookie' } : null;
}

export function hasSessionCookie(c: Context): boolean {
  return Boolean(getCookie(c, SESSION_COOKIE));
}

/**
 * The credential behind a request for people's routes: a personal access token, or the browser's
 * session cookie. OAuth access tokens are bound to `/mcp` and are not accepted here.
 */
export async function requestCredential(services: Services, c: Context): Promise<Credential | null> {
  const found = requestToken(c);
  if (!found) return null;
  const credential =
    found.via === 'cookie'
      ? await services.credentials.session(found.token)
      : await services.credentials.bearer(found.token, undefined);
  if (credential)
    addLogContext({ person: credential.actor.personId, workspace: credential.actor.workspaceId });
  return credential;
}

/** The person behind a request: a bearer token, or the browser session cookie. */
export async function requestActor(services: Services, c: Context): Promise<Actor | null> {
  return (await requestCredential(services, c))?.actor ?? null;
}
