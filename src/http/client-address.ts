import type { IncomingMessage } from 'node:http';
import { BlockList, isIP } from 'node:net';
import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';

/**
 * Which proxies in front of Tandem may say who the client is (`TRUST_PROXY`): none (the
 * connection's peer is the client), a number of proxy hops, or the proxies' own addresses.
 */
export type TrustProxy =
  { kind: 'none' } | { kind: 'hops'; hops: number } | { kind: 'addresses'; list: BlockList; text: string };

export const NO_PROXY: TrustProxy = { kind: 'none' };
export const MAX_PROXY_HOPS = 10;

/** Why a `TRUST_PROXY` value cannot be used, or the setting it stands for. */
export function parseTrustProxy(text: string | undefined): TrustProxy | string {
  const value = (text ?? '').trim();
  if (value === '') return NO_PROXY;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops < 1 || hops > MAX_PROXY_HOPS)
      return `must be a number of proxies from 1 to ${MAX_PROXY_HOPS}, or their addresses`;
    return { kind: 'hops', hops };
  }
  const list = new BlockList();
  for (const part of value.split(',').map((p) => p.trim())) {
    if (part === 'loopback') {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
      continue;
    }
    const [address = '', bits, extra] = part.split('/');
    const family = isIP(address);
    const max = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !/^\d+$/.test(bits)) ||
      Number(bits) > max
    )
      return `"${part}" is not a proxy address or CIDR range; use e.g. 10.0.0.5, 10.0.0.0/8, fd00::/8 or loopback, comma-separated, or a number of proxies`;
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(bits), type);
  }
  return { kind: 'addresses', list, text: value };
}

/** An address as one form: `::ffff:1.2.3.4` is 1.2.3.4; a port or brackets around it are dropped. */
function plain(entry: string): string | undefined {
  let text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) text = bracketed[1]!;
  else if (/^\d+\.\d+\.\d+\.\d+:\d+$/.test(text)) text = text.slice(0, text.lastIndexOf(':'));
  text = text.toLowerCase();
  if (text.startsWith('::ffff:') && isIP(text.slice(7)) === 4) text = text.slice(7);
  return isIP(text) ? text : undefined;
}

const trusted = (trust: Extract<TrustProxy, { kind: 'addresses' }>, address: string) =>
  trust.list.check(address, isIP(address) === 4 ? 'ipv4' : 'ipv6');

/**
 * The address a request came from: the connection's peer, or, only when that peer is a trusted
 * proxy, the address the proxies recorded in `X-Forwarded-For` (read from the right: each trusted
 * hop names the one before it, so what a client writes into the header itself is never believed).
 */
export function clientAddressOf(
  peer: string | undefined,
  forwardedFor: string | string[] | undefined,
  trust: TrustProxy,
): string {
  const socket = plain(peer ?? '') ?? 'unknown';
  if (trust.kind === 'none' || forwardedFor === undefined) return socket;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor)
    .split(',')
    .map((h) => h.trim())
    .filter(Boolean);
  if (hops.length === 0) return socket;
  if (trust.kind === 'hops') {
    // The chain as the last proxy saw it, this connection's peer last; n proxies: n from the end.
    const chain = [...hops, socket];
    const at = Math.max(0, chain.length - 1 - trust.hops);
    return plain(chain[at]!) ?? plain(chain[at + 1] ?? '') ?? socket;
  }
  if (!trusted(trust, socket)) return socket;
  let last = socket;
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = plain(hops[i]!);
    // Garbage written by a trusted proxy's client: the proxy that passed it on is as far as is known.
    if (!hop) return last;
    if (!trusted(trust, hop)) return hop;
    last = hop;
  }
  return last;
}

/** The client address of a raw Node request (the /collab socket's upgrade, for instance). */
export function incomingAddress(request: IncomingMessage, trust: TrustProxy): string {
  return clientAddressOf(request.socket.remoteAddress, request.headers['x-forwarded-for'], trust);
}

declare module 'hono' {
  interface ContextVariableMap {
    clientAddress: string;
  }
}

/** Works out each request's client address once, as `TRUST_PROXY` says, for every route to read. */
export function rememberClientAddress(trust: TrustProxy): MiddlewareHandler {
  return async (c, next) => {
    c.set('clientAddress', clientAddressOf(peerOf(c), c.req.header('x-forwarded-for'), trust));
    await next();
  };
}

function peerOf(c: Context): string | undefined {
  try {
    return getConnInfo(c).remote.address;
  } catch {
    return undefined;
  }
}

/** The address a request came from (see `rememberClientAddress`); the peer's when not worked out. */
export function clientAddress(c: Context): string {
  return c.get('clientAddress') ?? plain(peerOf(c) ?? '') ?? 'unknown';
}
