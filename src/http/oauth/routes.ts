import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { Hono } from 'hono';
import type { Services } from '../../services.ts';
import { appPageCsp } from '../guards.ts';
import { consentRoutes } from './consent.ts';
import { isAuthorizationServerPath } from './paths.ts';
import { createAuthorizationServer, type AuthorizationServer } from './provider.ts';

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
