import { isIP } from 'node:net';

/** A client's metadata document may be at most this large, and must arrive within this time. */
export const CIMD_MAX_BYTES = 5 * 1024;
export const CIMD_TIMEOUT_MS = 2_500;
const CACHE_MS = 30_000;

/** localhost, 127.0.0.0/8 or ::1: a name that can only mean this machine. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * A Client ID Metadata Document on this machine, allowed only while Tandem itself runs on a
 * loopback address (development and tests; any other `client_id` URL must be https and is
 * fetched by the authorization server's own guarded fetch). Returns undefined for any id that
 * is not such a URL.
 */
export function loopbackClientId(id: string): URL | undefined {
  if (!/^https?:\/\//i.test(id)) return undefined;
  let url: URL;
  try {
    url = new URL(id);
  } catch {
    return undefined;
  }
  if (!isLoopbackHost(url.hostname) || url.username || url.password || url.hash) return undefined;
  if (url.pathname === '/' || url.href !== id) return undefined;
  return url;
}

export class ClientDocumentError extends Error {}

const FORBIDDEN_AUTH = new Set(['client_secret_basic', 'client_secret_post', 'client_secret_jwt']);
const cache = new Map<string, { properties: Record<string, unknown>; until: number }>();
/** A document that failed is not fetched again for a moment (one request looks a client up twice). */
const FAILURE_MS = 5_000;
const failures = new Map<string, { error: ClientDocumentError; until: number }>();

/**
 * Fetches a loopback client's metadata document with the same limits as any other: no
 * redirects, at most 5 KiB, within 2.5 s; it must be a JSON object naming itself as `client_id`
 * and holding no secret.
 */
export async function fetchClientDocument(url: URL): Promise<Record<string, unknown>> {
  const cached = cache.get(url.href);
  if (cached && cached.until > Date.now()) return cached.properties;
  const failed = failures.get(url.href);
  if (failed && failed.until > Date.now()) throw failed.error;
  try {
    const properties = await fetchFresh(url);
    cache.set(url.href, { properties, until: Date.now() + CACHE_MS });
    return properties;
  } catch (error) {
    if (error instanceof ClientDocumentError)
      failures.set(url.href, { error, until: Date.now() + FAILURE_MS });
    throw error;
  }
}

async function fetchFresh(url: URL): Promise<Record<string, unknown>> {
  let response: Response;
  try {
    response = await fetch(url, {
      redirect: 'manual',
      signal: AbortSignal.timeout(CIMD_TIMEOUT_MS),
      headers: { accept: 'application/json' },
    });
  } catch (error) {
    throw new ClientDocumentError(
      `the client's metadata document could not be fetched (${(error as Error).message})`,
    );
  }
  if (response.status !== 200) {
    await response.body?.cancel();
    throw new ClientDocumentError(`the client's metadata document answered ${response.status}, not 200`);
  }
  const declared = Number(response.headers.get('content-length') ?? NaN);
  if (declared > CIMD_MAX_BYTES) {
    await response.body?.cancel();
    throw new ClientDocumentError('the client’s metadata document is larger than 5 KiB');
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      // Leaving the loop cancels the stream: nothing past the limit is read.
      if (size > CIMD_MAX_BYTES)
        throw new ClientDocumentError('the client’s metadata document is larger than 5 KiB');
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof ClientDocumentError) throw error;
    throw new ClientDocumentError(
      `the client's metadata document could not be read (${(error as Error).message})`,
    );
  }
  let properties: unknown;
  try {
    properties = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new ClientDocumentError('the client’s metadata document is not JSON');
  }
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) {
    throw new ClientDocumentError('the client’s metadata document is not a JSON object');
  }
  const doc = properties as Record<string, unknown>;
  if (doc.client_id !== url.href) {
    throw new ClientDocumentError('the client’s metadata document names another client_id');
  }
  if ('client_secret' in doc || FORBIDDEN_AUTH.has(String(doc.token_endpoint_auth_method))) {
    throw new ClientDocumentError('a client metadata document may not use a client secret');
  }
  return { token_endpoint_auth_method: 'none', ...doc };
}
