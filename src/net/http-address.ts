import { lookup as systemLookup } from 'node:dns/promises';
import type { LookupAddress } from 'node:dns';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import { StepError } from '../errors.ts';

/**
 * Which addresses are "inside": this machine, the private networks around it and the cloud's
 * metadata service. The http capabilities refuse them unless the host is on TANDEM_HTTP_ALLOW.
 */

type Range4 = readonly [first: number, bits: number, what: string];

const V4 = (a: number, b: number, c: number, d: number) => ((a << 24) | (b << 16) | (c << 8) | d) >>> 0;

/** Checked in order: the first range holding the address names it. */
const INSIDE_V4: readonly Range4[] = [
  [V4(0, 0, 0, 0), 8, 'an unspecified ("this network") address'],
  [V4(10, 0, 0, 0), 8, 'a private address'],
  [V4(100, 64, 0, 0), 10, 'a private (carrier-grade NAT) address'],
  [V4(127, 0, 0, 0), 8, 'a loopback address'],
  [V4(169, 254, 169, 254), 32, 'the cloud metadata address'],
  [V4(169, 254, 0, 0), 16, 'a link-local address'],
  [V4(172, 16, 0, 0), 12, 'a private address'],
  [V4(192, 168, 0, 0), 16, 'a private address'],
  [V4(224, 0, 0, 0), 4, 'a multicast address'],
  [V4(255, 255, 255, 255), 32, 'the broadcast address'],
  [V4(240, 0, 0, 0), 4, 'a reserved address'],
];

/** Host names of cloud metadata services, refused by name before they are resolved. */
const METADATA_HOSTS = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
  'metadata.azure.internal',
  'instance-data',
  'instance-data.ec2.internal',
]);

export function isMetadataHost(hostname: string): boolean {
  return METADATA_HOSTS.has(hostname.toLowerCase().replace(/\.+$/, ''));
}

function v4Number(text: string): number {
  const [a = 0, b = 0, c = 0, d = 0] = text.split('.').map(Number);
  return V4(a, b, c, d);
}

function v4Text(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

function insideV4(n: number): string | undefined {
  for (const [first, bits, what] of INSIDE_V4) {
    const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
    if ((n & mask) >>> 0 === first) return what;
  }
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address (a zone suffix and brackets are ignored). */
function v6Groups(text: string): number[] | undefined {
  let s = text.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  if (!isIPv6(s)) return undefined;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(s);
  if (dotted) {
    const n = v4Number(dotted[1]!);
    s = `${s.slice(0, dotted.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const part = (p: string) => (p === '' ? [] : p.split(':').map((g) => parseInt(g, 16)));
  const first = part(head);
  const last = tail === undefined ? [] : part(tail);
  return [...first, ...Array<number>(8 - first.length - last.length).fill(0), ...last];
}

function insideV6(g: number[]): string | undefined {
  const zeros = (from: number, to: number) => g.slice(from, to).every((x) => x === 0);
  /** The IPv4 address in groups i and i+1, judged as itself. */
  const embedded = (i: number, form: string) => {
    const n = ((g[i]! << 16) | g[i + 1]!) >>> 0;
    const what = insideV4(n);
    return what && `${what} (${v4Text(n)}) in ${form} form`;
  };
  if (zeros(0, 8)) return 'the unspecified address';
  if (zeros(0, 7) && g[7] === 1) return 'a loopback address';
  if (zeros(0, 5) && g[5] === 0xffff) return embedded(6, 'IPv4-mapped IPv6');
  if (zeros(0, 6)) return embedded(6, 'IPv4-compatible IPv6');
  if (g[0] === 0x64 && g[1] === 0xff9b && zeros(2, 6)) return embedded(6, 'NAT64');
  if (g[0] === 0x64 && g[1] === 0xff9b && g[2] === 1) return 'a private (local-use NAT64) address';
  if (g[0] === 0x2002) return embedded(1, '6to4');
  const top = g[0]!;
  if ((top & 0xffc0) === 0xfe80) return 'a link-local address';
  if ((top & 0xffc0) === 0xfec0) return 'a private (site-local) address';
  if ((top & 0xfe00) === 0xfc00) return 'a private (unique-local) address';
  if ((top & 0xff00) === 0xff00) return 'a multicast address';
  return undefined;
}

/**
 * What makes an IP address inside ("a loopback address", …), or undefined for a public one.
 * Takes the dotted and colon forms a resolver or a parsed URL gives (URL parsing already turns
 * `2130706433` or `0x7f.1` into `127.0.0.1`); anything else is refused as not an address.
 */
export function insideAddress(address: string): string | undefined {
  if (isIPv4(address)) return insideV4(v4Number(address));
  const groups = v6Groups(address);
  if (groups) return insideV6(groups);
  return 'not an IP address';
}

export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

const systemResolver: Resolver = (hostname) => systemLookup(hostname, { all: true, order: 'verbatim' });

/** The host without the brackets of an IPv6 literal. */
export function bareHost(url: URL): string {
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
