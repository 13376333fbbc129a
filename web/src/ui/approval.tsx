import { useEffect, useRef, useState } from 'react';
import { Link } from 'react-router';
import { call } from '../api.ts';
import { useAction } from '../hooks.ts';
import {
  decideApproval,
  type ApprovalCard as Card,
  type WriteAfterApproval,
} from '../../../src/contract/people.ts';
import { ErrorNote } from './status.tsx';
import { When } from './time.tsx';

const STATES: Record<string, string> = {
  approved: 'Approved',
  rejected: 'Rejected',
  timed_out: 'Timed out',
  cancelled: 'Cancelled',
  pending: 'Waiting for a decision',
};

/** A value of a write's input as a person reads it. */
function valueText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join(', ');
  return JSON.stringify(value);
}

/** One write an approval lets happen: what, where, with what, and what is known only afterwards. */
function Write({ write }: { write: WriteAfterApproval }) {
  const fields = Object.entries(write.input);
  return (
    <li className="write">
      <p>
        <strong>
          {write.action}
          {write.target ? ` ${write.target}` : ''}
        </strong>
        {write.for_each && <span className="muted"> · for each item of {write.for_each}</span>}
        {write.title && <span className="muted"> · step “{write.title}”</span>}
      </p>
      {write.text && (
        <div className="write-text">
          <p className="small muted">{write.text.label}</p>
          <pre>{write.text.value}</pre>
        </div>
      )}
      {fields.length > 0 && (
        <dl className="fields small">
          {fields.map(([name, value]) => (
            <div key={name}>
              <dt>{name}</dt>
              <dd>{valueText(value)}</dd>
            </div>
          ))}
        </dl>
      )}
      {write.pending.length > 0 && (
        <ul className="later-fields small">
          {write.pending.map((p) => (
            <li key={p.field}>
              <code>{p.field}</code> is known only after the approval: {p.reason}.
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/**
 * An approval as every page draws it (the session, Home, the run, Notifications): its question,
 * the writes approving lets happen, and either `Approve`/`Reject` with a `Note` or who decided.
 * A decision someone else made first reloads the card, which then says who it was.
 */
export function ApprovalCard({
  card,
  onDecided,
  showAutomation = true,
  focused = false,
}: {
  card: Card;
  onDecided: () => Promise<unknown>;
  /** Name the automation it belongs to (off on the automation's own pages). */
  showAutomation?: boolean;
  /** Scroll to this card and focus it (a link named it). */
  focused?: boolean;
}) {
  const [note, setNote] = useState('');
  const action = useAction();
  const self = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!focused) return;
    self.current?.scrollIntoView({ block: 'start' });
    self.current?.focus();
  }, [focused]);
  const decide = (decision: 'approve' | 'reject') =>
    action.perform(async () => {
      try {
        await call(decideApproval, {
          params: { id: card.approval_id },
          body: { decision, ...(note.trim() ? { note: note.trim() } : {}) },
        });
      } finally {
        // Decided here or by someone else a moment before: the card shows what is now so.
        await onDecided();
      }
    });
  const id = card.approval_id;
  return (
    <article
      id={`approval-${id}`}
      ref={self}
      tabIndex={-1}
      className={`card approval ${card.status}`}
      aria-labelledby={`q-${id}`}
    >
      <p className="card-meta">
        <span className="badge">Approval</span> {STATES[card.status] ?? card.status}
        {showAutomation && card.automation_id && card.automation_name && (
          <>
            {' '}
            ·{' '}
            <Link
              to={`/automations/${encodeURIComponent(card.automation_id)}?run=${encodeURIComponent(card.run_id)}`}
            >
              {card.automation_name}
            </Link>
          </>
        )}
        {card.created_at && (
          <>
            {' '}
            · asked <When at={card.created_at} />
          </>
        )}
      </p>
      <h3 id={`q-${id}`} className="question">
        {card.message}
      </h3>
      {card.writes &&
        (card.writes.length === 0 ? (
          <p className="small muted">Approving lets the run go on; no step after it writes anything.</p>
        ) : (
          <>
            <p className="writes-label" id={`w-${id}`}>
              Writes after approval
            </p>
            <ul className="writes" aria-labelledby={`w-${id}`}>
              {card.writes.map((w) => (
                <Write key={`${w.node_id}:${w.capability}`} write={w} />
              ))}
            </ul>
          </>
        ))}
      {card.status === 'pending' ? (
        card.can_decide ? (
          <div className="decide">
            <label htmlFor={`note-${id}`}>Note</label>
            <textarea
              id={`note-${id}`}
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
        <>
          <p className="small" role="status">
            {card.status === 'timed_out'
              ? 'Nobody decided in time'
              : card.status === 'cancelled'
                ? 'The run ended before anyone decided'
                : `${STATES[card.status] ?? card.status} by ${card.decided_by ?? 'someone'}`}
            {card.decided_at && (
              <>
                , <When at={card.decided_at} />
              </>
            )}
            {card.note && <>: “{card.note}”</>}
          </p>
          <ErrorNote error={action.error} />
        </>
      )}
    </article>
  );
}
