import type { LookupAddress } from 'node:dns';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { bareHost } from './http-address.ts';
import { LimitError, StepError } from '../errors.ts';

// One hop of an outbound exchange: the URL checks, the redirect rules, sending to addresses
// already checked, and reading the body under its cap. The http capabilities (http-fetch.ts) and
// the connectors' fetch (guarded-fetch.ts) go through the same hops.

/** One request of an exchange (connectors send any method and bytes through the same hops). */
export interface Hop {
  url: URL;
  method: string;
  headers: Record<string, string>;
  body: string | Buffer | undefined;
  /** How errors name this hop: `GET a.example` or `GET a.example, redirected to b.example`. */
  label: string;
}

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
