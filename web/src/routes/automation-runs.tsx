import { useState } from 'react';
import { Link } from 'react-router';
import { call } from '../api.ts';
import { usePolling, useResource } from '../hooks.ts';
import { readRun, type RunNode, type RunSummary } from '../../../src/contract/automations.ts';
import { readDraftRun } from '../../../src/contract/drafts.ts';
import { JsonValue } from '../ui/json.tsx';
import { PlanDiagram, type DiagramEdge, type DiagramNode } from '../ui/plan-diagram.tsx';
import { ErrorNote, Loading } from '../ui/status.tsx';
import { duration, When } from '../ui/time.tsx';
import { Rerun } from './automation-rerun.tsx';
import { RunApprovals } from './run-approvals.tsx';
import { StackTable } from '../ui/stack-table.tsx';
import { useModal } from '../ui/dialog.tsx';
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
  not_started: 'Not started',
};

type Inspection = Awaited<ReturnType<typeof call<typeof readRun>>>;

/** Every planned step (map bodies too), as `map.node`. */
function plannedIds(nodes: DiagramNode[], prefix = ''): { id: string; node: DiagramNode }[] {
  return nodes.flatMap((n) => [
    { id: `${prefix}${n.id}`, node: n },
    ...(n.kind === 'map' && n.body ? plannedIds(n.body.nodes, `${prefix}${n.id}.`) : []),
  ]);
}

/** A run's steps with those that have not started added, in plan order where the run has none. */
function withPlanned(run: Inspection): RunNode[] {
  if (!run.plan) return run.nodes;
  const seen = new Set(run.nodes.map((n) => n.node_id.replace(/\[\d+\]/g, '')));
  const missing = plannedIds(run.plan.nodes as DiagramNode[])
    .filter((p) => !seen.has(p.id))
    .map((p): RunNode => ({
      node_id: p.id,
      status: 'not_started',
      attempt: 0,
      kind: p.node.kind,
      ...(p.node.title ? { title: p.node.title } : {}),
    }));
  return [...run.nodes, ...missing];
}

const RANK = [
  'failed',
  'running',
  'waiting',
  'queued',
  'pending',
  'simulated',
  'succeeded',
  'skipped',
  'cancelled',
];

/** A step's status on the diagram: a map body's step shows the most telling status of its items. */
function statusIn(run: Inspection) {
  const by = new Map<string, string[]>();
  for (const n of run.nodes) {
    const id = n.node_id.replace(/\[\d+\]/g, '');
    by.set(id, [...(by.get(id) ?? []), n.status]);
  }
  return (id: string) => {
    const all = by.get(id);
    if (!all) return 'not_started';
    return RANK.find((s) => all.includes(s)) ?? all[0] ?? 'not_started';
  };
}

/** A step's input and output whole, pretty-printed and copyable (secret-looking values masked). */
function ShowAll({ node }: { node: RunNode }) {
  const [open, setOpen] = useState(false);
  const dialog = useModal(open);
  const [copied, setCopied] = useState<string | undefined>();
  const parts = [
    ['Input', node.input],
    ...(node.kind === 'agent' ? [['Prompt', node.instructions] as const] : []),
    [node.kind === 'agent' ? 'Answer' : 'Output', node.output],
  ] as const;
  const copy = async (label: string, text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(`${label} copied.`);
    } catch {
      setCopied('Copying was refused by the browser; select the text instead.');
    }
  };
  return (
    <>
      <button
        type="button"
        className="link"
        onClick={() => setOpen(true)}
        aria-label={`Show all of step ${node.node_id}`}
      >
        Show all
      </button>
      <dialog
        ref={dialog}
        className="new-automation"
        aria-label={`Step ${node.node_id}: input and output`}
        onClose={() => {
          setOpen(false);
          setCopied(undefined);
        }}
      >
        {open && (
          <>
            <div className="dialog-head">
              <h2>
                Step <code>{node.node_id}</code>
              </h2>
              <button type="button" onClick={() => dialog.current?.close()}>
                Close
              </button>
            </div>
            {parts.map(([label, value]) => {
              if (value === undefined) return null;
              const text = JSON.stringify(value, null, 2) ?? 'null';
              return (
                <section key={label} aria-label={label}>
                  <div className="page-head">
                    <h3>{label}</h3>
                    <button type="button" onClick={() => void copy(label, text)}>
                      Copy {label.toLowerCase()}
                    </button>
                  </div>
                  <pre className="whole">{text}</pre>
                </section>
              );
            })}
            <p className="small muted" role="status">
              {copied ?? 'Secret-looking values are masked.'}
            </p>
          </>
        )}
      </dialog>
    </>
  );
}

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
    <StackTable
      caption="Runs, newest first"
      columns={['Run', 'Status', 'Cause', 'Queued', 'Took']}
      after={truncated && <p className="muted small">Showing the latest 20 runs.</p>}
    >
      {runs.map((r) => (
        <tr key={r.run_id} aria-current={open === r.run_id ? 'true' : undefined}>
          <td>
            <Link
              to={{ search: `?run=${encodeURIComponent(r.run_id)}` }}
              replace
              onClick={() => onOpen(r.run_id)}
            >
              Open run <code>{r.run_id.slice(-6)}</code>
            </Link>
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
    </StackTable>
  );
}

function StepRow({ node }: { node: RunNode }) {
  const notStarted = node.status === 'not_started';
  return (
    <tr id={`run-step-${node.node_id}`} tabIndex={-1}>
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
        {(node.input !== undefined || node.output !== undefined) && <ShowAll node={node} />}
        {node.input === undefined && node.output === undefined && (
          <span className="muted">{notStarted ? 'Not run yet' : '—'}</span>
        )}
      </td>
    </tr>
  );
}

/** One run: its steps with status, attempts, timing, errors and outputs; followed while it moves. */
export function RunDetail({
  automationId,
  draftId,
  runId,
  canControl,
  onClose,
  onOpen,
}: {
  /** The automation the run belongs to, or (a dry run of a draft) the draft version. */
  automationId?: string;
  draftId?: string;
  runId: string;
  /** Whether the person may run the automation (and so retry or replay this run). */
  canControl: boolean;
  onClose: () => void;
  onOpen: (runId: string) => void;
}) {
  const run = useResource(`run:${runId}`, () =>
    draftId !== undefined
      ? call(readDraftRun, { params: { id: draftId, run_id: runId } })
      : call(readRun, { params: { id: automationId ?? '', run_id: runId } }),
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
          <p role="alert">This run is not one of this {draftId ? 'draft' : 'automation'}’s.</p>
        ) : (
          <ErrorNote error={run.error} />
        ))}
      {run.loading && <Loading what="the run" />}
      {run.data && (
        <>
          <p>
            {run.data.dry_run && <span className="badge">Simulated</span>} <Status status={run.data.status} />{' '}
            · {causeText(run.data.cause)}
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
          {run.data.plan && (
            <PlanDiagram
              nodes={run.data.plan.nodes as DiagramNode[]}
              edges={run.data.plan.edges as DiagramEdge[]}
              statusOf={statusIn(run.data)}
              onOpen={(id) => document.getElementById(`run-step-${id}`)?.focus()}
            />
          )}
          {automationId && <RunApprovals automationId={automationId} runId={runId} onDecided={run.reload} />}
          <StackTable
            caption="Steps of this run"
            showCaption
            columns={['Step', 'Kind', 'Status', 'Attempts', 'Took', 'Error', 'Data']}
          >
            {withPlanned(run.data).map((n) => (
              <StepRow key={n.node_id} node={n} />
            ))}
          </StackTable>
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
          {canControl && automationId && !isActive(run.data) && (
            <Rerun key={run.data.status} automationId={automationId} runId={runId} onStarted={onOpen} />
          )}
        </>
      )}
    </section>
  );
}
