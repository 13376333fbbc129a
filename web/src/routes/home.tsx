import { useState } from 'react';
import { Link } from 'react-router';
import { call } from '../api.ts';
import { useResource, useTitle } from '../hooks.ts';
import { listAutomations } from '../../../src/contract/automations.ts';
import { listDocuments } from '../../../src/contract/documents.ts';
import {
  awaitingApprovals,
  listNotifications,
  readApproval,
  type ApprovalCard as ApprovalCardData,
} from '../../../src/contract/people.ts';
import { artifactPath, notificationLinks, TYPE_NAMES } from '../ui/links.ts';
import { marksRead } from '../ui/notices.ts';
import { ApprovalCard } from '../ui/approval.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';
import { degradedText } from './automation-words.ts';

function Recent() {
  const recent = useResource('recent', () => call(listDocuments, { query: { limit: 8 } }));
  return (
    <section aria-labelledby="recent">
      <h2 id="recent">Recent documents and pages</h2>
      <ErrorNote error={recent.error} />
      {recent.loading ? (
        <Loading what="recent documents" />
      ) : recent.data?.documents.length === 0 ? (
        <p className="muted">Nothing yet. Documents and pages you or your agents make show up here.</p>
      ) : (
        <ul className="plain">
          {recent.data?.documents.map((d) => (
            <li key={d.document_id}>
              <Link to={artifactPath(d.type, d.document_id)}>{d.title}</Link>{' '}
              <span className="muted">
                {TYPE_NAMES[d.type]} · <When at={d.last_edited_at} />
              </span>
            </li>
          ))}
        </ul>
      )}
      <p>
        <Link to="/documents">All documents</Link>
      </p>
    </section>
  );
}

/** Approvals this person may decide, each with what it lets happen and its buttons. */
function Waiting() {
  const approvals = useResource('awaiting', () => call(awaitingApprovals, {}));
  // A card decided here stays, saying who decided, until the page is left.
  const [decided, setDecided] = useState<ApprovalCardData[]>([]);
  const waiting = approvals.data?.approvals ?? [];
  const list = [...waiting, ...decided.filter((d) => !waiting.some((a) => a.approval_id === d.approval_id))];
  const after = (id: string) => async () => {
    const now = await call(readApproval, { params: { id } }).catch(() => undefined);
    if (now) setDecided((d) => [...d.filter((c) => c.approval_id !== id), now]);
    await approvals.reload();
  };
  return (
    <section aria-labelledby="waiting" className="wide">
      <h2 id="waiting">Waiting for you</h2>
      <ErrorNote error={approvals.error} />
      {approvals.loading ? (
        <Loading what="approvals" />
      ) : list.length === 0 ? (
        <p className="muted">No approval waits on you.</p>
      ) : (
        <ul className="cards">
          {list.map((a) => (
            <li key={a.approval_id}>
              <ApprovalCard card={a} onDecided={after(a.approval_id)} />
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Attention() {
  const automations = useResource('automations', () => call(listAutomations, {}));
  const failing = (automations.data?.automations ?? []).filter(
    (a) => a.consecutive_failures > 0 || a.degraded_reason,
  );
  return (
    <section aria-labelledby="attention">
      <h2 id="attention">Automations that need attention</h2>
      <ErrorNote error={automations.error} />
      {automations.loading && <Loading what="automations" />}
      {!automations.loading && failing.length === 0 && (
        <p className="muted">No automation is failing or unable to run.</p>
      )}
      {failing.length > 0 && (
        <ul className="plain">
          {failing.map((a) => (
            <li key={a.automation_id}>
              <Link to={`/automations/${encodeURIComponent(a.automation_id)}`}>{a.name}</Link>{' '}
              <span className="warn">
                {a.degraded_reason
                  ? degradedText(a.degraded_reason)
                  : `${a.consecutive_failures} failed run${a.consecutive_failures === 1 ? '' : 's'} in a row`}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Unread() {
  const notes = useResource('notifications', () => call(listNotifications, { query: { limit: 50 } }));
  const unread = (notes.data?.notifications ?? []).filter((n) => !n.read);
  return (
    <section aria-labelledby="unread">
      <h2 id="unread">Unread notifications</h2>
      <ErrorNote error={notes.error} />
      {notes.loading ? (
        <Loading what="notifications" />
      ) : unread.length === 0 ? (
        <p className="muted">You are all caught up.</p>
      ) : (
        <ul className="plain">
          {unread.slice(0, 8).map((n) => {
            // The notice itself leads where its first link does (the run, for a run's notice).
            const [first] = notificationLinks(n);
            return (
              <li key={n.id}>
                {first ? (
                  <Link to={first.to} {...marksRead(n.id)}>
                    {n.body}
                  </Link>
                ) : (
                  n.body
                )}{' '}
                <span className="muted">
                  · <When at={n.at} />
                </span>
              </li>
            );
          })}
        </ul>
      )}
      <p>
        <Link to="/notifications">All notifications</Link>
      </p>
    </section>
  );
}

export default function Home() {
  useTitle('Home');
  return (
    <>
      <h1>Home</h1>
      <Waiting />
      <div className="grid">
        <Attention />
        <Unread />
        <Recent />
      </div>
    </>
  );
}
