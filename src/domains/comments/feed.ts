import { log } from '../../observability/log.ts';

/** What changed on a thread: people with the artifact open read its threads again. */
export interface ThreadChange {
  artifactId: string;
  threadId: string;
  change: 'created' | 'replied' | 'resolved' | 'reopened';
}

type Listener = (change: ThreadChange) => void;

/**
 * Thread changes as they are committed, for the views that have an artifact open. In one process
 * it is a list of listeners per artifact; `relay` passes this process's changes on to other
 * instances (Redis), whose changes come back through `receive`. It carries ids only: a view
 * learns what a thread says by reading it, with the reader's rights checked then.
 */
export function threadFeed() {
  const listeners = new Map<string, Set<Listener>>();
  const relays = new Set<Listener>();

  function deliver(change: ThreadChange): void {
    for (const listener of [...(listeners.get(change.artifactId) ?? [])]) {
      try {
        listener(change);
      } catch (error) {
        log.error({ err: error }, 'a thread listener failed');
      }
    }
  }

  return {
    /** A change committed here: told to this process's views and to the other instances. */
    publish(change: ThreadChange): void {
      deliver(change);
      for (const relay of relays) relay(change);
    },
    /** A change another instance committed. */
    receive: deliver,
    subscribe(artifactId: string, listener: Listener): () => void {
      let set = listeners.get(artifactId);
      if (!set) listeners.set(artifactId, (set = new Set()));
      set.add(listener);
      return () => {
        set.delete(listener);
        if (set.size === 0 && listeners.get(artifactId) === set) listeners.delete(artifactId);
      };
    },
    relay(listener: Listener): () => void {
      relays.add(listener);
      return () => relays.delete(listener);
    },
    /** Views listening in this process (for tests and measurements). */
    listenerCount: () => [...listeners.values()].reduce((n, s) => n + s.size, 0),
  };
}

export type ThreadFeed = ReturnType<typeof threadFeed>;
