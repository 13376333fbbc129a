import { Redis } from 'ioredis';
import { log } from '../observability/log.ts';
/**
 * Logs each kind of trouble once per owner (a socket, a connection): a client that keeps
 * sending what is refused does not flood the log.
 */
export function onceEach() {
  const seen = new WeakMap<object, Set<string>>();
  return (owner: object, kind: string, log: () => void): void => {
    let kinds = seen.get(owner);
    if (!kinds) seen.set(owner, (kinds = new Set()));
    if (kinds.has(kind)) return;
    kinds.add(kind);
    log();
  };
}

/**
 * A publishing and a subscribing Redis connection, connected, each logging a failure once until
 * it changes (ioredis reconnects on its own); `what` names them in the log.
 */
export async function redisPair(url: string, what: string) {
  const logOnce = onceEach();
  const pub = new Redis(url, { maxRetriesPerRequest: 3, lazyConnect: true });
  const sub = pub.duplicate();
  for (const [name, client] of [
    ['publishing', pub],
    ['subscribing', sub],
  ] as const) {
    client.on('error', (error: Error) =>
      logOnce(client, error.message, () =>
        log.error({ err: error, redis: `${what}, ${name}` }, 'Redis connection failed'),
      ),
    );
  }
  await Promise.all([pub.connect(), sub.connect()]);
  return { pub, sub, logOnce };
}
