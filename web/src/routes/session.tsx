import { Link, useLocation, useParams } from 'react-router';
import { call } from '../api.ts';
import { usePolling, useResource, useTitle } from '../hooks.ts';
import { approvalCard, readSession } from '../../../src/contract/people.ts';
import { ApprovalCard } from '../ui/approval.tsx';
import { automationPath } from '../ui/links.ts';
import { ErrorNote, LoadFailure, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';

export default function Session() {
  const { id = '' } = useParams();
  // `#approval-{id}` names the card a link is about: it is scrolled to and focused.
  const { hash } = useLocation();
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
                  <ApprovalCard
                    card={{ created_at: m.created_at, ...card.data }}
                    onDecided={session.reload}
                    showAutomation={false}
                    focused={hash === `#approval-${card.data.approval_id}`}
                  />
                ) : (
                  <div className="message">
                    <p className="card-meta">
                      <strong>{m.author ?? 'Automation'}</strong> · <When at={m.created_at} />
                    </p>
                    <p className="pre-line">{m.body}</p>
                    {s.automation_id && m.card?.type === 'run' && typeof m.card.run_id === 'string' && (
                      <p className="small">
                        <Link to={automationPath(s.automation_id, m.card.run_id)}>Open the run</Link>
                      </p>
                    )}
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
