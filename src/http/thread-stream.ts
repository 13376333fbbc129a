import { log } from '../observability/log.ts';
import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { Credential } from '../domains/auth/credentials.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { requestCredential } from './auth.ts';
import { scopeWords } from './scopes.ts';

export interface ThreadStreamOptions {
  /** A stream ends after this long; the browser opens it again (checking who asks afresh). */
  lifetimeMs?: number;
  /** A comment line this often keeps proxies from closing a quiet stream. */
  keepAliveMs?: number;
  /** Streams one person may hold open on this process. */
  perPerson?: number;
}

/**
 * `GET /api/documents/{id}/comments/stream`: a server-sent stream of the artifact's thread changes
 * (`event: thread`, data `{"thread_id", "change"}`), for as long as the caller can open it. It
 * carries ids only; the app reads the threads again, with the reader's rights. Before each change
 * is sent the credential is checked again (a signed-out session hears nothing more), and the
 * comments domain checks the person's access; either gone, the stream ends.
 */
export function threadStreams(services: Services, options: ThreadStreamOptions = {}) {
  const lifetimeMs = options.lifetimeMs ?? 5 * 60_000;
  const keepAliveMs = options.keepAliveMs ?? 25_000;
  const perPerson = options.perPerson ?? 16;
  const open = new Map<string, number>();

  return async function threadStream(c: Context<{ Variables: { credential: Credential } }>) {
    const { actor } = c.get('credential');
    if (!actor.scopes.has('documents:read')) {
      throw new DomainError('insufficient_scope', `This needs ${scopeWords(['documents:read'])}.`);
    }
    if ((open.get(actor.personId) ?? 0) >= perPerson) {
      return c.json(
        { error: 'too_many_streams', message: `At most ${perPerson} comment streams may be open at once.` },
        429,
      );
    }
    const pending: { threadId: string; change: string }[] = [];
    let ended = false;
    let wake = () => {};
    const watch = await services.comments.watch(actor, c.req.param('id'), (change) => {
      if (change) pending.push(change);
      else ended = true;
      wake();
    });
    open.set(actor.personId, (open.get(actor.personId) ?? 0) + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      watch.stop();
      const left = (open.get(actor.personId) ?? 1) - 1;
      if (left > 0) open.set(actor.personId, left);
      else open.delete(actor.personId);
    };
    c.header('Cache-Control', 'no-store');
    c.header('X-Accel-Buffering', 'no');
    return streamSSE(
      c,
      async (stream) => {
        stream.onAbort(() => {
          ended = true;
          wake();
        });
        const until = Date.now() + lifetimeMs;
        await stream.writeSSE({ event: 'ready', data: '{}', retry: 1000 });
        try {
          while (!ended && !stream.aborted && Date.now() < until) {
            if (pending.length === 0) {
              await new Promise<void>((resolve) => {
                const timer = setTimeout(resolve, Math.min(keepAliveMs, Math.max(0, until - Date.now())));
                wake = () => {
                  clearTimeout(timer);
                  resolve();
                };
              });
              wake = () => {};
              if (pending.length === 0 && !ended) await stream.write(': still here\n\n');
              continue;
            }
            // Signed out or revoked since the stream opened: nothing more is said.
            if (!(await requestCredential(services, c))) break;
            for (const change of pending.splice(0)) {
              await stream.writeSSE({
                event: 'thread',
                data: JSON.stringify({ thread_id: change.threadId, change: change.change }),
              });
            }
          }
        } finally {
          release();
        }
      },
      async (error) => {
        log.error({ err: error }, 'a comment stream failed');
        release();
      },
    );
  };
}
