import { Link, useParams, useSearchParams } from 'react-router';
import { call } from '../api.ts';
import { useAction, usePolling, useResource, useTitle } from '../hooks.ts';
import {
  readAutomation,
  setEnabled,
  startRun,
  type AutomationDetail,
} from '../../../src/contract/automations.ts';
import { ErrorNote, LoadFailure, Loading } from '../ui/status.tsx';
import { NextRun, When } from '../ui/time.tsx';
import { Editor } from './automation-edit.tsx';
import { PlanDiagram, type DiagramEdge, type DiagramNode } from '../ui/plan-diagram.tsx';
import { RunDetail, RunsTable, Status } from './automation-runs.tsx';
import { Schedule } from './automation-schedule.tsx';
import { Versions } from './automation-versions.tsx';
import { degradedText, isActive } from './automation-words.ts';

function Controls({
  detail,
  reload,
  openRun,
}: {
  detail: AutomationDetail;
  reload: () => Promise<void>;
  openRun: (id: string) => void;
}) {
  const action = useAction();
  const toggle = () =>
    action.perform(async () => {
      await call(setEnabled, { params: { id: detail.automation_id }, body: { enabled: !detail.enabled } });
      await reload();
    });
  const run = (dryRun: boolean) =>
    action.perform(async () => {
      const started = await call(startRun, {
        params: { id: detail.automation_id },
        body: { dry_run: dryRun },
      });
      openRun(started.run_id);
      await reload();
    });
  return (
    <div className="controls" role="group" aria-label="Controls">
      <button type="button" onClick={() => void toggle()} disabled={action.busy}>
        {detail.enabled ? 'Pause' : 'Resume'}
      </button>
      <button
        type="button"
        onClick={() => void run(false)}
        disabled={action.busy || !detail.enabled}
        aria-describedby={detail.enabled ? undefined : 'paused-note'}
      >
        Run now
      </button>
      <button type="button" onClick={() => void run(true)} disabled={action.busy}>
        Dry run
      </button>
      {!detail.enabled && (
        <span id="paused-note" className="muted small">
          Paused: nothing runs until you resume it (a dry run still works).
        </span>
      )}
      <ErrorNote error={action.error} />
    </div>
  );
}

/** The live plan drawn as a diagram, when the plan has the shape to draw. */
function planDiagram(plan: unknown) {
  const p = plan as { nodes?: DiagramNode[]; edges?: DiagramEdge[] } | undefined;
  if (!p || !Array.isArray(p.nodes)) return null;
  return <PlanDiagram nodes={p.nodes} edges={p.edges} />;
}

function Summary({ detail }: { detail: AutomationDetail }) {
  return (
    <>
      <p className="lead">{detail.ask}</p>
      <dl className="facts">
        <dt>State</dt>
        <dd>
          {detail.enabled ? <span className="ok">Enabled</span> : <span className="badge">Paused</span>}
          {detail.degraded_reason && <span className="warn"> · {degradedText(detail.degraded_reason)}</span>}
        </dd>
        <dt>Next run</dt>
        <dd>
          {detail.enabled ? (
            <NextRun at={detail.next_fire_at} trigger={detail.trigger} />
          ) : (
            <span className="muted">paused</span>
          )}
        </dd>
        <dt>Last run</dt>
        <dd>
          {detail.runs[0] ? (
            <>
              <Status status={detail.runs[0].status} /> <When at={detail.runs[0].queued_at} />
            </>
          ) : (
            <span className="muted">never</span>
          )}
        </dd>
        <dt>Failures in a row</dt>
        <dd className={detail.consecutive_failures ? 'warn' : ''}>{detail.consecutive_failures}</dd>
        <dt>Kind</dt>
        <dd>
          {detail.scope === 'workspace' ? 'Workspace automation' : 'Personal automation'} by{' '}
          {detail.created_by} · version {detail.version}
        </dd>
        <dt>Session</dt>
        <dd>
          <Link to={`/sessions/${encodeURIComponent(detail.session_id)}`}>Messages and approvals</Link>
        </dd>
      </dl>
    </>
  );
}

export default function Automation() {
  const { id = '' } = useParams();
  const [params, setParams] = useSearchParams();
  const openRunId = params.get('run') ?? undefined;
  const detail = useResource(`automation:${id}`, () => call(readAutomation, { params: { id } }));
  useTitle(
    detail.data
      ? `${detail.data.name} · Automations`
      : detail.error?.notFound
        ? 'Automation not found'
        : 'Automation',
  );
  usePolling((detail.data?.runs ?? []).some(isActive), 1500, detail.reload);

  if (detail.error && !detail.data) return <LoadFailure error={detail.error} what="Automation" />;
  if (!detail.data) return <Loading what="the automation" />;
  const d = detail.data;
  const openRun = (runId: string | undefined) => setParams(runId ? { run: runId } : {}, { replace: true });

  return (
    <>
      <p className="crumbs">
        <Link to="/automations">Automations</Link>
      </p>
      <h1>{d.name}</h1>
      <Summary detail={d} />
      {d.can_control ? (
        <Controls detail={d} reload={detail.reload} openRun={openRun} />
      ) : (
        <p className="muted">
          {d.scope === 'workspace'
            ? 'Only workspace admins can change this automation.'
            : 'Only its creator can change this automation.'}
        </p>
      )}
      <ErrorNote error={detail.error} />
      <div className="columns">
        <div>
          <section aria-labelledby="steps">
            <h2 id="steps">Steps</h2>
            {planDiagram(d.plan_json)}
            <ul className="steps">
              {d.steps.map((s) => (
                <li key={s} className={/^\d+\.\d/.test(s) ? 'nested' : undefined}>
                  {s}
                </li>
              ))}
            </ul>
            <h3>Writes</h3>
            {d.writes.length ? (
              <ul className="inline-list">
                {d.writes.map((w) => (
                  <li key={w}>
                    <code>{w}</code>
                  </li>
                ))}
              </ul>
            ) : (
              <p className="muted">It writes nothing.</p>
            )}
            <p className="muted small">
              {d.write_approval === 'automatic'
                ? 'Writes run unattended.'
                : 'Every write waits for an approval first.'}
            </p>
          </section>
          <Schedule schedule={d.schedule} enabled={d.enabled} />
        </div>
        <div>
          <section aria-labelledby="runs">
            <h2 id="runs">Runs</h2>
            <RunsTable runs={d.runs} truncated={d.runs_truncated} open={openRunId} onOpen={openRun} />
            {openRunId && (
              <RunDetail
                key={openRunId}
                automationId={d.automation_id}
                runId={openRunId}
                canControl={d.can_control}
                onClose={() => openRun(undefined)}
                onOpen={(runId) => {
                  openRun(runId);
                  void detail.reload();
                }}
              />
            )}
          </section>
        </div>
      </div>
      {d.can_control && <Editor detail={d} onPublished={detail.reload} />}
      <Versions automationId={d.automation_id} stamp={d.flow_version_id} />
    </>
  );
}
