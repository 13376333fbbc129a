import { log } from '../observability/log.ts';
import type { IncomingMessage as HttpRequest } from 'node:http';
import type { Duplex } from 'node:stream';
import {
  Document,
  Hocuspocus,
  type Connection,
  type ConnectionConfiguration,
  type WebSocketLike,
} from '@hocuspocus/server';
import { WebSocketServer, type WebSocket } from 'ws';
import type { LiveSession } from '../domains/documents/live.ts';
import type { LiveDoc } from '../domains/documents/store.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { liveDocumentHooks, type ConnectionContext } from './live-document.ts';
import { anonymousSockets, ANONYMOUS_LIMITS, type AnonymousLimits, type Pending } from './anonymous.ts';
import { onceEach } from './log-once.ts';
import { pipe, updateIn } from './messages.ts';
import { collabTickets } from './tickets.ts';
import { watchCredentials, type HeldCredential } from './credentials.ts';

/** Where `tandem serve` takes live-editing connections. */
export const COLLAB_PATH = '/collab';

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

export interface CollabOptions {
  /**
   * OAuth access tokens issued for this resource open the socket too (the authorization server
   * issues them for `/mcp`: the same person, the same scopes).
   */
  oauthAudience?: string;
  /** The largest message a client may send (a whole document's state fits). */
  maxMessageBytes?: number;
  /** What one socket may send per second before it is closed. */
  maxMessagesPerSecond?: number;
  maxBytesPerSecond?: number;
  /** How often every connection's access is checked again (roles change, documents are archived). */
  recheckMs?: number;
  /** What a socket may do before it authenticates (defaults in anonymous.ts). */
  anonymous?: Partial<AnonymousLimits>;
  /** The client's address for an upgrade request (behind trusted proxies, from X-Forwarded-For). */
  addressOf?: (req: HttpRequest) => string;
  /** How often every connection's credential is checked again (at once when one ends here or, over Redis, elsewhere). */
  credentialRecheckMs?: number;
  /** Documents one person may hold open live here at once (each costs memory while open). */
  maxDocumentsPerPerson?: number;
}

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

const MiB = 1024 * 1024;

/** The close code of a connection whose change was refused (the reason says why). */
export const REFUSED_CODE = 4400;

/**
 * The live-editing socket: Hocuspocus's protocol, over the documents service. Hocuspocus keeps
 * the connections and their sync; the documents come from the store (one per document, the one
 * agents write to), and every change a person sends goes through the documents service, which
 * checks it against what they may do and the document's shape before it lands.
 */
export async function collabSocket(services: Services, options: CollabOptions = {}) {
  const documents = services.documents;
  await documents.store.extend(liveDocumentHooks);
  const tickets = collabTickets(services.deps.db);
  const maxMessagesPerSecond = options.maxMessagesPerSecond ?? 300;
  const maxBytesPerSecond = options.maxBytesPerSecond ?? 16 * MiB;
  const connections = new Set<Connection<Context>>();
  /** Connections whose current message was refused: read-only until it is handled. */
  const refusedNow = new Set<Connection<Context>>();
  /** Connections whose credential ended: nothing they send lands. */
  const endedNow = new WeakSet<Connection<Context>>();
  const logOnce = onceEach();
  let closing = false;
  const anonymous = anonymousSockets({ ...ANONYMOUS_LIMITS, ...options.anonymous });
  /** Each socket's pre-authentication bounds, by the request Hocuspocus hands to the hooks. */
  const pendingOf = new WeakMap<Request, Pending>();

  const mayWrite = (context: Context) =>
    context.session.mayEdit && context.actor.scopes.has('documents:write');

  async function actorFor(token: string, documentId: string): Promise<Authenticated | null> {
    if (typeof token !== 'string' || token === '') return null;
    // A ticket is used up by the connection it authenticates; used again, it is invalid.
    const ticket = await tickets.redeem(token, documentId);
    if (ticket)
      return { actor: ticket.actor, credential: ticket.from && { ...ticket.from, expiresAt: null } };
    const credential = await services.credentials.bearer(token, options.oauthAudience);
    return credential && { actor: credential.actor, credential };
  }

  /** Whether opening one more document would take the person past what they may hold open here. */
  function tooManyOpen(personId: string, documentName: string): boolean {
    const open = new Set<string>();
    for (const c of connections)
      if (c.context.actor.personId === personId) open.add(c.context.session.documentId);
    return !open.has(documentName) && open.size >= (options.maxDocumentsPerPerson ?? 20);
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

  const hocuspocus = new LiveHocuspocus({
    quiet: true,
    async onAuthenticate({ token, documentName, connectionConfig, request }) {
      const authenticated = await actorFor(token, documentName);
      // Thrown without a message: a refusal, not a failure to log.
      if (!authenticated) throw { reason: REFUSED.credential };
      const { actor, credential } = authenticated;
      if (!actor.scopes.has('documents:read')) throw { reason: REFUSED.scope };
      if (tooManyOpen(actor.personId, documentName)) throw { reason: REFUSED.tooMany };
      let session: LiveSession;
      try {
        session = await documents.live.session(actor, documentName);
      } catch (error) {
        if (error instanceof DomainError && error.code === 'not_found') throw { reason: REFUSED.notFound };
        throw error;
      }
      const context: Context = { actor, credential, session, name: session.name, writable: false };
      // Opened now, so a document past its bounds is known read-only before the person is told their scope.
      if (mayWrite(context)) await session.open();
      context.writable = mayWrite(context);
      connectionConfig.readOnly = !context.writable;
      pendingOf.get(request)?.authenticated();
      return context;
    },
    async connected({ connection, context }) {
      context.connection = connection;
      connections.add(connection);
      const reason = context.session.readOnlyReason;
      if (reason) connection.sendStateless(JSON.stringify({ readOnly: reason }));
    },
    async onDisconnect({ context }) {
      if (context.connection) connections.delete(context.connection);
    },
    async beforeHandleMessage({ connection, context, update: message }) {
      if (endedNow.has(connection)) connection.readOnly = true;
      if (connection.readOnly) return;
      if (!context.live) {
        // Never the case once a document is open; should it be, nothing passes unjudged.
        connection.readOnly = true;
        refusedNow.add(connection);
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
        refusedNow.add(connection);
        logOnce(connection, 'refused', () =>
          log.warn(
            { document: context.session.documentId, person: context.actor.personId, reason: error.message },
            'live edit refused',
          ),
        );
        connection.sendStateless(JSON.stringify({ refused: error.message }));
        connections.delete(connection);
        connection.close({ code: REFUSED_CODE, reason: error.message });
      }
    },
    async afterHandleMessage({ connection, context }) {
      if (refusedNow.delete(connection)) connection.readOnly = !mayWrite(context);
    },
  });

  const sockets = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes ?? 8 * MiB });

  function accept(ws: WebSocket, req: HttpRequest, slot: string): void {
    const request = new Request(new URL(req.url ?? COLLAB_PATH, 'http://localhost'));
    const pending = anonymous.track(ws, slot);
    pendingOf.set(request, pending);
    const client = hocuspocus.handleConnection(ws as unknown as WebSocketLike, request);
    pipe(ws, client, pending, { maxMessagesPerSecond, maxBytesPerSecond, logOnce });
  }

  /** Takes the upgrade of `/collab`; any other upgrade is answered 404. */
  function handleUpgrade(req: HttpRequest, socket: Duplex, head: Buffer): void {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== COLLAB_PATH || closing) {
      const status = closing ? '503 Service Unavailable' : '404 Not Found';
      socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      return;
    }
    const address = options.addressOf?.(req) ?? req.socket.remoteAddress ?? 'unknown';
    const slot = anonymous.admit(address);
    if (slot === null) {
      socket.end('HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      return;
    }
    // The slot is the socket's until it authenticates or closes; an upgrade that fails gives it back.
    let taken = false;
    socket.once('close', () => {
      if (!taken) anonymous.release(slot);
    });
    sockets.handleUpgrade(req, socket, head, (ws) => {
      taken = true;
      accept(ws, req, slot);
    });
  }

  /**
   * Checks every connection's access again (of one document, or all): a person who can no
   * longer edit follows read-only from now on; one who can no longer open it is disconnected.
   */
  async function recheck(documentId?: string): Promise<void> {
    for (const connection of [...connections]) {
      const context = connection.context;
      if (documentId !== undefined && context.session.documentId !== documentId) continue;
      const access = await context.session.recheck();
      if (!access) {
        connections.delete(connection);
        connection.close({ code: 4404, reason: REFUSED.notFound });
        continue;
      }
      const writable = mayWrite(context);
      // A connection whose message is being refused right now is set back when it is handled.
      if (!refusedNow.has(connection)) connection.readOnly = !writable;
      if (context.writable === writable) continue;
      context.writable = writable;
      // The client learns it at once, so an editor that became a reader stops offering to edit
      // (and a reader made an editor may start).
      connection.sendStateless(JSON.stringify({ access: writable ? 'read-write' : 'readonly' }));
    }
  }

  // Sharing changed (here, or on another instance through Redis): who is connected follows now.
  const unsubscribe = services.sharing.onChange((artifactId) => {
    recheck(artifactId).catch((error: unknown) =>
      log.error({ err: error, artifact: artifactId }, 'could not check live connections again'),
    );
  });

  const recheckTimer = setInterval(() => {
    recheck().catch((error: unknown) => log.error({ err: error }, 'could not check live connections again'));
  }, options.recheckMs ?? 15_000);
  recheckTimer.unref();

  const credentialWatch = watchCredentials(services, connections, {
    everyMs: options.credentialRecheckMs ?? 5_000,
    ended: (connection) => {
      endedNow.add(connection);
      connection.readOnly = true;
      connection.close({ code: ENDED_CODE, reason: REFUSED.ended });
    },
  });

  /** Closes every connection; people's edits are stored when the documents service closes. */
  async function close(): Promise<void> {
    closing = true;
    clearInterval(recheckTimer);
    await credentialWatch.stop();
    unsubscribe();
    const open = [...sockets.clients];
    await Promise.all(
      open.map(
        (ws) =>
          new Promise<void>((resolve) => {
            const timer = setTimeout(() => ws.terminate(), 1000);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            ws.close(1001, 'Server shutting down');
          }),
      ),
    );
    await new Promise<void>((resolve) => sockets.close(() => resolve()));
  }

  return {
    handleUpgrade,
    recheck,
    /** Closes connections whose credential ended; resolves once checked. */
    recheckCredentials: credentialWatch.checkNow,
    close,
    /** Connections open now, for tests and measurements. */
    connectionCount: () => connections.size,
    /** Sockets open now that have not authenticated. */
    anonymousCount: () => anonymous.count(),
  };
}

export type CollabSocket = Awaited<ReturnType<typeof collabSocket>>;
