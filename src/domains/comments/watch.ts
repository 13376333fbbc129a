import { log } from '../../observability/log.ts';
import type { Deps } from '../deps.ts';
import { artifactFor } from '../policies/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import { DomainError } from '../../errors.ts';
import type { ThreadChange } from './feed.ts';

/** Told of each thread change on the artifact, or `null` once the person can no longer open it. */
export type WatchListener = (change: Pick<ThreadChange, 'threadId' | 'change'> | null) => void;

/**
 * Follows the thread changes of an artifact the person can open (not found otherwise). Each change
 * is passed on only after the person's access is checked again, so a person who lost the artifact
 * hears nothing more about it: they get `null` and the watch ends. Changes are passed on in order.
 */
export async function watchThreads(
  deps: Deps,
  actor: Actor,
  documentId: unknown,
  listener: WatchListener,
): Promise<{ artifactId: string; stop: () => void }> {
  const { artifact } = await artifactFor(deps.db, actor, documentId);
  let stopped = false;
  let queue = Promise.resolve();
  const unsubscribe = deps.threads.subscribe(artifact.id, (change) => {
    queue = queue.then(async () => {
      if (stopped) return;
      try {
        await artifactFor(deps.db, actor, artifact.id);
      } catch (error) {
        if (!(error instanceof DomainError)) log.error({ err: error }, 'could not check a thread watcher');
        stop();
        listener(null);
        return;
      }
      if (!stopped) listener({ threadId: change.threadId, change: change.change });
    });
  });
  function stop() {
    stopped = true;
    unsubscribe();
  }
  return { artifactId: artifact.id, stop };
}
