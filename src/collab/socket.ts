import { log } from '../observability/log.ts';
import type { IncomingMessage as HttpRequest } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Connection, WebSocketLike } from '@hocuspocus/server';
import { WebSocketServer, type WebSocket } from 'ws';
import type { Services } from '../services.ts';
import { liveDocumentHooks } from './live-document.ts';
import { anonymousSockets, ANONYMOUS_LIMITS, type AnonymousLimits, type Pending } from './anonymous.ts';
import { onceEach } from './log-once.ts';
import { pipe } from './messages.ts';
import { collabTickets } from './tickets.ts';
import { watchCredentials } from './credentials.ts';
import {
  ENDED_CODE,
  liveHocuspocus,
  recheck,
  REFUSED,
  type Connections,
  type Context,
} from './connections.ts';

export { ENDED_CODE, REFUSED, REFUSED_CODE, type Context } from './connections.ts';

/** Where `tandem serve` takes live-editing connections. */
export const COLLAB_PATH = '/collab';

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

const MiB = 1024 * 1024;

/**
 * The live-editing socket: Hocuspocus's protocol, over the documents service. Hocuspocus keeps
 * the connections and their sync; the documents come from the store (one per document, the one
 * agents write to), and every change a person sends goes through the documents service, which
 * checks it against what they may do and the document's shape before it lands.
 */
export async function collabSocket(services: Services, options: CollabOptions = {}) {
  await services.documents.store.extend(liveDocumentHooks);
  const maxMessagesPerSecond = options.maxMessagesPerSecond ?? 300;
  const maxBytesPerSecond = options.maxBytesPerSecond ?? 16 * MiB;
  const c: Connections = {
    services,
    options,
    tickets: collabTickets(services.deps.db),
    open: new Set<Connection<Context>>(),
    refusedNow: new Set<Connection<Context>>(),
    endedNow: new WeakSet<Connection<Context>>(),
    logOnce: onceEach(),
    pendingOf: new WeakMap<Request, Pending>(),
  };
  const { open: connections, pendingOf, logOnce, endedNow } = c;
  let closing = false;
  const anonymous = anonymousSockets({ ...ANONYMOUS_LIMITS, ...options.anonymous });
  const hocuspocus = liveHocuspocus(c);

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

  // Sharing changed (here, or on another instance through Redis): who is connected follows now.
  const unsubscribe = services.sharing.onChange((artifactId) => {
    recheck(c, artifactId).catch((error: unknown) =>
      log.error({ err: error, artifact: artifactId }, 'could not check live connections again'),
    );
  });

  const recheckTimer = setInterval(() => {
    recheck(c).catch((error: unknown) => log.error({ err: error }, 'could not check live connections again'));
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
    recheck: (documentId?: string) => recheck(c, documentId),
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
