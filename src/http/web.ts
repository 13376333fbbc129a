import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { Hono, type Context } from 'hono';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import { requestActor } from './auth.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { APP_ROUTES } from '../contract/app-pages.ts';

/** Where `npm install` (`npm run build:web`) puts the built app. */
export const WEB_DIST = fileURLToPath(new URL('../../web/dist/', import.meta.url));

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json',
  '.map': 'application/json',
};
const COMPRESSIBLE = new Set(['.js', '.css', '.html', '.svg', '.json', '.map']);

interface Asset {
  body: Buffer;
  gzip?: Buffer;
  type: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

/** The built app read once into memory (a few hundred KB), compressed once. */
export function loadBuiltApp(dist = WEB_DIST): Map<string, Asset> | null {
  if (!existsSync(join(dist, 'index.html'))) return null;
  const assets = new Map<string, Asset>();
  for (const file of walk(dist)) {
    const ext = extname(file);
    const body = readFileSync(file);
    assets.set(`/${relative(dist, file).split('\\').join('/')}`, {
      body,
      type: TYPES[ext] ?? 'application/octet-stream',
      ...(COMPRESSIBLE.has(ext) && body.length > 1024 ? { gzip: gzipSync(body, { level: 9 }) } : {}),
    });
  }
  return assets;
}

/**
 * The app's policy: scripts, styles and fonts from the app itself only (no inline script or
 * style), API calls and the live-editing socket to the app origin, page frames from the pages
 * origin, and never framed itself.
 */
export function appCsp(config: Pick<Config, 'publicUrl' | 'pagesOrigin'>): string {
  const app = new URL(config.publicUrl);
  const socket = `${app.protocol === 'https:' ? 'wss:' : 'ws:'}//${app.host}`;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    `connect-src 'self' ${socket}`,
    `frame-src ${new URL(config.pagesOrigin).origin}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function send(c: Context, asset: Asset, cache: string): Response {
  const gzip = asset.gzip && /\bgzip\b/.test(c.req.header('accept-encoding') ?? '');
  const headers: Record<string, string> = {
    'content-type': asset.type,
    'cache-control': cache,
    vary: 'Accept-Encoding',
  };
  if (gzip) headers['content-encoding'] = 'gzip';
  if (c.req.method === 'HEAD') return c.body(null, 200, headers);
  return c.body(new Uint8Array(gzip ? asset.gzip! : asset.body), 200, headers);
}

/**
 * The web app on the app origin: its built files under `/assets/`, and its shell on each of its
 * routes for a signed-in person (others are sent to sign in first, and come back).
 */
export function webRoutes(services: Services, config: Config, dist = WEB_DIST) {
  const app = new Hono();
  const assets = loadBuiltApp(dist);
  const csp = appCsp(config);

  app.get('/assets/*', (c) => {
    const asset = assets?.get(c.req.path);
    if (!asset) return c.text('Not found', 404);
    // Built file names carry a hash of their content.
    return send(c, asset, 'public, max-age=31536000, immutable');
  });

  for (const route of APP_ROUTES) {
    app.get(route, async (c) => {
      const actor = await requestActor(services, c);
      if (!actor) {
        const next = `${c.req.path}${new URL(c.req.url).search}`;
        return c.redirect(`/login?next=${encodeURIComponent(next)}`);
      }
      const shell = assets?.get('/index.html');
      if (!shell) {
        return c.html(
          htmlPage(
            'Not built',
            `<p role="alert">The web app has not been built in this checkout; run <code>npm install</code> (or <code>npm run build:web</code>) and restart ${escapeHtml('tandem serve')}.</p>`,
          ),
          503,
        );
      }
      c.header('Content-Security-Policy', csp);
      return send(c, shell, 'no-cache');
    });
  }
  return app;
}
