import type { Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import type { z } from 'zod';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Actor, Scope } from '../domains/workspace/actor.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { QueryParam } from '../contract/endpoint.ts';
import { parseQuery } from './query.ts';
import { scopeWords } from './scopes.ts';

type QuerySpec = Record<string, QueryParam<unknown>>;
type QueryValues<Q extends QuerySpec> = { [K in keyof Q]?: Q[K] extends QueryParam<infer T> ? T : never };

/** What a route's handler gets: the caller and its input, each already checked. */
export interface RouteInput<Q extends QuerySpec, B> {
  actor: Actor;
  credential: Credential;
  params: Record<string, string>;
  query: QueryValues<Q>;
  body: B;
  services: Services;
  c: Context;
}

/**
 * One route of the JSON API, declared like a tool: its scopes, the credentials it takes, its
 * query parameters and body schema, its output schema and a handler that calls the domain.
 * Refusals are thrown as `DomainError`s and answered by the app's one error handler.
 */
export interface RouteSpec<Q extends QuerySpec, B, O> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below the mount point, in Hono's form: `/sessions/:id`. */
  path: string;
  /** What it does, for the route list. */
  description: string;
  scopes: readonly Scope[];
  /** `session`: only a signed-in browser (managing one's credentials is not a token's business). */
  credentials?: 'any' | 'session';
  query?: Q;
  body?: z.ZodType<B>;
  /** The sentence for a body that is not JSON of the right shape. */
  bodyHint?: string;
  output: z.ZodType<O>;
  status?: ContentfulStatusCode;
  handler(input: RouteInput<Q, B>): Promise<O>;
}

export type AnyRoute = RouteSpec<QuerySpec, unknown, unknown>;

export function defineRoute<Q extends QuerySpec = Record<never, never>, B = undefined, O = unknown>(
  spec: RouteSpec<Q, B, O>,
): AnyRoute {
  return spec as unknown as AnyRoute;
}

/** A route as its refusals name it: `GET /api/sessions/{id}`. */
export const routeName = (prefix: string, route: Pick<AnyRoute, 'method' | 'path'>) =>
  `${route.method} ${prefix}${route.path.replace(/:(\w+)/g, '{$1}')}`;

const invalid = (message: string) => new DomainError('invalid_argument', message);

/**
 * Mounts declared routes on `app` (mounted itself at `prefix`): each request is authenticated,
 * its scopes, query and body checked in that order, then handled; the result is checked against
 * the output schema, so the API never answers outside what it declares.
 */
export function mountRoutes(
  app: Hono,
  prefix: string,
  routes: readonly AnyRoute[],
  services: Services,
  /** The request's credential, settled by the mount's own middleware before any route runs. */
  credentialOf: (c: Context) => Promise<Credential>,
) {
  for (const route of routes) {
    const name = routeName(prefix, route);
    app.on(route.method, route.path, async (c) => {
      const credential = await credentialOf(c);
      if (route.credentials === 'session' && credential.kind !== 'session') {
        throw new DomainError('forbidden', 'Only a signed-in browser can do this; sign in at /login.');
      }
      const missing = route.scopes.filter((s) => !credential.actor.scopes.has(s));
      if (missing.length > 0) {
        throw new DomainError('insufficient_scope', `This needs ${scopeWords(route.scopes)}.`);
      }
      const query = parseQuery(c, name, route.query ?? {});
      if (!query.ok) throw invalid(query.message);
      let body: unknown = undefined;
      if (route.body) {
        const hint = route.bodyHint ?? 'Send a JSON object.';
        let raw: unknown;
        try {
          raw = await c.req.json();
        } catch {
          throw invalid(hint);
        }
        const parsed = route.body.safeParse(raw);
        if (!parsed.success) throw invalid(hint);
        body = parsed.data;
      }
      const result = await route.handler({
        actor: credential.actor,
        credential,
        params: c.req.param() as Record<string, string>,
        query: query.values,
        body,
        services,
        c,
      });
      // A download answers with its own response (its type and file name); JSON otherwise.
      if (result instanceof Response) return result;
      return c.json(route.output.parse(result) as object, route.status ?? 200);
    });
  }
}
