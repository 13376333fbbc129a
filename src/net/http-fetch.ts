import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { insideAddress, isMetadataHost } from './http-address.ts';
import { LimitError, StepError } from '../errors.ts';

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

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

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

/** One request of an exchange (connectors send any method and bytes through the same hops). */
export interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  /** How errors name this hop: `GET a.example` or `GET a.example, redirected to b.example`. */
  label: string;
}

const systemResolver: Resolver = (hostname) => systemLookup(hostname, { all: true, order: 'verbatim' });

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** What is wrong with a URL the capabilities were asked to reach, if anything. */
export function urlProblem(url: URL): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `uses the ${url.protocol.slice(0, -1)} scheme; only http and https URLs can be reached`;
  if (url.username !== '' || url.password !== '')
    return 'carries a user name or password; send credentials in a header (authorization) instead';
  return undefined;
}

function withoutHeaders(headers: Record<string, string>, names: string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name.toLowerCase())));
}

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

/** The hop a redirect leads to, with the method, body and headers a browser would send there. */
export function nextHop(hop: Hop, status: number, location: string): Hop {
  let url: URL;
  try {
    url = new URL(location, hop.url);
  } catch {
    throw new StepError(`${hop.label} redirected to a Location that is not a URL`);
  }
  const problem = urlProblem(url);
  if (problem) throw new StepError(`${hop.label} redirected to a URL that ${problem}`);
  const toGet = status === 303 || ((status === 301 || status === 302) && hop.method === 'POST');
  let headers = toGet ? withoutHeaders(hop.headers, ['content-type', 'content-length']) : hop.headers;
  if (url.origin !== hop.url.origin)
    headers = withoutHeaders(headers, ['authorization', 'cookie', 'proxy-authorization']);
  const first = hop.label.split(', redirected to ')[0]!;
  return {
    url,
    method: toGet ? 'GET' : hop.method,
    headers,
    body: toGet ? undefined : hop.body,
    label: `${first}, redirected to ${url.host}`,
  };
}

/** The host without the brackets of an IPv6 literal. */
function bareHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '');
}

function allowed(url: URL, allow: readonly string[]): boolean {
  return allow.some((entry) => entry === url.host || entry === url.hostname);
}

/** Settles with `promise`, or rejects with the signal's reason as soon as it aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  signal.throwIfAborted();
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The addresses a hop may connect to: the host's own when it is an IP literal, else every address
 * it resolves to; refused when one of them is inside and the host is not on the allow list.
 */
export async function checkedAddresses(
  url: URL,
  allow: readonly string[],
  resolve: Resolver = systemResolver,
  label = `${url.host}`,
  signal: AbortSignal = new AbortController().signal,
): Promise<LookupAddress[]> {
  const listed = allowed(url, allow);
  const host = bareHost(url);
  const refuse = (why: string) =>
    new StepError(
      `${label} refused: ${why}; ${url.host} is not on the allow list (add it to TANDEM_HTTP_ALLOW if automations should reach it)`,
    );
  if (!listed && isMetadataHost(host)) throw refuse(`${host} is a cloud metadata host`);
  const family = isIP(host);
  if (family !== 0) {
    const inside = insideAddress(host);
    if (!listed && inside) throw refuse(`${host} is ${inside}`);
    return [{ address: host, family }];
  }
  const addresses = await abortable(resolve(host), signal);
  if (addresses.length === 0) throw new StepError(`${label} failed: ${host} has no address`);
  for (const { address } of addresses) {
    const inside = insideAddress(address);
    if (!listed && inside) throw refuse(`${host} resolves to ${address}, ${inside}`);
  }
  return addresses;
}

/** A lookup that answers with the addresses already checked, never asking DNS again. */
function pinned(addresses: LookupAddress[]): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all) callback(null, addresses);
    else callback(null, addresses[0]!.address, addresses[0]!.family);
  };
}

/** Sends one hop; settles when the response's headers arrive. */
export function send(hop: Hop, addresses: LookupAddress[], signal: AbortSignal): Promise<IncomingMessage> {
  const { url } = hop;
  return new Promise<IncomingMessage>((resolve, reject) => {
    try {
      const request = (url.protocol === 'https:' ? https : http).request(
        {
          protocol: url.protocol,
          hostname: bareHost(url),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method: hop.method,
          headers: hop.headers,
          agent: false,
          lookup: pinned(addresses),
          signal,
        },
        resolve,
      );
      request.on('error', reject);
      request.end(hop.body);
    } catch (error) {
      // Node checks header names and values as the request is made.
      reject(new StepError(`${hop.label} was not sent: ${(error as Error).message}`));
    }
  });
}

function decoderFor(encoding: string | undefined) {
  switch (encoding?.trim().toLowerCase()) {
    case 'gzip':
    case 'x-gzip':
      return createGunzip();
    case 'deflate':
      return createInflate();
    case 'br':
      return createBrotliDecompress();
    default:
      return undefined;
  }
}

/** The body, decompressed, read chunk by chunk; the connection is cut once it passes the cap. */
export async function readBody(response: IncomingMessage, hop: Hop, maxBytes: number): Promise<Buffer> {
  const tooLarge = () =>
    new LimitError(
      `${hop.label}: the response body is larger than the ${maxBytes.toLocaleString('en-US')}-byte cap on http responses, so the request was stopped`,
    );
  try {
    if (Number(response.headers['content-length']) > maxBytes) throw tooLarge();
    const decoder = decoderFor(response.headers['content-encoding']);
    const source: Readable = decoder ? pipeline(response, decoder, () => {}) : response;
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of source as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
    return Buffer.concat(chunks);
  } finally {
    response.destroy();
  }
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
