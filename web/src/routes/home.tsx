import { Link } from 'react-router';
import { call } from '../api.ts';
import { useResource, useTitle } from '../hooks.ts';
import { listAutomations } from '../../../src/http/contract/automations.ts';
import { listDocuments } from '../../../src/http/contract/documents.ts';
import { awaitingApprovals, listNotifications } from '../../../src/http/contract/people.ts';
import { artifactPath, notificationLinks, TYPE_NAMES } from '../ui/links.ts';
import { marksRead } from '../ui/notices.ts';
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

function Attention() {
  const approvals = useResource('awaiting', () => call(awaitingApprovals, {}));
  const automations = useResource('automations', () => call(listAutomations, {}));
  const failing = (automations.data?.automations ?? []).filter(
    (a) => a.consecutive_failures > 0 || a.degraded_reason,
  );
  const loading = approvals.loading || automations.loading;
  const none = !loading && approvals.data?.approvals.length === 0 && failing.length === 0;
  return (
    <section aria-labelledby="attention">
      <h2 id="attention">Automations that need attention</h2>
      <ErrorNote error={approvals.error ?? automations.error} />
      {loading && <Loading what="automations" />}
      {none && <p className="muted">Nothing waits on you, and no automation is failing.</p>}
      {approvals.data && approvals.data.approvals.length > 0 && (
        <>
          <h3>Waiting for your approval</h3>
          <ul className="plain">
            {approvals.data.approvals.map((a) => (
              <li key={a.approval_id}>
                <Link to={`/sessions/${encodeURIComponent(a.session_id)}`}>{a.message}</Link>{' '}
                <span className="muted">
                  {a.automation_name} · asked <When at={a.created_at} />
                </span>
              </li>
            ))}
          </ul>
        </>
      )}
      {failing.length > 0 && (
        <>
          <h3>Failing or unable to run</h3>
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
        </>
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
      <div className="grid">
        <Attention />
        <Unread />
        <Recent />
      </div>
    </>
  );
}
