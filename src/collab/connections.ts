import { log } from '../observability/log.ts';
import { Document, Hocuspocus, type Connection, type ConnectionConfiguration } from '@hocuspocus/server';
import type { LiveSession } from '../domains/documents/live.ts';
import type { LiveDoc } from '../domains/documents/store.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Pending } from './anonymous.ts';
import type { HeldCredential } from './credentials.ts';
import type { ConnectionContext } from './live-document.ts';
import type { onceEach } from './log-once.ts';
import { updateIn } from './messages.ts';
import type { CollabOptions } from './socket.ts';
import type { CollabTickets } from './tickets.ts';

// The socket's connections: who they are, what each may do, and what happens to what they send.

/**
 * Why a connection was refused. A document that cannot be opened is one reason, whatever the cause.
 * A connection whose person can no longer open the document is closed with code 4404 and the
 * same reason; one whose right to edit changed is sent a stateless `{"access": "readonly" |
 * "read-write"}`.
 */
export const REFUSED = {
  notFound: 'Document not found',
  credential: 'Invalid or expired token',
  scope: 'This token does not carry the documents:read scope',
  ended: 'The credential this connection opened with has ended; sign in again',
  tooMany: 'You have too many documents open live; close one to open another',
} as const;

/** The close code of a connection whose credential ended. */
export const ENDED_CODE = 4401;

/** The close code of a connection whose change was refused (the reason says why). */
export const REFUSED_CODE = 4400;

interface Authenticated {
  actor: Actor;
  /** Undefined for a ticket issued without naming its credential. */
  credential: HeldCredential | undefined;
}

export interface Context extends ConnectionContext {
  actor: Actor;
  credential: HeldCredential | undefined;
  session: LiveSession;
  /** Whether the connection may edit, as its client was last told. */
  writable: boolean;
  live?: LiveDoc;
  connection?: Connection<Context>;
}

/** What the socket's connections share: the functions below take it first. */
export interface Connections {
  services: Services;
  options: CollabOptions;
  tickets: CollabTickets;
  open: Set<Connection<Context>>;
  /** Connections whose current message was refused: read-only until it is handled. */
  refusedNow: Set<Connection<Context>>;
  /** Connections whose credential ended: nothing they send lands. */
  endedNow: WeakSet<Connection<Context>>;
  logOnce: ReturnType<typeof onceEach>;
  /** Each socket's pre-authentication bounds, by the request Hocuspocus hands to the hooks. */
  pendingOf: WeakMap<Request, Pending>;
}

function mayWrite(context: Context): boolean {
  return context.session.mayEdit && context.actor.scopes.has('documents:write');
}

async function actorFor(c: Connections, token: string, documentId: string): Promise<Authenticated | null> {
  if (typeof token !== 'string' || token === '') return null;
  // A ticket is used up by the connection it authenticates; used again, it is invalid.
  const ticket = await c.tickets.redeem(token, documentId);
  if (ticket) return { actor: ticket.actor, credential: ticket.from && { ...ticket.from, expiresAt: null } };
  const credential = await c.services.credentials.bearer(token, c.options.oauthAudience);
  return credential && { actor: credential.actor, credential };
}

/** Whether opening one more document would take the person past what they may hold open here. */
function tooManyOpen(c: Connections, personId: string, documentName: string): boolean {
  const open = new Set<string>();
  for (const connection of c.open)
    if (connection.context.actor.personId === personId) open.add(connection.context.session.documentId);
  return !open.has(documentName) && open.size >= (c.options.maxDocumentsPerPerson ?? 20);
}

class LiveHocuspocus extends Hocuspocus<Context> {
  /** The store's live document, never a second copy. */
  override async createDocument(
    _name: string,
    _request: Request,
    _socketId: string,
    _config: ConnectionConfiguration,
    context?: Context,
  ): Promise<Document> {
    if (!context?.session) throw new Error('a live document needs an authenticated connection');
    const live = await context.session.open();
    if (!(live.doc instanceof Document)) throw new Error(`document ${live.id} is not a live document`);
    context.live = live;
    return live.doc;
  }
}

/** Hocuspocus, keeping the connections and their sync, with Tandem's hooks. */
export function liveHocuspocus(c: Connections): Hocuspocus<Context> {
  return new LiveHocuspocus({
    quiet: true,
    onAuthenticate: ({ token, documentName, connectionConfig, request }) =>
      authenticate(c, token, documentName, connectionConfig, request),
    async connected({ connection, context }) {
      context.connection = connection;
      c.open.add(connection);
      const reason = context.session.readOnlyReason;
      if (reason) connection.sendStateless(JSON.stringify({ readOnly: reason }));
    },
    async onDisconnect({ context }) {
      if (context.connection) c.open.delete(context.connection);
    },
    async beforeHandleMessage({ connection, context, update }) {
      judgeMessage(c, connection, context, update);
    },
    async afterHandleMessage({ connection, context }) {
      if (c.refusedNow.delete(connection)) connection.readOnly = !mayWrite(context);
    },
  });
}

async function authenticate(
  c: Connections,
  token: string,
  documentName: string,
  connectionConfig: ConnectionConfiguration,
  request: Request,
): Promise<Context> {
  const authenticated = await actorFor(c, token, documentName);
  // Thrown without a message: a refusal, not a failure to log.
  if (!authenticated) throw { reason: REFUSED.credential };
  const { actor, credential } = authenticated;
  if (!actor.scopes.has('documents:read')) throw { reason: REFUSED.scope };
  if (tooManyOpen(c, actor.personId, documentName)) throw { reason: REFUSED.tooMany };
  let session: LiveSession;
  try {
    session = await c.services.documents.live.session(actor, documentName);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') throw { reason: REFUSED.notFound };
    throw error;
  }
  const context: Context = { actor, credential, session, name: session.name, writable: false };
  // Opened now, so a document past its bounds is known read-only before the person is told their scope.
  if (mayWrite(context)) await session.open();
  context.writable = mayWrite(context);
  connectionConfig.readOnly = !context.writable;
  c.pendingOf.get(request)?.authenticated();
  return context;
}

/** A message before Hocuspocus handles it: a person's change lands only through their session. */
function judgeMessage(
  c: Connections,
  connection: Connection<Context>,
  context: Context,
  message: Uint8Array,
): void {
  if (c.endedNow.has(connection)) connection.readOnly = true;
  if (connection.readOnly) return;
  if (!context.live) {
    // Never the case once a document is open; should it be, nothing passes unjudged.
    connection.readOnly = true;
    c.refusedNow.add(connection);
    return;
  }
  const update = updateIn(message);
  if (!update) return;
  try {
    context.session.apply(context.live, update);
  } catch (error) {
    if (!(error instanceof DomainError)) throw error;
    // Refused: Hocuspocus handles it as from a reader (dropped, not acknowledged), and the
    // connection is told why and closed: what its replica holds beyond this is not the document's.
    connection.readOnly = true;
    c.refusedNow.add(connection);
    c.logOnce(connection, 'refused', () =>
      log.warn(
        { document: context.session.documentId, person: context.actor.personId, reason: error.message },
        'live edit refused',
      ),
    );
    connection.sendStateless(JSON.stringify({ refused: error.message }));
    c.open.delete(connection);
    connection.close({ code: REFUSED_CODE, reason: error.message });
  }
}

/**
 * Checks every connection's access again (of one document, or all): a person who can no
 * longer edit follows read-only from now on; one who can no longer open it is disconnected.
 */
export async function recheck(c: Connections, documentId?: string): Promise<void> {
  for (const connection of [...c.open]) {
    const context = connection.context;
    if (documentId !== undefined && context.session.documentId !== documentId) continue;
    const access = await context.session.recheck();
    if (!access) {
      c.open.delete(connection);
      connection.close({ code: 4404, reason: REFUSED.notFound });
      continue;
    }
    const writable = mayWrite(context);
    // A connection whose message is being refused right now is set back when it is handled.
    if (!c.refusedNow.has(connection)) connection.readOnly = !writable;
    if (context.writable === writable) continue;
    context.writable = writable;
    // The client learns it at once, so an editor that became a reader stops offering to edit
    // (and a reader made an editor may start).
    connection.sendStateless(JSON.stringify({ access: writable ? 'read-write' : 'readonly' }));
  }
}
