import type { Context } from 'hono';
import type { QueryParam } from '../contract/endpoint.ts';

type Values<P extends Record<string, QueryParam<unknown>>> = {
  [K in keyof P]?: P[K] extends QueryParam<infer T> ? T : never;
};

/**
 * Reads a route's query parameters: each known one at most once and valid, and no others. The
 * refusal names the parameter and what it must be, e.g. `limit must be an integer from 1 to 100`.
 */
export function parseQuery<P extends Record<string, QueryParam<unknown>>>(
  c: Context,
  route: string,
  params: P,
): { ok: true; values: Values<P> } | { ok: false; message: string } {
  const values: Record<string, unknown> = {};
  const given = c.req.queries();
  for (const [name, list] of Object.entries(given)) {
    const param = Object.hasOwn(params, name) ? params[name] : undefined;
    if (!param) {
      const known = Object.keys(params);
      return {
        ok: false,
        message: `Unknown query parameter ${name}; ${route} takes ${known.length ? known.join(', ') : 'none'}`,
      };
    }
    if (list.length !== 1) return { ok: false, message: `${name} must be given once` };
    const parsed = param.schema.safeParse(list[0]);
    if (!parsed.success) return { ok: false, message: `${name} must be ${param.rule}` };
    values[name] = parsed.data;
  }
  return { ok: true, values: values as Values<P> };
}
