import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { SCOPES, type Actor, type Scope } from '../domains/workspace/actor.ts';
import type { Db } from '../storage/schema.ts';
import { sharedSecret } from '../domains/workspace/settings.ts';

/** A ticket opens the live socket once, within this long after it is issued. */
export const TICKET_TTL_MS = 60_000;
/**
 * A used ticket is remembered this long past its expiry: an instance whose clock is behind by
 * less than this still finds it used.
 */
export const USED_KEEP_MS = 5 * 60_000;
/** How often an instance prunes the uses of tickets long expired. */
const PRUNE_EVERY_MS = 60_000;
const PREFIX = 'tct_';

interface TicketBody {
  /** person, workspace, scopes, document, expiry (ms since epoch), nonce (no two tickets alike) */
  p: string;
  w: string;
  s: string[];
  d: string;
  e: number;
  n?: string;
  /** The credential it was issued under (a token or a browser session), checked again while the socket is open. */
  c?: 'token' | 'session';
  i?: string;
}

/** The credential a ticket was issued under. */
export interface TicketSource {
  kind: 'token' | 'session' | 'oauth';
  credentialId: string;
}

/** Whom a ticket opens the socket for, and under which credential. */
export interface Redeemed {
  actor: Actor;
  from: { kind: 'token' | 'session'; credentialId: string } | undefined;
}

/**
 * One-minute, single-use tickets that let a signed-in browser open one document on the live
 * socket: the person as the app knows them (whatever credential signed them in) and their scopes,
 * signed with a secret every instance shares, so a ticket issued by one instance opens the socket
 * on any. The first connection a ticket authenticates uses it up, on every instance: its use is a
 * row in the shared database, inserted only if absent. Access to the document is checked again
 * when the socket opens.
 */
export function collabTickets(db: Db) {
  let secret: Promise<Buffer> | undefined;
  const key = () => (secret ??= sharedSecret(db, 'collab-tickets'));
  let pruned = 0;

  async function mac(payload: string): Promise<Buffer> {
    return createHmac('sha256', await key())
      .update(payload)
      .digest();
  }

  async function issue(
    actor: Actor,
    documentId: string,
    from?: TicketSource,
  ): Promise<{ ticket: string; expires_at: number }> {
    const expires = Date.now() + TICKET_TTL_MS;
    const body: TicketBody = {
      p: actor.personId,
      w: actor.workspaceId,
      s: [...actor.scopes],
      d: documentId,
      e: expires,
      n: randomBytes(12).toString('base64url'),
      // An OAuth access token is a secret, and never opens /api; the others are ids.
      ...(from && from.kind !== 'oauth' ? { c: from.kind, i: from.credentialId } : {}),
    };
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    return {
      ticket: `${PREFIX}${payload}.${(await mac(payload)).toString('base64url')}`,
      expires_at: expires,
    };
  }

  /** Records a ticket's first use; false when it was used before (here or on another instance). */
  async function use(signature: Buffer, expires: number): Promise<boolean> {
    const now = Date.now();
    if (now - pruned > PRUNE_EVERY_MS) {
      pruned = now;
      await db
        .deleteFrom('collab_ticket_uses')
        .where('expires_at', '<', now - USED_KEEP_MS)
        .execute();
    }
    const inserted = await db
      .insertInto('collab_ticket_uses')
      // The signature as computed here, not as given: other spellings of it decode alike.
      .values({ ticket: signature.toString('base64url'), expires_at: expires })
      .onConflict((oc) => oc.column('ticket').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /**
   * The person a ticket stands for, when it is genuine, unexpired, for this document and not
   * used before; this use uses it up. A used ticket is refused as any invalid one is (null).
   */
  async function redeem(ticket: string, documentId: string): Promise<Redeemed | null> {
    if (!ticket.startsWith(PREFIX)) return null;
    const [payload, signature, extra] = ticket.slice(PREFIX.length).split('.');
    if (!payload || !signature || extra !== undefined) return null;
    const expected = await mac(payload);
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    let body: TicketBody;
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as TicketBody;
    } catch {
      return null;
    }
    if (body.d !== documentId || !(body.e > Date.now())) return null;
    if (typeof body.p !== 'string' || typeof body.w !== 'string' || !Array.isArray(body.s)) return null;
    if (!(await use(expected, body.e))) return null;
    const scopes = body.s.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s));
    const from =
      (body.c === 'token' || body.c === 'session') && typeof body.i === 'string'
        ? { kind: body.c, credentialId: body.i }
        : undefined;
    return { actor: { personId: body.p, workspaceId: body.w, scopes: new Set(scopes) }, from };
  }

  return { issue, redeem };
}

export type CollabTickets = ReturnType<typeof collabTickets>;
