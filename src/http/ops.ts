import { Socket } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { sql } from 'kysely';
import { timingSafeEqual } from 'node:crypto';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import { engineHealth } from '../observability/health.ts';
import { registry } from '../observability/metrics.ts';

/** Answers Redis's PING within `ms`, over a plain socket (no client needed for a check). */
function redisAnswers(url: string, ms = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(url);
    const socket = new Socket();
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(ms, () => done(false));
    socket.once('error', () => done(false));
    socket.once('data', (chunk: Buffer) =>
      done(chunk.toString().startsWith('+PONG') || chunk.toString().startsWith('-NOAUTH')),
    );
    socket.connect(Number(port || 6379), hostname.replace(/^\[|\]$/g, ''), () =>
      socket.write('*1\r\n$4\r\nPING\r\n'),
    );
  });
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

/** Metrics go to a scraper on loopback, or to one with the metrics token. */
export function metricsAllowed(
  remote: string,
  bearer: string | undefined,
  token: string | undefined,
): boolean {
  if (LOOPBACK.test(remote)) return true;
  if (token === undefined || bearer === undefined || bearer.length !== token.length) return false;
  return timingSafeEqual(Buffer.from(bearer), Buffer.from(token));
}

/**
 * For operators: `GET /healthz` (the process answers), `GET /readyz` (the database, Redis when
 * configured, and this process's run engine when it runs one), `GET /metrics` (Prometheus text;
 * only from loopback, or with `Authorization: Bearer $TANDEM_METRICS_TOKEN`).
 */
export function opsRoutes(services: Services, config: Config) {
  const app = new Hono();
  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.get('/readyz', async (c) => {
    const checks: Record<string, string> = {};
    try {
      await sql`select 1`.execute(services.deps.db);
      checks.database = 'ok';
    } catch {
      checks.database = 'unreachable';
    }
    if (config.redisUrl) checks.redis = (await redisAnswers(config.redisUrl)) ? 'ok' : 'unreachable';
    const engine = engineHealth();
    if (engine) checks.engine = engine;
    const ready = Object.values(checks).every((v) => v === 'ok');
    return c.json({ status: ready ? 'ready' : 'not ready', checks }, ready ? 200 : 503);
  });
  app.get('/metrics', async (c) => {
    const remote = getConnInfo(c).remote.address ?? '';
    const bearer = c.req.header('authorization')?.match(/^Bearer\s+(\S+)$/i)?.[1];
    if (!metricsAllowed(remote, bearer, config.metricsToken)) {
      return c.json(
        {
          error: 'forbidden',
          message: 'Metrics are served to loopback, or with Authorization: Bearer $TANDEM_METRICS_TOKEN.',
        },
        403,
      );
    }
    c.header('Content-Type', registry.contentType);
    return c.body(await registry.metrics());
  });
  return app;
}

/**
 * `/healthz`, `/readyz` and `/metrics` on a port of their own, for a `tandem worker` (which serves
 * nothing else) so a container's health check and a scraper can reach it.
 */
export function serveOps(
  services: Services,
  config: Config,
  port: number,
  host: string,
): Promise<{ close(): Promise<void> }> {
  const app = opsRoutes(services, config);
  return new Promise((resolve) => {
    const server = serve({ fetch: app.fetch, port, hostname: host }, () =>
      resolve({ close: () => new Promise<void>((done) => server.close(() => done())) }),
    );
  });
}
