import type { IncomingMessage } from 'node:http';
import { checkedAddresses, type Resolver } from './http-address.ts';
import { nextHop, readBody, send, urlProblem, type Hop } from './hops.ts';
import { StepError } from '../errors.ts';

export { checkedAddresses, type Resolver } from './http-address.ts';

/**
 * The http.get and http.post capabilities. Every hop's host is resolved once, every address it
 * resolves to is checked (http-address.ts), and the connection goes to a checked address, so a
 * name that resolves differently a moment later cannot move it inside. Redirects are followed
 * here, each hop checked again. The body is read as it streams and the exchange is stopped the
 * moment it passes its byte or time cap.
 */

/** The caps on one http.get or http.post call (the http capabilities say them in their descriptions). */
export const HTTP_CAPS = { bodyBytes: 1_000_000, seconds: 15, redirects: 5 } as const;

/** Bytes of one response body (after decompression). */
export const MAX_BODY_BYTES = HTTP_CAPS.bodyBytes;
/** The whole exchange: every hop's lookup, connection, headers and the final body. */
export const TIME_CAP_MS = HTTP_CAPS.seconds * 1000;
export const MAX_REDIRECTS = HTTP_CAPS.redirects;

export interface HttpOptions {
  /** TANDEM_HTTP_ALLOW: hosts (`name` or `name:port`) that may be inside addresses. */
  allow: readonly string[];
  signal: AbortSignal;
  /** How host names become addresses (the system's resolver unless a test stands in). */
  resolve?: Resolver;
  maxBodyBytes?: number;
  timeCapMs?: number;
}

type Method = 'GET' | 'POST';

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function firstHop(method: Method, input: Record<string, unknown>): Hop {
  let url: URL;
  try {
    url = new URL(String(input.url));
  } catch {
    throw new StepError('url is not an absolute URL; give one that starts with http:// or https://');
  }
  const problem = urlProblem(url);
  if (problem) throw new StepError(`url ${problem}`);
  let headers: Record<string, string> = { ...((input.headers as Record<string, string> | undefined) ?? {}) };
  let body: string | undefined;
  if (method === 'POST') {
    if (input.json !== undefined) {
      body = JSON.stringify(input.json);
      if (!Object.keys(headers).some((name) => name.toLowerCase() === 'content-type'))
        headers = { ...headers, 'content-type': 'application/json' };
    } else if (typeof input.body === 'string') body = input.body;
  }
  return { url, method, headers, body, label: `${method} ${url.host}` };
}

function flatHeaders(headers: IncomingMessage['headers']): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers)
      .filter((entry): entry is [string, string | string[]] => entry[1] !== undefined)
      .map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : value]),
  );
}

/** GET or POST `input.url` for a run: the capabilities' whole behaviour. */
export async function httpCall(
  method: Method,
  input: Record<string, unknown>,
  options: HttpOptions,
): Promise<Record<string, unknown>> {
  const maxBytes = options.maxBodyBytes ?? MAX_BODY_BYTES;
  const timeCapMs = options.timeCapMs ?? TIME_CAP_MS;
  const timer = AbortSignal.timeout(timeCapMs);
  const signal = AbortSignal.any([options.signal, timer]);
  let hop = firstHop(method, input);
  /** What the exchange was doing, for the time cap's message. */
  const at = { phase: '' };
  try {
    for (let redirects = 0; ; redirects += 1) {
      at.phase = 'looking up the host';
      const addresses = await checkedAddresses(hop.url, options.allow, options.resolve, hop.label, signal);
      at.phase = 'waiting for the response headers';
      const response = await send(hop, addresses, signal);
      const status = response.statusCode ?? 0;
      const location = response.headers.location;
      if (REDIRECT_STATUSES.has(status) && location !== undefined) {
        response.destroy();
        if (redirects === MAX_REDIRECTS)
          throw new StepError(
            `${hop.label} redirected again; at most ${MAX_REDIRECTS} redirects are followed`,
          );
        hop = nextHop(hop, status, location);
        continue;
      }
      at.phase = 'reading the body';
      const text = (await readBody(response, hop, maxBytes)).toString('utf8');
      let json: unknown;
      if ((response.headers['content-type'] ?? '').includes('json')) {
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
      }
      if (method === 'GET' && status >= 500)
        throw new StepError(`${hop.label} answered ${status}`, { retryable: true });
      return {
        status,
        ...(method === 'GET' ? { headers: flatHeaders(response.headers) } : {}),
        body: text,
        ...(json !== undefined ? { json } : {}),
      };
    }
  } catch (error) {
    if (error instanceof StepError) throw error;
    // A GET can be tried again; a POST may have arrived, so it is never sent twice.
    const retryable = method === 'GET';
    if (timer.aborted) {
      throw new StepError(
        `${hop.label} took longer than the ${timeCapMs / 1000} s cap on http calls (${at.phase}), so the request was stopped`,
        { retryable, code: 'timeout' },
      );
    }
    if (options.signal.aborted) throw new StepError(`${hop.label} was stopped with its run`, { retryable });
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      throw new StepError(`${hop.label} failed: the host name does not resolve (${code})`, { retryable });
    throw new StepError(`${hop.label} failed: ${(error as Error).message}`, { retryable });
  }
}
