import { Hono } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import type { Config } from '../config.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';
import { requestActor, SESSION_COOKIE } from './auth.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { mcpHttp } from './mcp-route.ts';
import type { PageLinkSigner } from './page-links.ts';
import { viewerRoutes } from './viewer.ts';
import { automationRoutes } from './automations.ts';
import { hookRoutes } from './hooks.ts';
import { DomainError } from '../errors.ts';

/** The app origin: MCP, the JSON API for people, the page viewer and sign-in. */
export function createApp(services: Services, config: Config, signer: PageLinkSigner) {
  const app = new Hono<{ Variables: { actor: Actor } }>();
  const publicUrl = new URL(config.publicUrl);
  const allowedHosts = [...new Set(['localhost', '127.0.0.1', '[::1]', publicUrl.hostname, config.host])];
  const mcp = mcpHttp(services, new URL('/mcp', publicUrl), allowedHosts);

  app.all('/mcp', (c) => mcp.fetch(c.req.raw));
  app.get('/.well-known/oauth-protected-resource/mcp', (c) => {
    c.header('Access-Control-Allow-Origin', '*');
    return c.json(mcp.metadata());
  });

  app.use('/api/*', async (c, next) => {
    const actor = await requestActor(services, c);
    if (!actor) {
      c.header('WWW-Authenticate', `Bearer resource_metadata="${mcp.resourceMetadataUrl}"`);
      return c.json(
        { error: 'unauthenticated', message: 'Send Authorization: Bearer <token> (tandem token create).' },
        401,
      );
    }
    c.set('actor', actor);
    await next();
  });
  app.get('/api/notifications', async (c) => {
    const actor = c.get('actor');
    return c.json({
      notifications: await services.notifications.list(actor, Number(c.req.query('limit') ?? 100)),
    });
  });
  app.get('/api/activity', async (c) => {
    const actor = c.get('actor');
    return c.json({ activity: await services.activity.list(actor, Number(c.req.query('limit') ?? 100)) });
  });
  app.get('/api/sessions/:id', async (c) => {
    const actor = c.get('actor');
    if (!actor.scopes.has('automations:read')) {
      return c.json({ error: 'insufficient_scope', message: 'This needs the automations:read scope.' }, 403);
    }
    try {
      return c.json(await services.automations.session(actor, c.req.param('id')));
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') {
        return c.json({ error: 'not_found', message: error.message }, 404);
      }
      throw error;
    }
  });
  app.post('/api/approvals/:id', async (c) => {
    const actor = c.get('actor');
    if (!actor.scopes.has('automations:write')) {
      return c.json({ error: 'insufficient_scope', message: 'This needs the automations:write scope.' }, 403);
    }
    let body: { decision?: unknown; note?: unknown };
    try {
      body = (await c.req.json()) as { decision?: unknown; note?: unknown };
    } catch {
      return c.json(
        {
          error: 'invalid_argument',
          message: 'Send JSON: {"decision": "approve" | "reject", "note"?: "..."}',
        },
        400,
      );
    }
    try {
      return c.json(await services.automations.decideApproval(actor, c.req.param('id'), body ?? {}));
    } catch (error) {
      if (error instanceof DomainError) {
        const status =
          error.code === 'not_found'
            ? 404
            : error.code === 'forbidden'
              ? 403
              : error.code === 'already_decided'
                ? 409
                : 400;
        return c.json({ error: error.code, message: error.message }, status);
      }
      throw error;
    }
  });
  app.all('/api/*', (c) =>
    c.json({ error: 'not_found', message: `No API route ${c.req.method} ${c.req.path}` }, 404),
  );

  app.route('/', viewerRoutes(services, config, signer));
  app.route('/', automationRoutes(services));
  app.route('/', hookRoutes(services));

  app.get('/login', (c) => {
    const next = safeNext(c.req.query('next'));
    return c.html(
      htmlPage(
        'Sign in',
        `<h1>Sign in to Tandem</h1><p class="note">Paste a personal access token (<code>tandem token create --user EMAIL --scopes automations:read,automations:write,documents:read,documents:write</code>).</p>
<form method="post" action="/login"><input type="hidden" name="next" value="${escapeHtml(next)}"><input name="token" type="password" size="50" autofocus required> <button>Sign in</button></form>`,
      ),
    );
  });
  app.post('/login', async (c) => {
    const form = await c.req.parseBody();
    const token = typeof form.token === 'string' ? form.token.trim() : '';
    const next = safeNext(typeof form.next === 'string' ? form.next : undefined);
    const verified = token ? await services.tokens.verify(token) : null;
    if (!verified)
      return c.html(
        htmlPage('Sign in', '<p>That token is unknown or has expired. <a href="/login">Try again</a>.</p>'),
        401,
      );
    setCookie(c, SESSION_COOKIE, token, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      secure: publicUrl.protocol === 'https:',
      ...(verified.expiresAt ? { expires: new Date(verified.expiresAt) } : {}),
    });
    return c.redirect(next);
  });
  app.get('/logout', (c) => {
    deleteCookie(c, SESSION_COOKIE, { path: '/' });
    return c.redirect('/login');
  });

  app.get('/', async (c) => {
    const actor = await requestActor(services, c);
    return c.html(
      htmlPage(
        'Tandem',
        `<h1>Tandem</h1><p>A workspace where agents and people work on the same automations, pages, documents and comment threads.</p>
<p>MCP endpoint: <code>${escapeHtml(config.publicUrl)}/mcp</code> (bearer token).</p>
<p>${actor ? 'You are signed in. <a href="/logout">Sign out</a>.' : '<a href="/login">Sign in</a> to view pages.'}</p>`,
      ),
    );
  });

  app.notFound((c) => c.text('Not found', 404));
  app.onError((error, c) => {
    console.error(`${c.req.method} ${c.req.path} failed`, error);
    return c.json({ error: 'internal', message: 'An unexpected server error stopped this request.' }, 500);
  });
  return { app, close: () => mcp.close() };
}

/** Only same-site paths may follow a sign-in. */
function safeNext(next: string | undefined): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/';
}
