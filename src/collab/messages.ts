import { log } from '../observability/log.ts';
import { IncomingMessage, MessageType } from '@hocuspocus/server';
import type { RawData, WebSocket } from 'ws';
import type { Pending } from './anonymous.ts';

/** The sync message's update, for the two kinds that change a document (step 2 and update). */
export function updateIn(message: Uint8Array): Uint8Array | null {
  try {
    const incoming = new IncomingMessage(message);
    incoming.readVarString();
    const type = incoming.readVarUint();
    if (type !== MessageType.Sync && type !== MessageType.SyncReply) return null;
    const step = incoming.readVarUint();
    // y-protocols: 1 is sync step 2 (the state a peer lacks), 2 an update.
    return step === 1 || step === 2 ? incoming.readVarUint8Array() : null;
  } catch {
    // Hocuspocus refuses what it cannot read, closing the connection.
    return null;
  }
}

/** Whether a message starts as every Hocuspocus message does: a document name and a type. */
function framed(message: Uint8Array): boolean {
  try {
    const incoming = new IncomingMessage(message);
    incoming.readVarString();
    incoming.readVarUint();
    return true;
  } catch {
    return false;
  }
}

/** What reads a socket's messages on Hocuspocus's side. */
interface Receiver {
  handleMessage(message: Uint8Array): void;
  handleClose(event: { code: number; reason: string }): void;
}

interface PipeLimits {
  maxMessagesPerSecond: number;
  maxBytesPerSecond: number;
  logOnce: (owner: object, kind: string, log: () => void) => void;
}

/**
 * Passes a socket's messages to Hocuspocus, closing the socket instead when it sends more than
 * it may before authenticating, floods, or sends what is not a Hocuspocus message.
 */
export function pipe(ws: WebSocket, client: Receiver, pending: Pending, limits: PipeLimits): void {
  const { maxMessagesPerSecond, maxBytesPerSecond, logOnce } = limits;
  let windowStart = Date.now();
  let messages = 0;
  let bytes = 0;
  ws.on('message', (data: RawData) => {
    const chunk = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
    const now = Date.now();
    if (now - windowStart >= 1000) {
      windowStart = now;
      messages = bytes = 0;
    }
    messages += 1;
    bytes += chunk.length;
    if (!pending.received(chunk.length)) {
      logOnce(ws, 'unauthenticated', () =>
        log.warn('live socket closed: it sent too much before authenticating'),
      );
      ws.close(1008, 'Authenticate before sending more');
      return;
    }
    if (messages > maxMessagesPerSecond || bytes > maxBytesPerSecond) {
      logOnce(ws, 'flood', () =>
        log.warn(
          { maxMessagesPerSecond, maxBytesPerSecond },
          'live socket closed: it sent too many messages or bytes a second',
        ),
      );
      ws.close(1008, 'Too many messages');
      return;
    }
    const message = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.length);
    if (!framed(message)) {
      logOnce(ws, 'unreadable', () =>
        log.warn('live socket closed: it sent a message that is not Hocuspocus’s'),
      );
      ws.close(1007, 'Unreadable message');
      return;
    }
    client.handleMessage(message);
  });
  ws.on('close', (code, reason) => {
    pending.closed();
    client.handleClose({ code, reason: reason.toString() });
  });
  ws.on('error', (error) => logOnce(ws, 'error', () => log.warn({ err: error }, 'live socket closed')));
}
