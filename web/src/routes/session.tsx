import { useState } from 'react';
import { Link, useParams } from 'react-router';
import { call } from '../api.ts';
import { useAction, usePolling, useResource, useTitle } from '../hooks.ts';
import {
  approvalCard,
  decideApproval,
  readSession,
  type ApprovalCard,
} from '../../../src/http/contract/people.ts';
import { ErrorNote, LoadFailure, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';

const DECIDED: Record<string, string> = {
  approved: 'Approved',
  rejected: 'Rejected',
  timed_out: 'Timed out',
  pending: 'Waiting for a decision',
};

/** One approval: its question, then either the decision with who, when and why, or the controls to make it. */
function Approval({
  card,
  asked,
  onDecided,
}: {
  card: ApprovalCard;
  asked: string;
  onDecided: () => Promise<void>;
}) {
  const [note, setNote] = useState('');
  const action = useAction();
  const decide = (decision: 'approve' | 'reject') =>
    action.perform(async () => {
      await call(decideApproval, {
        params: { id: card.approval_id },
        body: { decision, ...(note.trim() ? { note: note.trim() } : {}) },
      });
      await onDecided();
    });
  const noteId = `note-${card.approval_id}`;
  return (
    <article className={`card approval ${card.status}`} aria-labelledby={`q-${card.approval_id}`}>
      <p className="card-meta">
        <span className="badge">Approval</span> {DECIDED[card.status] ?? card.status} · asked{' '}
        <When at={asked} />
      </p>
      <h3 id={`q-${card.approval_id}`} className="question">
        {card.message}
      </h3>
      {card.status === 'pending' ? (
        card.can_decide ? (
          <div className="decide">
            <label htmlFor={noteId}>Note</label>
            <textarea
              id={noteId}
              rows={2}
              maxLength={2000}
              value={note}
              onChange={(e) => setNote(e.target.value)}
            />
            <div className="buttons">
              <button
                type="button"
                className="primary"
                disabled={action.busy}
                onClick={() => void decide('approve')}
              >
                Approve
              </button>
              <button
                type="button"
                className="danger"
                disabled={action.busy}
                onClick={() => void decide('reject')}
              >
                Reject
              </button>
            </div>
            <ErrorNote error={action.error} />
          </div>
        ) : (
          <p className="muted small">Waiting for {card.approvers ?? 'its approvers'} to decide.</p>
        )
      ) : (
        <p className="small">
          {card.status === 'timed_out'
            ? 'Nobody decided in time'
            : `${DECIDED[card.status]} by ${card.decided_by ?? 'someone'}`}
          {card.decided_at && (
            <>
              , <When at={card.decided_at} />
            </>
          )}
          {card.note && <>: “{card.note}”</>}
        </p>
      )}
    </article>
  );
}

export default function Session() {
  const { id = '' } = useParams();
  const session = useResource(`session:${id}`, () => call(readSession, { params: { id } }));
  useTitle(
    session.data
      ? `${session.data.title} · Session`
      : session.error?.notFound
        ? 'Session not found'
        : 'Session',
  );
  // Runs post here as they go: follow while an approval waits.
  const waiting = (session.data?.messages ?? []).some(
    (m) => m.card?.type === 'approval' && m.card.status === 'pending',
  );
  usePolling(waiting, 3000, session.reload);

  if (session.error && !session.data) return <LoadFailure error={session.error} what="Session" />;
  if (!session.data) return <Loading what="the session" />;
  const s = session.data;
  return (
    <>
      {s.automation_id && (
        <p className="crumbs">
          <Link to={`/automations/${encodeURIComponent(s.automation_id)}`}>Back to the automation</Link>
        </p>
      )}
      <h1>{s.title}</h1>
      <p className="muted">This automation’s session: its notices, run messages and approvals.</p>
      <ErrorNote error={session.error} />
      {s.messages.length === 0 ? (
        <p>No messages yet.</p>
      ) : (
        <ol className="messages">
          {s.messages.map((m) => {
            const card = m.card ? approvalCard.safeParse(m.card) : undefined;
            return (
              <li key={m.message_id}>
                {card?.success ? (
                  <Approval card={card.data} asked={m.created_at} onDecided={session.reload} />
                ) : (
                  <div className="message">
                    <p className="card-meta">
                      <strong>{m.author ?? 'Automation'}</strong> · <When at={m.created_at} />
                    </p>
                    <p className="pre-line">{m.body}</p>
                  </div>
                )}
              </li>
            );
          })}
        </ol>
      )}
    </>
  );
}
