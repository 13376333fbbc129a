import { Link } from 'react-router';
import { call } from '../api.ts';
import { useAction, useResource, useTitle } from '../hooks.ts';
import { listNotifications, readApproval, type Notification } from '../../../src/contract/people.ts';
import { ApprovalCard } from '../ui/approval.tsx';
import { notificationLinks } from '../ui/links.ts';
import { marksRead } from '../ui/notices.ts';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { When } from '../ui/time.tsx';
import { markAllOpened, markOpened } from '../ui/unread.tsx';

const KINDS: Record<string, string> = { mention: 'Mention', automation: 'Automation' };

/** An approval's notice shows the approval itself, to decide here; one the reader can no longer see shows nothing. */
function NoticeApproval({ notice, onDecided }: { notice: Notification; onDecided: () => Promise<void> }) {
  const id = notice.approval_id as string;
  const card = useResource(`approval:${id}`, () => call(readApproval, { params: { id } }));
  if (!card.data) return card.error && !card.error.notFound ? <ErrorNote error={card.error} /> : null;
  return (
    <ApprovalCard
      card={card.data}
      onDecided={async () => {
        await card.reload();
        await markOpened([notice.id]);
        await onDecided();
      }}
    />
  );
}

export default function Notifications() {
  useTitle('Notifications');
  const notes = useResource('notifications', () => call(listNotifications, { query: { limit: 100 } }));
  const mark = useAction();
  const list = notes.data?.notifications ?? [];
  const unread = list.filter((n) => !n.read).length;
  return (
    <>
      <div className="page-head">
        <h1>Notifications</h1>
        {unread > 0 && (
          <button
            type="button"
            disabled={mark.busy}
            onClick={() =>
              void mark.perform(async () => {
                await markAllOpened();
                await notes.reload();
              })
            }
          >
            Mark all as read
          </button>
        )}
      </div>
      <ErrorNote error={notes.error ?? mark.error} />
      {notes.loading ? (
        <Loading what="notifications" />
      ) : list.length === 0 && !notes.error ? (
        <p>No notifications yet. Mentions of you and notices from your automations land here.</p>
      ) : (
        <>
          <p className="muted" role="status">
            {unread === 0 ? 'All read.' : `${unread} unread.`}
          </p>
          <ul className="cards" aria-label="Notifications">
            {list.map((n) => {
              const links = notificationLinks(n);
              return (
                <li key={n.id} className={n.read ? 'card' : 'card unread'}>
                  <p className="card-meta">
                    <span className="badge">{KINDS[n.kind] ?? n.kind}</span>
                    {!n.read && <span className="badge accent">Unread</span>} <When at={n.at} />
                  </p>
                  <p className="pre-line" id={`body-${n.id}`}>
                    {n.body}
                  </p>
                  {n.approval_id && <NoticeApproval notice={n} onDecided={notes.reload} />}
                  {links.length > 0 && (
                    <p className="card-links">
                      {links.map((l) => (
                        <Link key={l.to} to={l.to} aria-describedby={`body-${n.id}`} {...marksRead(n.id)}>
                          {l.label}
                        </Link>
                      ))}
                    </p>
                  )}
                </li>
              );
            })}
          </ul>
        </>
      )}
    </>
  );
}
