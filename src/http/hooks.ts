import { createHmac, timingSafeEqual } from 'node:crypto';
import { Hono } from 'hono';
import type { Services } from '../services.ts';

const MAX_BODY_BYTES = 5_000_000;

function signatureMatches(secret: string, body: Buffer, header: string | undefined): boolean {
  if (!header || !header.startsWith('sha256=')) return false;
  const expected = Buffer.from(`sha256=${createHmac('sha256', secret).update(body).digest('hex')}`);
  const given = Buffer.from(header);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * Event hooks: GitHub webhooks signed with the workspace's github connector secret, and any
 * connector's events signed with that connector's secret. Each starts the matching automations of
 * that workspace only.
 */
export function hookRoutes(services: Services) {
  const app = new Hono();

  const body = async (req: Request): Promise<Buffer | undefined> => {
    const raw = Buffer.from(await req.arrayBuffer());
    return raw.byteLength > MAX_BODY_BYTES ? undefined : raw;
  };

  app.post('/hooks/github/:workspace', async (c) => {
    const secret = await services.automations.connectorSecret(c.req.param('workspace'), 'github');
    if (!secret)
      return c.json({ error: 'not_found', message: 'No GitHub connection with a secret here.' }, 404);
    const raw = await body(c.req.raw);
    if (!raw) return c.json({ error: 'too_large', message: 'The payload is too large.' }, 413);
    if (!signatureMatches(secret, raw, c.req.header('x-hub-signature-256'))) {
      return c.json(
        { error: 'bad_signature', message: 'X-Hub-Signature-256 does not match this workspace’s secret.' },
        401,
      );
    }
    const event = c.req.header('x-github-event') ?? '';
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(raw.toString('utf8')) as Record<string, unknown>;
    } catch {
      return c.json({ error: 'bad_request', message: 'The body is not JSON.' }, 400);
    }
    if (event === 'ping') return c.json({ ok: true, runs: [] });
    if (!/^[a-z_]+$/.test(event))
      return c.json({ error: 'bad_request', message: 'X-GitHub-Event is missing.' }, 400);
    const repository = payload.repository as { full_name?: unknown } | undefined;
    const runs = await services.automations.receiveEvent(c.req.param('workspace'), {
      provider: 'github',
      event,
      action: typeof payload.action === 'string' ? payload.action : undefined,
      repo: typeof repository?.full_name === 'string' ? repository.full_name : '',
      data: payload,
    });
    return c.json({ ok: true, runs }, 202);
  });

  app.post('/hooks/connectors/:workspace/:provider', async (c) => {
    const provider = c.req.param('provider');
    const secret = await services.automations.connectorSecret(c.req.param('workspace'), provider);
    if (!secret)
      return c.json({ error: 'not_found', message: `No ${provider} connection with a secret here.` }, 404);
    const raw = await body(c.req.raw);
    if (!raw) return c.json({ error: 'too_large', message: 'The payload is too large.' }, 413);
    if (!signatureMatches(secret, raw, c.req.header('x-tandem-signature-256'))) {
      return c.json(
        { error: 'bad_signature', message: 'X-Tandem-Signature-256 does not match this connector’s secret.' },
        401,
      );
    }
    let payload: { event?: unknown; data?: unknown };
    try {
      payload = JSON.parse(raw.toString('utf8')) as { event?: unknown; data?: unknown };
    } catch {
      return c.json({ error: 'bad_request', message: 'The body is not JSON.' }, 400);
    }
    if (typeof payload.event !== 'string' || payload.event === '') {
      return c.json(
        { error: 'bad_request', message: 'The body needs {"event": "...", "data": {...}}.' },
        400,
      );
    }
    const runs = await services.automations.receiveEvent(c.req.param('workspace'), {
      provider,
      event: payload.event,
      data: payload.data ?? {},
    });
    return c.json({ ok: true, runs }, 202);
  });
  return app;
}
