import { useEffect, useRef, useState } from 'react';
import { useLocation } from 'react-router';
import { call } from '../api.ts';
import { useResource, type Resource } from '../hooks.ts';
import { readComments, type Thread } from '../../../src/contract/documents.ts';
import { agentRequests, type AgentRequest } from '../../../src/contract/agents.ts';

export interface Threads {
  threads: Resource<Awaited<ReturnType<typeof readThreads>>>;
  requests: AgentRequest[];
  showResolved: boolean;
  setShowResolved: (show: boolean) => void;
  /** Reads the threads and the agents' progress again. */
  reload: () => Promise<void>;
}

const readThreads = (id: string, includeResolved: boolean) =>
  call(readComments, { params: { id }, query: { include_resolved: includeResolved } });

/** The passage a thread is anchored to, as the document views highlight it. */
export interface PassageAnchor {
  threadId: string;
  author: string;
  excerpt: string;
  position?: { rel_start: string; rel_end: string } | undefined;
}

/** The open threads' anchors, for the editor and the read view. */
export function anchorsOf(threads: readonly Thread[]): PassageAnchor[] {
  return threads
    .filter((t) => t.status === 'open' && t.anchor_excerpt)
    .map((t) => ({
      threadId: t.thread_id,
      author: t.author_label,
      excerpt: t.anchor_excerpt!,
      position: t.anchor_position,
    }));
}

/**
 * The comment threads of a document or page, kept current: the server says on a stream when a
 * thread changes (new, reply, resolved, reopened; by anyone, on any instance) and they are read
 * again, with the reader's rights. After the stream reconnects they are read again too, so a
 * change made meanwhile is not missed.
 */
export function useThreads(documentId: string): Threads {
  const [showResolved, setShowResolved] = useState(false);
  const threads = useResource(`comments:${documentId}:${showResolved}`, () =>
    readThreads(documentId, showResolved),
  );
  const agents = useResource(`agents:${documentId}`, () =>
    call(agentRequests, { params: { id: documentId } }),
  );
  const requests = agents.data?.requests ?? [];
  const reloadThreads = threads.reload;
  const reloadAgents = agents.reload;
  const latest = useRef(async () => {});
  useEffect(() => {
    latest.current = async () => {
      await Promise.all([reloadThreads(), reloadAgents()]);
    };
  });

  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    const source = new EventSource(`/api/documents/${encodeURIComponent(documentId)}/comments/stream`);
    let opened = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Changes that come together are read once.
    const soon = () => {
      clearTimeout(timer);
      timer = setTimeout(() => void latest.current(), 30);
    };
    source.addEventListener('thread', soon);
    source.addEventListener('ready', () => {
      if (opened++ > 0) soon();
    });
    return () => {
      clearTimeout(timer);
      source.close();
    };
  }, [documentId]);

  // An agent asked in a thread: its progress is looked at every two seconds while it works.
  const working = requests.some((r) => r.status === 'pending' || r.status === 'answering');
  useEffect(() => {
    if (!working) return;
    const timer = setInterval(() => void latest.current(), 2_000);
    return () => clearInterval(timer);
  }, [working]);

  return {
    threads,
    requests,
    showResolved,
    setShowResolved,
    reload: () => latest.current(),
  };
}

/**
 * Follows `#thread-{id}` in the address (a notification's link): once the threads are read the
 * thread is brought into view and focused, resolved threads shown first when it is one of them.
 */
export function useHashFocus(state: Threads, focus: (threadId: string) => void): void {
  const { hash } = useLocation();
  const done = useRef<string | undefined>(undefined);
  const data = state.threads.data;
  const { showResolved, setShowResolved } = state;
  useEffect(() => {
    const wanted = /^#thread-(.+)$/.exec(hash)?.[1];
    if (!wanted || done.current === hash || !data) return;
    const threadId = decodeURIComponent(wanted);
    if (data.threads.some((t) => t.thread_id === threadId)) {
      done.current = hash;
      focus(threadId);
    } else if (!showResolved) {
      setShowResolved(true);
    } else {
      done.current = hash;
    }
  }, [hash, data, focus, showResolved, setShowResolved]);
}
