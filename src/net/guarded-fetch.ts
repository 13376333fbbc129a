import type { IncomingMessage } from 'node:http';
import { checkedAddresses, type Resolver } from './http-address.ts';
import { nextHop, readBody, send, urlProblem, type Hop } from './hops.ts';
import { StepError } from '../errors.ts';

/**
 * How connectors reach their services. Octokit and Slack's client are given `guardedFetch`, a
 * WHATWG fetch over the http capabilities' own hops: every host (the first and each redirect's)
 * is resolved once, every address checked against the inside ranges unless the host is on
 * TANDEM_HTTP_ALLOW, and the connection made to the checked address.
 */

/** What one connector call may take: its response body and its whole exchange. */
export const CONNECTOR_CAPS = { bodyBytes: 10_000_000, seconds: 30, redirects: 5 } as const;

export interface Net {
  /** TANDEM_HTTP_ALLOW: hosts (`name` or `name:port`) that may be inside addresses. */
  allow: readonly string[];
  /** The run's signal: the call stops with its step. */
  signal: AbortSignal;
  /** How host names become addresses (the system's resolver unless a test stands in). */
  resolve?: Resolver | undefined;
}

/**
 * The connection failed before or while the service answered. `reached` is false when the
 * service cannot have seen the request (refused, unresolvable, a certificate it failed).
 */
export class ConnectionError extends Error {
  readonly reached: boolean;
  constructor(message: string, reached: boolean) {
    super(message);
    this.name = 'ConnectionError';
    this.reached = reached;
  }
}

/** Failures that happen before a request leaves: nothing was sent. */
const NEVER_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'CERT_HAS_EXPIRED',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/** Whether a socket error means the request never reached the other side. */
export function neverSent(error: unknown): boolean {
  return NEVER_SENT.has(String((error as NodeJS.ErrnoException | null)?.code));
}

/** A refusal of the address checks, said as the node's error; nothing was sent. */
function refused(error: StepError): StepError {
  return new StepError(error.message, { nothingDone: true });
}

function responseOf(incoming: IncomingMessage, body: Buffer | null, url: URL): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(incoming.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  // Bodies were decompressed as they were read.
  headers.delete('content-encoding');
  headers.delete('content-length');
  const status = incoming.statusCode ?? 0;
  const empty = status === 204 || status === 205 || status === 304;
  const response = new Response(empty || body === null ? null : new Uint8Array(body), {
    status,
    statusText: incoming.statusMessage ?? '',
    headers,
  });
  Object.defineProperty(response, 'url', { value: url.href });
  return response;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** A fetch for one service's client (`service` names it in errors: `GitHub POST api.github.com`). */
export function guardedFetch(service: string, net: Net): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const body = request.body ? Buffer.from(await request.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => (headers[name] = value));
    // Bodies come back as they are: nothing to decompress.
    headers['accept-encoding'] = 'identity';
    const url = new URL(request.url);
    let hop: Hop = {
      url,
      method: request.method,
      headers,
      body,
      label: `${service} ${request.method} ${url.host}`,
    };
    const timer = AbortSignal.timeout(CONNECTOR_CAPS.seconds * 1000);
    const signal = AbortSignal.any([net.signal, request.signal, timer]);
    try {
      for (let redirects = 0; ; redirects += 1) {
        const problem = urlProblem(hop.url);
        if (problem) throw new StepError(`${hop.label}: the URL ${problem}`, { nothingDone: true });
        let addresses;
        try {
          addresses = await checkedAddresses(hop.url, net.allow, net.resolve, hop.label, signal);
        } catch (error) {
          throw error instanceof StepError ? refused(error) : error;
        }
        const incoming = await send(hop, addresses, signal);
        const status = incoming.statusCode ?? 0;
        const location = incoming.headers.location;
        if (REDIRECTS.has(status) && location !== undefined && request.redirect !== 'manual') {
          incoming.destroy();
          if (request.redirect === 'error')
            throw new StepError(
              `${hop.label} answered ${status}, a redirect, which this client does not follow`,
              {
                nothingDone: true,
              },
            );
          if (redirects === CONNECTOR_CAPS.redirects)
            throw new ConnectionError(
              `${hop.label} redirected again; at most ${CONNECTOR_CAPS.redirects} redirects are followed`,
              true,
            );
          hop = nextHop(hop, status, location);
          continue;
        }
        return responseOf(incoming, await readBody(incoming, hop, CONNECTOR_CAPS.bodyBytes), hop.url);
      }
    } catch (error) {
      if (error instanceof StepError || error instanceof ConnectionError) throw error;
      if (timer.aborted)
        throw new ConnectionError(
          `${hop.label} took longer than ${CONNECTOR_CAPS.seconds} s, so the request was stopped`,
          true,
        );
      if (net.signal.aborted) throw new ConnectionError(`${hop.label} was stopped with its run`, true);
      const code = (error as NodeJS.ErrnoException).code;
      throw new ConnectionError(
        `${hop.label} failed: ${(error as Error).message}${code && !(error as Error).message.includes(code) ? ` (${code})` : ''}`,
        !neverSent(error),
      );
    }
  };
}
