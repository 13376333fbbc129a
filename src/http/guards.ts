import { randomUUID } from 'node:crypto';
import type { Context, MiddlewareHandler } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { log, withLogContext } from '../observability/log.ts';
import { hasSessionCookie } from './auth.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { isAuthorizationServerPath } from './oauth/paths.ts';

const KiB = 1024;
const MiB = 1024 * KiB;

/**
 * The largest MCP request body. The largest legal tool call the spec bounds is a document write
 * of 60,000 characters, at most 360 KB as JSON (six bytes per escaped character); page HTML has no
 * limit of its own, so this is also the effective size limit of a page written over HTTP (a little
 * under 4 MiB once JSON-encoded). The MCP SDK's own default is the same 4 MiB.
 */
export const MCP_MAX_BODY = 4 * MiB;

interface BodyRule {
  applies(path: string): boolean;
  bytes: number;
  /** The limit in words, and what it bounds. */
  size: string;
  what: string;
}

/** Every body the app origin reads is bounded; the first rule that applies to a path decides. */
const BODY_RULES: BodyRule[] = [
  { applies: (p) => p === '/mcp', bytes: MCP_MAX_BODY, size: '4 MiB', what: 'an MCP request' },
  // GitHub's own maximum payload is 25 MB; automations have no use for events that large.
  { applies: (p) => p.startsWith('/hooks/'), bytes: 5_000_000, size: '5 MB', what: 'an event hook' },
  // A decision and a note of at most 2,000 characters.
  {
    applies: (p) => p.startsWith('/api/approvals/'),
    bytes: 16 * KiB,
    size: '16 KiB',
    what: 'an approval decision',
  },
  { applies: (p) => p.startsWith('/api/'), bytes: 1 * MiB, size: '1 MiB', what: 'the JSON API' },
  { applies: (p) => p === '/login', bytes: 16 * KiB, size: '16 KiB', what: 'the sign-in form' },
  { applies: () => true, bytes: 16 * KiB, size: '16 KiB', what: 'this address' },
];

/** A body's length as its request declares it, when it does and is not sent in chunks. */
function declaredLength(request: Request): number | undefined {
  const declared = request.headers.get('content-length');
  if (declared === null || request.headers.get('transfer-encoding') !== null) return undefined;
  return Number(declared);
}

/**
 * Whether `limitBodies` lets a request to `path` through on its headers alone: it declares a
 * length within the path's limit, so nothing needs counting as it arrives.
 */
export function declaredWithinLimit(path: string, request: Request): boolean {
  const declared = declaredLength(request);
  return declared !== undefined && declared <= BODY_RULES.find((rule) => rule.applies(path))!.bytes;
}

/** Methods whose requests Tandem never reads a body of. */
const BODILESS = new Set(['GET', 'HEAD']);

/** A refusal in the form the route speaks: JSON-RPC on /mcp, JSON on /api and hooks, else a page. */
function refusal(c: Context, status: 403 | 413, error: string, message: string, title: string) {
  const path = c.req.path;
  if (path === '/mcp') {
    return c.json({ jsonrpc: '2.0', id: null, error: { code: -32000, message } }, status);
  }
  if (path.startsWith('/api/') || path.startsWith('/hooks/')) return c.json({ error, message }, status);
  return c.html(htmlPage(title, `<p>${escapeHtml(message)}</p>`), status);
}

/**
 * Refuses a body over its route's limit before reading it: a declared Content-Length is checked
 * up front; a chunked body is counted as it arrives and refused as soon as it passes the limit,
 * so at most the limit is ever held in memory.
 */
export function limitBodies(): MiddlewareHandler {
  const limiters = BODY_RULES.map((rule) => {
    const refuse = (c: Context) =>
      refusal(
        c,
        413,
        'too_large',
        `The request body is larger than ${rule.size}, the most ${rule.what} accepts.`,
        'Too large',
      );
    return { rule, refuse, limit: bodyLimit({ maxSize: rule.bytes, onError: refuse }) };
  });
  return async (c, next) => {
    // The authorization server reads its own bodies from the socket, refusing any past 56 KiB.
    if (isAuthorizationServerPath(c.req.path) || BODILESS.has(c.req.method)) return next();
    const limiter = limiters.find((l) => l.rule.applies(c.req.path))!;
    // A declared length is checked as it stands, leaving the body unread for the route (which
    // reads it straight off the socket); only a chunked body is counted as it arrives.
    const declared = declaredLength(c.req.raw);
    if (declared !== undefined) return declared > limiter.rule.bytes ? limiter.refuse(c) : next();
    return limiter.limit(c, next);
  };
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request comes from the app's own pages. `Origin` decides when a browser sends it: it
 * must be the app origin (`PUBLIC_URL`), or the origin the request itself was sent to when that
 * host is one the app answers to (a person who opened http://localhost:PORT rather than
 * 127.0.0.1). A name outside those hosts (DNS rebinding) never counts. Without `Origin`,
 * `Sec-Fetch-Site: same-origin` does; with neither, the request is refused.
 */
export function fromOwnPages(request: Request, appOrigin: string, allowedHosts: readonly string[]): boolean {
  const own = new URL(request.url);
  const knownHost = own.origin === appOrigin || allowedHosts.includes(own.hostname);
  const origin = request.headers.get('origin');
  if (origin !== null) return origin === appOrigin || (knownHost && origin === own.origin);
  return knownHost && request.headers.get('sec-fetch-site') === 'same-origin';
}

/**
 * Paths whose requests never act on the session cookie: hooks are signed, /mcp takes bearer
 * tokens, and the authorization server's endpoints authenticate clients, not people.
 */
const NO_COOKIE_PATHS = (path: string) =>
  path === '/mcp' || path.startsWith('/hooks/') || isAuthorizationServerPath(path);
/** State changes that need no session yet must still come from the app's own pages. */
const ALWAYS_CHECKED = new Set(['/login', '/logout']);

/**
 * Cross-site request forgery: a state-changing request authenticated by the browser's session
 * cookie (not by an Authorization header, which another site cannot make a browser send) is
 * refused unless it comes from the app's own pages. Signing in and out are checked always.
 */
export function sameOriginOnly(appOrigin: string, allowedHosts: readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const path = c.req.path;
    if (SAFE_METHODS.has(c.req.method) || NO_COOKIE_PATHS(path)) return next();
    const cookieAuthenticated = c.req.header('authorization') === undefined && hasSessionCookie(c);
    if (!cookieAuthenticated && !ALWAYS_CHECKED.has(path)) return next();
    if (fromOwnPages(c.req.raw, appOrigin, allowedHosts)) return next();
    return refusal(
      c,
      403,
      'cross_site',
      'This request did not come from Tandem’s own pages, so it was refused; open Tandem and try again there.',
      'Refused',
    );
  };
}

/** A POST, PUT or PATCH to the JSON API must say its body is JSON. */
export function jsonBodiesOnly(): MiddlewareHandler {
  return async (c, next) => {
    if (!['POST', 'PUT', 'PATCH'].includes(c.req.method)) return next();
    const type = (c.req.header('content-type') ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (type === 'application/json') return next();
    return c.json(
      {
        error: 'unsupported_media_type',
        message: 'Send the body as JSON with Content-Type: application/json.',
      },
      415,
    );
  };
}

/**
 * The policy of every HTML page the app renders: inline styles only, forms posting to the app, and
 * never framed by anyone (`extra` adds directives, e.g. the viewer's frame-src).
 */
export function appPageCsp(...extra: string[]): string {
  return [
    "default-src 'none'",
    "style-src 'unsafe-inline'",
    ...extra,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * Headers on every app response: no content sniffing, and for HTML pages the app policy (unless the
 * route set a stricter one of its own, which always includes frame-ancestors 'none'), no framing
 * and no full URLs in the Referer of links leaving the app. The pages origin keeps its own policy.
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    // The authorization server wrote its answer itself, with these headers (see oauth/routes.ts).
    if (c.req.path === '/mcp' || c.res.headers.has('x-hono-already-sent')) return;
    c.header('X-Content-Type-Options', 'nosniff');
    if (!/^text\/html/i.test(c.res.headers.get('content-type') ?? '')) return;
    if (!c.res.headers.has('content-security-policy')) c.header('Content-Security-Policy', appPageCsp());
    c.header('X-Frame-Options', 'DENY');
    c.header('Referrer-Policy', 'same-origin');
  };
}

const REQUEST_ID = /^[A-Za-z0-9._-]{1,64}$/;

/**
 * Gives each request an id (a proxy's `X-Request-Id` when it is a plain token, else a new one),
 * answers with it, and puts it in the context of every log line the request writes.
 */
export function requestContext(): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header('x-request-id');
    const id = given && REQUEST_ID.test(given) ? given : randomUUID();
    c.header('X-Request-Id', id);
    const started = performance.now();
    await withLogContext({ request: id }, async () => {
      await next();
      // A route answering with a Response of its own (the MCP route) does not get the header set
      // above; its headers are set in place, or on a copy when they cannot be changed.
      if (!c.res.headers.has('x-request-id')) {
        try {
          c.res.headers.set('X-Request-Id', id);
        } catch {
          c.header('X-Request-Id', id);
        }
      }
      log.debug(
        {
          method: c.req.method,
          path: c.req.path,
          status: c.res.status,
          ms: Math.round(performance.now() - started),
        },
        'request',
      );
    });
  };
}
