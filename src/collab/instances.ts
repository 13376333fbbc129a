import { log } from '../observability/log.ts';
import { randomUUID } from 'node:crypto';
import { Document } from '@hocuspocus/server';
import { applyAwarenessUpdate, encodeAwarenessUpdate } from 'y-protocols/awareness';
import * as Y from 'yjs';
import type { LiveDoc, LiveDocHooks } from '../domains/documents/store.ts';
import type { Services } from '../services.ts';
import { redisPair } from './log-once.ts';

export interface InstanceOptions {
  redisUrl: string;
  /** Channel names start with this; the instances of one deployment share it. */
  prefix?: string;
  /** How long a document loading here waits for the state another instance holds in memory. */
  catchUpMs?: number;
  /** This instance's name on the channels (made up when not given). */
  id?: string;
}

/**
 * What instances say to each other about a document, on its channel (or, for replies, on the
 * asking instance's own):
 * - `update`: a change this instance made (its `n`th; `by` the person, null for an agent's);
 * - `stored`: the changes `o` made, up to its `u`th, are stored;
 * - `sync`: the asker's state vector; whoever holds the document answers with `state`;
 * - `state`: what the asker lacked; `awareness`: who is there and where;
 * - `access`: who may open the document changed (its connections are checked again).
 */
interface Header {
  k: 'update' | 'stored' | 'sync' | 'state' | 'awareness' | 'access';
  d: string;
  f: string;
  n?: number;
  by?: string | null;
  o?: string;
  u?: number;
}

/** An origin for awareness taken from other instances (not passed on again). */
const FROM_PEERS = Symbol('peers');

function frame(header: Header, payload: Uint8Array = new Uint8Array()): Buffer {
  const head = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(2);
  length.writeUInt16BE(head.length);
  return Buffer.concat([length, head, payload]);
}

function unframe(message: Buffer): { header: Header; payload: Uint8Array } | null {
  if (message.length < 2) return null;
  const length = message.readUInt16BE(0);
  try {
    const header = JSON.parse(message.subarray(2, 2 + length).toString('utf8')) as Header;
    if (typeof header?.k !== 'string' || typeof header.d !== 'string' || typeof header.f !== 'string')
      return null;
    return { header, payload: new Uint8Array(message.subarray(2 + length)) };
  } catch {
    return null;
  }
}

/**
 * Several instances on one database, sharing live documents over Redis pub/sub: each change
 * made here reaches every instance holding the document (and the people connected there) at
 * once, with who is there. The instance that made a change stores it; the others keep it until
 * told it was stored, and store it themselves if that instance stopped first.
 */
export async function connectInstances(services: Services, options: InstanceOptions) {
  const store = services.documents.store;
  const me = options.id ?? randomUUID();
  const prefix = options.prefix ?? 'tandem';
  const catchUpMs = options.catchUpMs ?? 1000;
  const { pub, sub, logOnce } = await redisPair(options.redisUrl, 'documents');

  const docs = new Map<string, LiveDoc>();
  const caughtUp = new Map<string, () => void>();
  const asked = new Map<string, number>();
  const channel = (id: string) => `${prefix}:doc:${id}`;
  const inbox = (instance: string) => `${prefix}:to:${instance}`;
  const endedChannel = `${prefix}:credentials-ended`;

  function publish(to: string, header: Header, payload?: Uint8Array): void {
    pub
      .publish(to, frame(header, payload))
      .catch((error: Error) =>
        logOnce(pub, `publish ${error.message}`, () =>
          log.error({ err: error }, 'could not publish to Redis'),
        ),
      );
  }

  /** Asks the others for what this copy lacks (a change arrived before one it builds on). */
  function askIfBehind(live: LiveDoc): void {
    const { pendingStructs, pendingDs } = live.doc.store;
    if (!pendingStructs && !pendingDs) return;
    const last = asked.get(live.id) ?? 0;
    if (Date.now() - last < 500) return;
    asked.set(live.id, Date.now());
    publish(channel(live.id), { k: 'sync', d: live.id, f: me }, Y.encodeStateVector(live.doc));
  }

  function receive(message: Buffer): void {
    const framed = unframe(message);
    if (!framed || framed.header.f === me) return;
    const { header, payload } = framed;
    const live = docs.get(header.d);
    if (!live) return;
    switch (header.k) {
      case 'update':
        store.peerChange(live, header.f, header.n ?? 0, header.by ?? null, payload);
        askIfBehind(live);
        break;
      case 'stored':
        if (header.o && header.u !== undefined) store.peerStored(live, header.o, header.u);
        break;
      case 'sync': {
        publish(inbox(header.f), { k: 'state', d: live.id, f: me }, Y.encodeStateAsUpdate(live.doc, payload));
        if (live.doc instanceof Document && live.doc.awareness.getStates().size > 0) {
          const { awareness } = live.doc;
          const update = encodeAwarenessUpdate(awareness, [...awareness.getStates().keys()]);
          publish(inbox(header.f), { k: 'awareness', d: live.id, f: me }, update);
        }
        break;
      }
      case 'state':
        store.peerState(live, payload);
        caughtUp.get(live.id)?.();
        askIfBehind(live);
        break;
      case 'awareness':
        if (live.doc instanceof Document) applyAwarenessUpdate(live.doc.awareness, payload, FROM_PEERS);
        break;
      case 'access':
        services.sharing.changed(live.id, true);
        break;
    }
  }

  sub.on('messageBuffer', (from: Buffer, message: Buffer) => {
    if (from.toString() === endedChannel) return;
    try {
      receive(message);
    } catch (error) {
      logOnce(sub, `receive ${(error as Error).message}`, () =>
        log.error({ err: error }, 'could not take in a change from another instance'),
      );
    }
  });
  await sub.subscribe(inbox(me));
  // A credential that ends here ends on every instance's open sockets at once.
  await sub.subscribe(endedChannel);
  sub.on('messageBuffer', (from: Buffer, message: Buffer) => {
    if (from.toString() === endedChannel && message.toString() !== me) services.credentialEnds.tell(true);
  });
  const stopTelling = services.credentialEnds.on((remote) => {
    if (!remote) {
      pub
        .publish(endedChannel, me)
        .catch((error: Error) =>
          logOnce(pub, `publish ${error.message}`, () =>
            log.error({ err: error }, 'could not publish to Redis'),
          ),
        );
    }
  });
  // Back after losing Redis: whatever passed meanwhile is asked for again.
  sub.on('ready', () => {
    for (const live of docs.values()) {
      publish(channel(live.id), { k: 'sync', d: live.id, f: me }, Y.encodeStateVector(live.doc));
    }
  });

  /** Passes on who is there and where, as it changes here (a turn's changes together). */
  function shareAwareness(live: LiveDoc): void {
    if (!(live.doc instanceof Document)) return;
    const { awareness } = live.doc;
    const changed = new Set<number>();
    let scheduled = false;
    awareness.on(
      'update',
      (change: { added: number[]; updated: number[]; removed: number[] }, origin: unknown) => {
        if (origin === FROM_PEERS) return;
        for (const client of [...change.added, ...change.updated, ...change.removed]) changed.add(client);
        if (scheduled) return;
        scheduled = true;
        setImmediate(() => {
          scheduled = false;
          if (docs.get(live.id) !== live || changed.size === 0) return;
          const update = encodeAwarenessUpdate(awareness, [...changed]);
          changed.clear();
          publish(channel(live.id), { k: 'awareness', d: live.id, f: me }, update);
        });
      },
    );
  }

  // Sharing changed here: the instances holding the document check their connections too.
  const unsubscribe = services.sharing.onChange((artifactId, fromPeer) => {
    if (!fromPeer) publish(channel(artifactId), { k: 'access', d: artifactId, f: me });
  });

  const hooks: LiveDocHooks = {
    async loaded(live) {
      docs.set(live.id, live);
      await sub.subscribe(channel(live.id));
      shareAwareness(live);
      const [, count] = (await pub.pubsub('NUMSUB', channel(live.id))) as [string, number | string];
      if (Number(count) <= 1) return false;
      // Another instance holds it: take in what it has in memory before anyone uses it here.
      const answered = new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, catchUpMs);
        caughtUp.set(live.id, () => {
          clearTimeout(timer);
          resolve();
        });
      });
      publish(channel(live.id), { k: 'sync', d: live.id, f: me }, Y.encodeStateVector(live.doc));
      await answered;
      caughtUp.delete(live.id);
      return true;
    },
    changed(live, update, change) {
      if (docs.get(live.id) !== live) return;
      publish(channel(live.id), { k: 'update', d: live.id, f: me, n: change.n, by: change.by }, update);
    },
    stored(live, marks) {
      if (docs.get(live.id) !== live) return;
      for (const mark of marks) {
        publish(channel(live.id), { k: 'stored', d: live.id, f: me, o: mark.origin ?? me, u: mark.upTo });
      }
    },
    unloaded(live) {
      if (docs.get(live.id) !== live) return;
      docs.delete(live.id);
      asked.delete(live.id);
      caughtUp.get(live.id)?.();
      sub.unsubscribe(channel(live.id)).catch(() => undefined);
    },
    async close() {
      stopTelling();
      unsubscribe();
      docs.clear();
      await Promise.allSettled([pub.quit(), sub.quit()]);
    },
  };
  await store.extend(hooks);
  return { id: me, close: () => hooks.close!() };
}
