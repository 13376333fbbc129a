import type { Http2Bindings, HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import { getPath } from 'hono/utils/url';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import { apiRoutes } from './api.ts';
import { rememberClientAddress } from './client-address.ts';
import { collabTicketApp } from './collab-tickets.ts';
import { answerError } from './errors.ts';
import {
  declaredWithinLimit,
  limitBodies,
  requestContext,
  sameOriginOnly,
  securityHeaders,
} from './guards.ts';
import { hookRoutes } from './hooks.ts';
import { signInRoutes } from './login.ts';
import { mcpHttp } from './mcp-route.ts';
import { oauthRoutes } from './oauth/routes.ts';
import type { PageLinkSigner } from './page-links.ts';
import { settingsRoutes } from './settings.ts';
import { settingsRoutes as settingsApiRoutes } from './routes/settings.ts';
import { pageFrame } from './viewer.ts';
import { pageViewRoutes } from './routes/pages.ts';
import { webRoutes } from './web.ts';
import { opsRoutes } from './ops.ts';
import { ICON_KINDS, ICON_SVG, type IconKind } from '../mcp/icons.ts';

/** The app origin: MCP, the JSON API for people, the page viewer, sign-in, OAuth and event hooks. */
export function createApp(services: Services, config: Config, signer: PageLinkSigner) {
  const app = new Hono();
  const publicUrl = new URL(config.publicUrl);
  const allowedHosts = [...new Set(['localhost', '127.0.0.1', '[::1]', publicUrl.hostname, config.host])];
  const mcp = mcpHttp(services, new URL('/mcp', publicUrl), allowedHosts, config.publicUrl);
  const oauth = oauthRoutes(services, config.publicUrl);

  // Every request passes these before any route reads it.
  app.use('*', requestContext());
  app.use('*', rememberClientAddress(config.trustProxy));
  app.use('*', securityHeaders());
  app.use('*', limitBodies());
  app.use('*', sameOriginOnly(publicUrl.origin, allowedHosts));

  app.route('/', opsRoutes(services, config));
  const answerMcp = (c: Context) => mcp.fetch(c.req.raw);
  app.all('/mcp', answerMcp);
  app.get('/.well-known/oauth-protected-resource/mcp', (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(mcp.metadata());
  });
  app.get('/icons/:file{[a-z]+\\.svg}', (c) => {
    const kind = c.req.param('file').slice(0, -4);
    if (!(ICON_KINDS as readonly string[]).includes(kind)) return c.text('Not found', 404);
    c.header('Cache-Control', 'public, max-age=86400');
    return c.body(ICON_SVG[kind as IconKind], 200, { 'Content-Type': 'image/svg+xml' });
  });
  app.route('/api/collab', collabTicketApp(services));
  app.route(
    '/api',
    apiRoutes(services, mcp.resourceMetadataUrl, [
      ...pageViewRoutes(pageFrame(config, signer)),
      ...settingsApiRoutes(config),
    ]),
  );
  app.route('/', oauth.app);
  app.route('/', hookRoutes(services));
  // The web app's pages (`/`, `/documents`, `/pages/{id}`, `/automations/{id}`, …) and its files.
  app.route('/', webRoutes(services, config));
  app.route('/', signInRoutes(services, config));
  app.route('/', settingsRoutes(services));

  app.notFound((c) => c.text('Not found', 404));
  app.onError(answerError);

  // The MCP calls agents make all day skip the router and the guards that pass them anyway (see
  // `mcpFirst`); they keep the request's id, its log context and the one error handler.
  const mcpCalls = new Hono();
  mcpCalls.use('*', requestContext());
  mcpCalls.post('/mcp', answerMcp);
  mcpCalls.onError(answerError);
  return { fetch: mcpFirst(app, mcpCalls), close: () => mcp.close() };
}

/**
 * The app origin's entry. A POST to `/mcp` (the path as the router reads it) that declares a body
 * within its limit goes straight to `calls`: of the guards every request passes, the cross-site check and the security headers leave
 * `/mcp` alone, the body limit is met by the declared length, and the MCP route never asks for the
 * client's address. Anything else (another path or method, a chunked or oversized body) takes the
 * whole app, guards first.
 */
function mcpFirst(app: Hono, calls: Hono) {
  // `env` carries the Node request and response, which routes reading the socket themselves and
  // the client's address need.
  return (request: Request, env: HttpBindings | Http2Bindings): Response | Promise<Response> =>
    request.method === 'POST' && getPath(request) === '/mcp' && declaredWithinLimit('/mcp', request)
      ? calls.fetch(request, env)
      : app.fetch(request, env);
}
