import { log } from '../observability/log.ts';
import { randomUUID } from 'node:crypto';
import type { ThreadChange, ThreadFeed } from '../domains/comments/feed.ts';
import { redisPair } from './log-once.ts';

const CHANGES = new Set<ThreadChange['change']>(['created', 'replied', 'resolved', 'reopened']);

/** A thread change as another instance sent it, or null when the message is not one. */
function parse(message: string, me: string): ThreadChange | null {
  try {
    const m = JSON.parse(message) as { f?: unknown; a?: unknown; t?: unknown; c?: unknown };
    if (m.f === me || typeof m.a !== 'string' || typeof m.t !== 'string') return null;
    if (typeof m.c !== 'string' || !CHANGES.has(m.c as ThreadChange['change'])) return null;
    return { artifactId: m.a, threadId: m.t, change: m.c as ThreadChange['change'] };
  } catch {
    return null;
  }
}

/**
 * Passes thread changes between instances over Redis pub/sub (one channel for the deployment:
 * ids only, a few a second at most), so a comment made through any instance reaches the people
 * with the artifact open on every other. A change lost while Redis is away is caught up by the
 * views themselves: they read the threads again when their stream reconnects.
 */
export async function relayThreads(feed: ThreadFeed, options: { redisUrl: string; prefix?: string }) {
  const me = randomUUID();
  const channel = `${options.prefix ?? 'tandem'}:threads`;
  const { pub, sub, logOnce } = await redisPair(options.redisUrl, 'threads');
  sub.on('message', (_channel: string, message: string) => {
    const change = parse(message, me);
    if (change) feed.receive(change);
  });
  await sub.subscribe(channel);
  const stopRelay = feed.relay((change) => {
    const message = JSON.stringify({ f: me, a: change.artifactId, t: change.threadId, c: change.change });
    pub
      .publish(channel, message)
      .catch((error: Error) =>
        logOnce(pub, `publish ${error.message}`, () =>
          log.error({ err: error }, 'could not publish a thread change to Redis'),
        ),
      );
  });
  return {
    async close() {
      stopRelay();
      await Promise.allSettled([pub.quit(), sub.quit()]);
    },
  };
}
