import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Hono, type Context } from 'hono';
import type { IncomingEvent } from '../domains/automations/events.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';

/** How far a connector event's timestamp may be from now, either way. */
export const TIMESTAMP_TOLERANCE_S = 300;

function hmacHex(secret: string, parts: (string | Buffer)[]): string {
  const mac = createHmac('sha256', secret);
  for (const part of parts) mac.update(part);
  return mac.digest('hex');
}

/** `sha256=` and the hex HMAC-SHA256 of the parts, as the signature headers carry it. */
export function signature(secret: string, ...parts: (string | Buffer)[]): string {
  return `sha256=${hmacHex(secret, parts)}`;
}

/** Whether a Unix-seconds timestamp header is within TIMESTAMP_TOLERANCE_S of now. */
function fresh(timestamp: string): boolean {
  const now = Math.floor(Date.now() / 1000);
  return /^[0-9]{1,12}$/.test(timestamp) && Math.abs(now - Number(timestamp)) <= TIMESTAMP_TOLERANCE_S;
}

function matches(expected: string, header: string | undefined): boolean {
  if (!header) return false;
  const want = Buffer.from(expected);
  const given = Buffer.from(header);
  return given.length === want.length && timingSafeEqual(given, want);
}

const refuse = (c: Context, status: 400 | 401 | 404, error: string, message: string) =>
  c.json({ error, message }, status);

/**
 * Starts the runs an event matches. A delivery already received (its `delivery_id`, or for GitHub
 * its body, recorded before) starts nothing and is answered 200 with `duplicate: true`, so a
 * sender's retry is not an error and a replay learns nothing more than a retry does.
 */
async function deliver(
  c: Context,
  services: Services,
  workspaceId: string,
  event: IncomingEvent,
  status: 200 | 202 = 202,
) {
  try {
    const runs = await services.automations.receiveEvent(workspaceId, event);
    return c.json({ ok: true, runs }, status);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'duplicate_delivery') {
      return c.json({ ok: true, duplicate: true, runs: [] }, 200);
    }
    throw error;
  }
}

/**
 * Event hooks: GitHub webhooks signed with the workspace's github connector secret, and any
 * connector's events signed with that connector's secret. Each starts the matching automations of
 * that workspace only. Bodies are limited (5 MB) before they reach these routes.
 */
export function hookRoutes(services: Services) {
  const app = new Hono();

  app.post('/hooks/github/:workspace', async (c) => {
    const workspaceId = c.req.param('workspace');
    const secret = await services.connectors.webhookSecret(workspaceId, 'github');
    if (!secret) return refuse(c, 404, 'not_found', 'No GitHub connection with a secret here.');
    const raw = Buffer.from(await c.req.arrayBuffer());
    if (!matches(signature(secret, raw), c.req.header('x-hub-signature-256'))) {
      return refuse(c, 401, 'bad_signature', 'X-Hub-Signature-256 does not match this workspace’s secret.');
    }
    const event = c.req.header('x-github-event') ?? '';
    // A webhook set to application/x-www-form-urlencoded sends its JSON as the field `payload`.
    const form = (c.req.header('content-type') ?? '').startsWith('application/x-www-form-urlencoded');
    const text = form
      ? (new URLSearchParams(raw.toString('utf8')).get('payload') ?? '')
      : raw.toString('utf8');
    let payload: Record<string, unknown>;
    try {
      payload = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return refuse(c, 400, 'bad_request', 'The body is not JSON.');
    }
    if (!/^[a-z_]+$/.test(event)) return refuse(c, 400, 'bad_request', 'X-GitHub-Event is missing.');
    // GitHub names every delivery; a redelivery carries the same name. The signature covers the
    // body only, so a signed body sent again under a new name is a replay: its digest is kept
    // with the delivery id (for as long) and the same body is a duplicate whatever its name.
    const deliveryId = c.req.header('x-github-delivery') ?? '';
    if (!/^[A-Za-z0-9-]{1,100}$/.test(deliveryId)) {
      return refuse(
        c,
        400,
        'bad_request',
        'X-GitHub-Delivery is missing; GitHub sends it with every delivery.',
      );
    }
    if (event === 'ping') return c.json({ ok: true, runs: [] });
    const repository = payload.repository as { full_name?: unknown } | undefined;
    return deliver(c, services, workspaceId, {
      provider: 'github',
      event,
      action: typeof payload.action === 'string' ? payload.action : undefined,
      repo: typeof repository?.full_name === 'string' ? repository.full_name : '',
      data: payload,
      delivery_id: deliveryId,
      body_sha256: createHash('sha256').update(raw).digest('hex'),
    });
  });

  app.post('/hooks/connectors/:workspace/:provider', async (c) => {
    const workspaceId = c.req.param('workspace');
    const provider = c.req.param('provider');
    const secret = await services.connectors.webhookSecret(workspaceId, provider);
    if (!secret) return refuse(c, 404, 'not_found', `No ${provider} connection with a secret here.`);
    const raw = Buffer.from(await c.req.arrayBuffer());
    // The signature covers the timestamp, so an event cannot be replayed once it is stale.
    const timestamp = c.req.header('x-tandem-timestamp') ?? '';
    if (!fresh(timestamp)) {
      return refuse(
        c,
        401,
        'bad_timestamp',
        'X-Tandem-Timestamp must be the current Unix time in seconds (within 5 minutes), signed with the body.',
      );
    }
    const expected = signature(secret, `${timestamp}.`, raw);
    if (!matches(expected, c.req.header('x-tandem-signature-256'))) {
      return refuse(
        c,
        401,
        'bad_signature',
        'X-Tandem-Signature-256 does not match this connector’s secret over "<X-Tandem-Timestamp>.<body>".',
      );
    }
    let payload: { event?: unknown; data?: unknown };
    try {
      payload = JSON.parse(raw.toString('utf8')) as { event?: unknown; data?: unknown };
    } catch {
      return refuse(c, 400, 'bad_request', 'The body is not JSON.');
    }
    if (typeof payload.event !== 'string' || payload.event === '') {
      return refuse(c, 400, 'bad_request', 'The body needs {"event": "...", "data": {...}}.');
    }
    return deliver(c, services, workspaceId, {
      provider,
      event: payload.event,
      data: payload.data ?? {},
      // One signed event is one delivery: the same bytes at the same second are a replay.
      delivery_id: expected.slice('sha256='.length),
    });
  });

  // Slack's Events API: signed "v0:<timestamp>:<body>" with the app's signing secret.
  app.post('/hooks/slack/:workspace', async (c) => {
    const workspaceId = c.req.param('workspace');
    const secret = await services.connectors.webhookSecret(workspaceId, 'slack');
    if (!secret) return refuse(c, 404, 'not_found', 'No Slack connection with a signing secret here.');
    const raw = Buffer.from(await c.req.arrayBuffer());
    const timestamp = c.req.header('x-slack-request-timestamp') ?? '';
    if (!fresh(timestamp)) {
      return refuse(
        c,
        401,
        'bad_timestamp',
        'X-Slack-Request-Timestamp must be the current Unix time in seconds (within 5 minutes).',
      );
    }
    if (!matches(`v0=${hmacHex(secret, [`v0:${timestamp}:`, raw])}`, c.req.header('x-slack-signature'))) {
      return refuse(
        c,
        401,
        'bad_signature',
        'X-Slack-Signature does not match this workspace’s Slack signing secret.',
      );
    }
    let body: { type?: unknown; challenge?: unknown; event?: unknown; event_id?: unknown; team_id?: unknown };
    try {
      body = JSON.parse(raw.toString('utf8')) as typeof body;
    } catch {
      return refuse(c, 400, 'bad_request', 'The body is not JSON.');
    }
    if (body.type === 'url_verification') return c.json({ challenge: String(body.challenge ?? '') });
    const event = body.event as { type?: unknown } | undefined;
    // Anything else Slack sends (app_rate_limited, …) starts nothing; Slack wants a 200 all the same.
    if (body.type !== 'event_callback' || typeof event?.type !== 'string')
      return c.json({ ok: true, runs: [] });
    if (typeof body.event_id !== 'string' || !/^[A-Za-z0-9]{1,100}$/.test(body.event_id))
      return refuse(c, 400, 'bad_request', 'An event_callback needs its event_id.');
    return deliver(
      c,
      services,
      workspaceId,
      {
        provider: 'slack',
        event: event.type,
        data: { ...event, team_id: body.team_id, event_id: body.event_id },
        // Slack retries a delivery with the same event_id.
        delivery_id: body.event_id,
      },
      200,
    );
  });
  return app;
}
