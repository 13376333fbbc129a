import { Link } from 'react-router';
import { call } from '../api.ts';
import { useResource, useTitle } from '../hooks.ts';
import { listAutomations, type AutomationRow } from '../../../src/contract/automations.ts';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { NextRun, When } from '../ui/time.tsx';
import { Drafts, NewAutomation } from './automation-new.tsx';
import { Status } from './automation-runs.tsx';
import { StackTable } from '../ui/stack-table.tsx';
import { degradedText } from './automation-words.ts';

function State({ a }: { a: AutomationRow }) {
  if (!a.enabled) return <span className="badge">Paused</span>;
  if (a.degraded_reason) return <span className="warn">{degradedText(a.degraded_reason)}</span>;
  return <span className="ok">Enabled</span>;
}

export default function Automations() {
  useTitle('Automations');
  const list = useResource('automations', () => call(listAutomations, {}));
  const rows = list.data?.automations ?? [];
  return (
    <>
      <div className="page-head">
        <h1>Automations</h1>
        <NewAutomation />
      </div>
      <p className="muted">
        Your personal automations and the workspace’s. Start one here, or let agents draft them (or ask{' '}
        <code>@Builder</code> in a comment); you review, publish and pause them here.
      </p>
      <ErrorNote error={list.error} />
      {list.loading ? (
        <Loading what="automations" />
      ) : rows.length === 0 && !list.error ? (
        <p>No automations yet.</p>
      ) : (
        <StackTable
          caption="Automations"
          columns={['Name', 'Trigger', 'State', 'Next run', 'Last run', 'Failures']}
        >
          {rows.map((a) => (
            <tr key={a.automation_id}>
              <td>
                <Link to={`/automations/${encodeURIComponent(a.automation_id)}`}>{a.name}</Link>
                <span className="muted small"> {a.scope === 'workspace' ? 'workspace' : 'personal'}</span>
              </td>
              <td data-label="Trigger">{a.trigger_text}</td>
              <td data-label="State">
                <State a={a} />
              </td>
              <td data-label="Next run">
                {a.enabled ? (
                  <NextRun at={a.next_fire_at} trigger={a.trigger} />
                ) : (
                  <span className="muted">paused</span>
                )}
              </td>
              <td data-label="Last run">
                {a.last_run ? (
                  <>
                    <Status status={a.last_run.status} /> <When at={a.last_run.queued_at} />
                  </>
                ) : (
                  <span className="muted">never</span>
                )}
              </td>
              <td data-label="Failures" className={a.consecutive_failures > 0 ? 'warn' : ''}>
                {a.consecutive_failures}
              </td>
            </tr>
          ))}
        </StackTable>
      )}
      {list.data?.truncated && <p className="muted">Showing the newest 200.</p>}
      <Drafts />
    </>
  );
}
