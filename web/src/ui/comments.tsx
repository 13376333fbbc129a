import { useEffect, useRef, useState, type FormEvent } from 'react';
import { call } from '../api.ts';
import { useAction } from '../hooks.ts';
import { addComment, resolveThread, type Thread } from '../../../src/contract/documents.ts';
import type { AgentRequest } from '../../../src/contract/agents.ts';
import { MentionBox } from './mention.tsx';
import { ErrorNote, Loading } from './status.tsx';
import type { Threads } from './threads.ts';
import { When } from './time.tsx';

const canComment = (role: string | undefined) => role !== undefined && role !== 'viewer';

/** What an agent asked on a thread is doing: queued, or answering now. */
function AgentWorking({ requests }: { requests: AgentRequest[] }) {
  const working = requests.filter((r) => r.status === 'pending' || r.status === 'answering');
  if (working.length === 0) return null;
  return (
    <p role="status" className="muted small">
      {working
        .map((r) =>
          r.status === 'answering' ? `${r.agent} is answering…` : `${r.agent} will answer shortly…`,
        )
        .join(' ')}
    </p>
  );
}

/** A request to bring a thread into view and focus it (`n` tells repeated requests apart). */
export interface ThreadFocus {
  threadId: string;
  n: number;
}

function ThreadView({
  documentId,
  thread,
  mayWrite,
  reload,
  agents = [],
  focus,
  showPassage,
}: {
  documentId: string;
  thread: Thread;
  mayWrite: boolean;
  reload: () => Promise<void>;
  agents?: AgentRequest[];
  focus?: number | undefined;
  showPassage?: ((threadId: string) => void) | undefined;
}) {
  const [reply, setReply] = useState('');
  const article = useRef<HTMLElement>(null);
  useEffect(() => {
    if (focus === undefined || !article.current) return;
    article.current.scrollIntoView({ block: 'nearest' });
    article.current.focus();
  }, [focus]);
  const action = useAction();
  const send = async (event: FormEvent) => {
    event.preventDefault();
    const sent = await action.perform(async () => {
      await call(addComment, {
        params: { id: documentId },
        body: { body_markdown: reply, thread_id: thread.thread_id },
      });
      await reload();
      return true;
    });
    if (sent) setReply('');
  };
  const setResolved = (resolved: boolean) =>
    action.perform(async () => {
      await call(resolveThread, {
        params: { id: documentId, thread_id: thread.thread_id },
        body: { resolved },
      });
      await reload();
    });
  const replyId = `reply-${thread.thread_id}`;
  return (
    <article
      ref={article}
      id={`thread-${thread.thread_id}`}
      tabIndex={-1}
      className={`thread ${thread.status}${focus !== undefined ? ' focused' : ''}`}
      aria-label={`Thread by ${thread.author_label}`}
    >
      {thread.anchor_excerpt && <blockquote>{thread.anchor_excerpt}</blockquote>}
      {thread.anchor_excerpt && thread.status === 'open' && showPassage && (
        <button type="button" className="link small" onClick={() => showPassage(thread.thread_id)}>
          Show in document
        </button>
      )}
      <p className="card-meta">
        <strong>{thread.author_label}</strong> · <When at={thread.created_at} />
        {thread.status === 'resolved' && <span className="badge">Resolved</span>}
      </p>
      <p className="pre-line">{thread.body}</p>
      <AgentWorking requests={agents} />
      {thread.more_replies && <p className="muted small">Older replies are not shown.</p>}
      {thread.replies.map((r) => (
        <div key={r.comment_id} className="reply">
          <p className="card-meta">
            <strong>{r.author_label}</strong> · <When at={r.created_at} />
          </p>
          <p className="pre-line">{r.deleted ? <em className="muted">Deleted</em> : r.body}</p>
        </div>
      ))}
      {mayWrite && (
        <>
          {thread.status === 'open' && (
            <form onSubmit={send} className="reply-form">
              <label htmlFor={replyId}>Reply</label>
              <MentionBox id={replyId} rows={2} required value={reply} onChange={setReply} />
              <button type="submit" disabled={action.busy || reply.trim() === ''}>
                Send
              </button>
            </form>
          )}
          <button
            type="button"
            className="link"
            disabled={action.busy}
            onClick={() => void setResolved(thread.status === 'open')}
          >
            {thread.status === 'open' ? 'Resolve' : 'Reopen'}
          </button>
          <ErrorNote error={action.error} />
        </>
      )}
    </article>
  );
}

function NewThread({
  documentId,
  reload,
  quoteLabel,
  selection,
}: {
  documentId: string;
  reload: () => Promise<void>;
  quoteLabel: string;
  selection?: string | undefined;
}) {
  const [body, setBody] = useState('');
  const [quote, setQuote] = useState('');
  // Text selected in the document becomes the new thread's quote.
  const [selected, setSelected] = useState(selection);
  if (selection !== selected) {
    setSelected(selection);
    if (selection && selection.trim()) setQuote(selection);
  }
  const [note, setNote] = useState<string | undefined>();
  const action = useAction();
  const start = async (event: FormEvent) => {
    event.preventDefault();
    setNote(undefined);
    const added = await action.perform(async () => {
      const result = await call(addComment, {
        params: { id: documentId },
        body: { body_markdown: body, ...(quote.trim() ? { anchor_excerpt: quote } : {}) },
      });
      await reload();
      return result;
    });
    if (added) {
      if (quote.trim() && added.anchored === false)
        setNote('That passage was not found exactly once, so the comment is on the whole page.');
      setBody('');
      setQuote('');
    }
  };
  return (
    <form onSubmit={start} className="new-thread">
      <label htmlFor="new-comment">New comment</label>
      <MentionBox id="new-comment" rows={3} required value={body} onChange={setBody} />
      <label htmlFor="quote">{quoteLabel}</label>
      <input id="quote" value={quote} onChange={(e) => setQuote(e.target.value)} />
      <button type="submit" disabled={action.busy || body.trim() === ''}>
        Comment
      </button>
      <ErrorNote error={action.error} />
      {note && (
        <p className="muted small" role="status">
          {note}
        </p>
      )}
    </form>
  );
}

/** The comment threads of a document or page, in a complementary region named Comments. */
export function Comments({
  documentId,
  archived,
  selection,
  threads: state,
  focus,
  showPassage,
}: {
  documentId: string;
  archived: boolean;
  /** Text selected in the document: a new thread quotes it. */
  selection?: string | undefined;
  /** The threads, kept current by `useThreads`. */
  threads: Threads;
  /** The thread to bring into view and focus. */
  focus?: ThreadFocus | undefined;
  /** Selects a thread's passage in the document (where the document shows one). */
  showPassage?: ((threadId: string) => void) | undefined;
}) {
  const { threads, requests, showResolved, setShowResolved, reload } = state;
  const mayWrite = canComment(threads.data?.role) && !archived;
  const list = threads.data?.threads ?? [];
  return (
    <aside className="side-panel" aria-labelledby="comments">
      <h2 id="comments">Comments</h2>
      <label className="check">
        <input type="checkbox" checked={showResolved} onChange={(e) => setShowResolved(e.target.checked)} />{' '}
        Show resolved threads
      </label>
      <ErrorNote error={threads.error} />
      {threads.loading && <Loading what="comments" />}
      {threads.data && list.length === 0 && (
        <p className="muted">{showResolved ? 'No comment threads.' : 'No open comment threads.'}</p>
      )}
      {list.map((t) => (
        <ThreadView
          key={t.thread_id}
          documentId={documentId}
          thread={t}
          mayWrite={mayWrite}
          reload={reload}
          agents={requests.filter((r) => r.thread_id === t.thread_id)}
          focus={focus?.threadId === t.thread_id ? focus.n : undefined}
          showPassage={showPassage}
        />
      ))}
      {mayWrite && (
        <NewThread
          documentId={documentId}
          reload={reload}
          quoteLabel="Quote (optional)"
          selection={selection}
        />
      )}
      {threads.data && !mayWrite && (
        <p className="muted small">
          {archived
            ? 'This is archived: comments are closed.'
            : 'You can read comments here but not add them.'}
        </p>
      )}
    </aside>
  );
}
