import { getCookie } from 'hono/cookie';
import type { Context } from 'hono';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';

export const SESSION_COOKIE = 'tandem_session';

/** The person behind a request: a bearer token, or the browser session cookie holding one. */
export async function requestActor(services: Services, c: Context): Promise<Actor | null> {
  const header = c.req.header('authorization');
  const bearer = header?.match(/^Bearer\s+(\S+)$/i)?.[1];
  const token = bearer ?? getCookie(c, SESSION_COOKIE);
  if (!token) return null;
  const verified = await services.tokens.verify(token);
  return verified?.actor ?? null;
}
