import type { WebSocket } from 'ws';
import { addressKey } from '../domains/auth/throttle.ts';

/** What a socket may do before any document on it is authenticated. */
export interface AnonymousLimits {
  /** Unauthenticated sockets open at once from one address (an IPv6 address counts by its /64). */
  perAddress: number;
  /** Time from the upgrade to the first successful authentication. */
  authenticateMs: number;
  /** Bytes a socket may send before it is authenticated (its messages wait in memory until then). */
  preAuthBytes: number;
}

export const ANONYMOUS_LIMITS: AnonymousLimits = {
  perAddress: 16,
  authenticateMs: 5_000,
  preAuthBytes: 16 * 1024,
};

/** A socket not authenticated yet: its slot for its address, its clock and what it sent. */
export interface Pending {
  /** Counts bytes received; false once past what may wait for authentication. */
  received(bytes: number): boolean;
  authenticated(): void;
  /** The socket closed: its slot is free. */
  closed(): void;
}

/**
 * Bounds what sockets cost before they authenticate: a few per address, a few seconds to
 * authenticate, a few KB of messages held meanwhile. Everything is released when they
 * authenticate or close.
 */
export function anonymousSockets(limits: AnonymousLimits) {
  const open = new Map<string, number>();

  function release(key: string): void {
    const left = (open.get(key) ?? 1) - 1;
    if (left <= 0) open.delete(key);
    else open.set(key, left);
  }

  /** Takes a slot for one more unauthenticated socket from `address`; null when it has its share. */
  function admit(address: string): string | null {
    const key = addressKey(address);
    const count = open.get(key) ?? 0;
    if (count >= limits.perAddress) return null;
    open.set(key, count + 1);
    return key;
  }

  /** Follows a socket admitted under `key` until it authenticates or closes. */
  function track(ws: WebSocket, key: string): Pending {
    let state: 'waiting' | 'authenticated' | 'closed' = 'waiting';
    let bytes = 0;
    const timer = setTimeout(() => {
      if (state === 'waiting') ws.close(1008, `Authenticate within ${limits.authenticateMs / 1000} seconds`);
    }, limits.authenticateMs);
    timer.unref();
    const leave = (next: 'authenticated' | 'closed') => {
      if (state !== 'waiting') return;
      state = next;
      clearTimeout(timer);
      release(key);
    };
    return {
      received(n) {
        if (state !== 'waiting') return true;
        bytes += n;
        return bytes <= limits.preAuthBytes;
      },
      authenticated: () => leave('authenticated'),
      closed: () => leave('closed'),
    };
  }

  return {
    admit,
    track,
    /** Release a slot taken for an upgrade that did not complete. */
    release,
    /** Unauthenticated sockets open now. */
    count: () => [...open.values()].reduce((a, b) => a + b, 0),
  };
}
