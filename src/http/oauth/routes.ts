import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono, type Context } from 'hono';
import { addressKey, countRequest } from '../../domains/auth/throttle.ts';
import { DomainError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { clientAddress } from '../client-address.ts';
import { appPageCsp } from '../guards.ts';
import { consentRoutes } from './consent.ts';
import { isAuthorizationServerPath, OAUTH_ROUTES } from './paths.ts';
import { createAuthorizationServer, REGISTRATION_LIMITS, type AuthorizationServer } from './provider.ts';

/** Client registrations one address may make in an hour. */
export const REGISTRATIONS_PER_HOUR = 60;

/**
 * A registration is refused before the authorization server reads it when its address made too
 * many this hour, or its body is past the size real clients send (a declared length is required,
 * and the server reads no more than it declared). Undefined when it may go on.
 */
async function refuseRegistration(services: Services, c: Context): Promise<Response | undefined> {
  if (c.req.method !== 'POST' || c.req.path !== OAUTH_ROUTES.registration) return undefined;
  const refuse = (status: 411 | 413 | 429, error: string, description: string) => {
    c.header('Access-Control-Allow-Origin', '*');
    c.header('Cache-Control', 'no-store');
    return c.json({ error, error_description: description }, status);
  };
  try {
    await countRequest(
      services.deps,
      `register:${addressKey(clientAddress(c))}`,
      REGISTRATIONS_PER_HOUR,
      3_600_000,
      'client registrations from this address',
    );
  } catch (error) {
    if (!(error instanceof DomainError) || error.code !== 'rate_limited') throw error;
    c.header('Retry-After', String(error.data?.retry_after_seconds ?? 60));
    return refuse(429, 'too_many_requests', error.message);
  }
  const declared = c.req.header('content-length');
  if (declared === undefined || !/^\d+$/.test(declared))
    return refuse(411, 'invalid_request', 'send the client metadata with a Content-Length header');
  if (Number(declared) > REGISTRATION_LIMITS.bytes)
    return refuse(
      413,
      'invalid_client_metadata',
      `client metadata may be at most ${REGISTRATION_LIMITS.bytes / 1024} KiB`,
    );
  return undefined;
}

/**
 * The authorization server inside the app: its endpoints and metadata are handed the raw
 * request (it is a Koa application), and the consent page is the app's own. It is built on
 * first use, since its keys come from the database.
 */
export function oauthRoutes(services: Services, publicUrl: string) {
  const issuer = new URL(publicUrl);
  let building: Promise<AuthorizationServer> | undefined;
  let handle: ReturnType<AuthorizationServer['provider']['callback']> | undefined;
  const server = () => {
    building ??= createAuthorizationServer(services, publicUrl).then(
      (built) => {
        handle = built.provider.callback();
        return built;
      },
      (error: unknown) => {
        building = undefined;
        throw error;
      },
    );
    return building;
  };
  const app = new Hono<{ Bindings: HttpBindings }>();
  app.route('/', consentRoutes(services, server));
  app.all('*', async (c, next) => {
    if (!isAuthorizationServerPath(c.req.path)) return next();
    const refused = await refuseRegistration(services, c);
    if (refused) return refused;
    await server();
    const { incoming, outgoing } = c.env;
    // Addressed to PUBLIC_URL: the endpoints it names, its cookies' Secure flag and the issuer agree.
    incoming.headers['x-forwarded-host'] = issuer.host;
    incoming.headers['x-forwarded-proto'] = issuer.protocol.slice(0, -1);
    outgoing.setHeader('X-Content-Type-Options', 'nosniff');
    outgoing.setHeader('X-Frame-Options', 'DENY');
    outgoing.setHeader('Referrer-Policy', 'no-referrer');
    outgoing.setHeader('Content-Security-Policy', appPageCsp());
    await handle!(incoming, outgoing);
    return RESPONSE_ALREADY_SENT;
  });
  return { app, server };
}
