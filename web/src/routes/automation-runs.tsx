import { call } from '../api.ts';
import { usePolling, useResource } from '../hooks.ts';
import { readRun, type RunNode, type RunSummary } from '../../../src/http/contract/automations.ts';
import { JsonValue } from '../ui/json.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { duration, When } from '../ui/time.tsx';
import { Rerun } from './automation-rerun.tsx';
import { RunApprovals } from './run-approvals.tsx';
import { causeText, isActive } from './automation-words.ts';

const STATUS: Record<string, string> = {
  queued: 'Queued',
  running: 'Running',
  waiting: 'Waiting',
  succeeded: 'Succeeded',
  failed: 'Failed',
  cancelled: 'Cancelled',
  pending: 'Pending',
  skipped: 'Skipped',
  simulated: 'Simulated',
};

export function Status({ status }: { status: string }) {
  const tone = status === 'failed' ? 'warn' : status === 'succeeded' ? 'ok' : '';
  return <span className={`status ${tone}`}>{STATUS[status] ?? status}</span>;
}

/** The runs of an automation; each opens its per-step detail. */
export function RunsTable({
  runs,
  truncated,
  open,
  onOpen,
}: {
  runs: RunSummary[];
  truncated: boolean;
  open: string | undefined;
  onOpen: (runId: string) => void;
}) {
  if (runs.length === 0) return <p className="muted">No runs yet.</p>;
  return (
    <div className="table-wrap">
      <table className="stack">
        <caption className="visually-hidden">Runs, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Run</th>
            <th scope="col">Status</th>
            <th scope="col">Cause</th>
            <th scope="col">Queued</th>
            <th scope="col">Took</th>
          </tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.run_id} aria-current={open === r.run_id ? 'true' : undefined}>
              <td>
                <button type="button" className="link" onClick={() => onOpen(r.run_id)}>
                  Open run <code>{r.run_id.slice(-6)}</code>
                </button>
              </td>
              <td data-label="Status">
                <Status status={r.status} />
                {r.error && <span className="small warn"> {r.error}</span>}
              </td>
              <td data-label="Cause">{causeText(r.cause)}</td>
              <td data-label="Queued">
                <When at={r.queued_at} />
              </td>
              <td data-label="Took">{duration(r.started_at, r.finished_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {truncated && <p className="muted small">Showing the latest 20 runs.</p>}
    </div>
  );
}

function StepRow({ node }: { node: RunNode }) {
  return (
    <tr>
      <th scope="row">
        <code>{node.node_id}</code>
        {node.title && <div className="small">{node.title}</div>}
      </th>
      <td data-label="Kind">{node.kind ?? '—'}</td>
      <td data-label="Status">
        <Status status={node.status} />
      </td>
      <td data-label="Attempts">{node.attempt}</td>
      <td data-label="Took">{duration(node.started_at, node.finished_at)}</td>
      <td data-label="Error">
        {node.error ? (
          <span className="warn">
            {node.error}
            {node.error_code ? ` (${node.error_code})` : ''}
          </span>
        ) : (
          <span className="muted">—</span>
        )}
      </td>
      <td data-label="Data">
        <JsonValue value={node.input} label="Input" named />
        {node.kind === 'agent' && <JsonValue value={node.instructions} label="Prompt" named />}
        <JsonValue value={node.output} label={node.kind === 'agent' ? 'Answer' : 'Output'} named />
        {node.input === undefined && node.output === undefined && <span className="muted">—</span>}
      </td>
    </tr>
  );
}

/** One run: its steps with status, attempts, timing, errors and outputs; followed while it moves. */
export function RunDetail({
  automationId,
  runId,
  canControl,
  onClose,
  onOpen,
}: {
  automationId: string;
  runId: string;
  /** Whether the person may run the automation (and so retry or replay this run). */
  canControl: boolean;
  onClose: () => void;
  onOpen: (runId: string) => void;
}) {
  const run = useResource(`run:${runId}`, () =>
    call(readRun, { params: { id: automationId, run_id: runId } }),
  );
  usePolling(run.data ? isActive(run.data) : false, 1000, run.reload);
  const rerunOf = run.data?.rerun_of;
  return (
    <section className="panel" aria-labelledby="run-title">
      <div className="page-head">
        <h3 id="run-title">
          Run <code>{runId}</code>
        </h3>
        <button type="button" onClick={onClose}>
          Close run
        </button>
      </div>
      {run.error &&
        (run.error.notFound ? (
          <p role="alert">This run is not one of this automation’s.</p>
        ) : (
          <ErrorNote error={run.error} />
        ))}
      {run.loading && <Loading what="the run" />}
      {run.data && (
        <>
          <p>
            <Status status={run.data.status} /> · {causeText(run.data.cause)}
            {run.data.dry_run && ' (writes simulated)'} · version {run.data.version} · queued{' '}
            <When at={run.data.queued_at} />
            {run.data.finished_at && <> · took {duration(run.data.started_at, run.data.finished_at)}</>}
            {rerunOf && (
              <>
                {' '}
                · repeats{' '}
                <button type="button" className="link" onClick={() => onOpen(rerunOf)}>
                  run <code>{rerunOf.slice(-6)}</code>
                </button>
              </>
            )}
          </p>
          {run.data.error && (
            <p className="error" role="alert">
              {run.data.error}
            </p>
          )}
          <RunApprovals automationId={automationId} runId={runId} onDecided={run.reload} />
          <div className="table-wrap">
            <table className="stack">
              <caption>Steps of this run</caption>
              <thead>
                <tr>
                  <th scope="col">Step</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Took</th>
                  <th scope="col">Error</th>
                  <th scope="col">Data</th>
                </tr>
              </thead>
              <tbody>
                {run.data.nodes.map((n) => (
                  <StepRow key={n.node_id} node={n} />
                ))}
              </tbody>
            </table>
          </div>
          <div className="two">
            <div>
              <h4>Input</h4>
              <JsonValue value={run.data.trigger_payload} label="What the run started from" />
            </div>
            <div>
              <h4>Output</h4>
              <JsonValue value={run.data.output} label="The run’s output" />
            </div>
          </div>
          <p className="small muted">Secret-looking values are masked.</p>
          {canControl && !isActive(run.data) && (
            <Rerun key={run.data.status} automationId={automationId} runId={runId} onStarted={onOpen} />
          )}
        </>
      )}
    </section>
  );
}
