import type { Insertable, Selectable } from 'kysely';
import { compiledRows } from '../../storage/compiled.ts';
import { newId } from '../../ids.ts';
import type { AutomationTable, RunTable, Db } from '../../storage/schema.ts';
import { addJobs, dropJobs, dueJobs } from '../../queue/jobs.ts';
import { onPostgres } from '../../storage/db.ts';

type AutomationRow = Selectable<AutomationTable>;

export const TERMINAL_RUN = new Set(['succeeded', 'failed', 'cancelled']);
export const RUNS_SHOWN = 20;

export type RunCause = 'schedule' | 'event' | 'manual' | 'dry_run' | 'subflow' | 'retry' | 'replay';

export interface QueueRunInput {
  /** The automation it runs for; a dry run of a never-published draft has none (`id` null). */
  automation: Pick<AutomationRow, 'workspace_id' | 'acting_id'> & { id: string | null };
  versionId: string;
  cause: RunCause;
  dryRun: boolean;
  payload: unknown;
  requestedBy?: string | undefined;
  parent?: { runId: string; nodeKey: string; rootRunId: string; subflowDepth: number } | undefined;
  /** Event hops that led here (a run's own writes cause events one level deeper). */
  eventDepth?: number | undefined;
  /** The run a retry or replay repeats. */
  rerunOf?: string | undefined;
}

/** Stores a queued run and the job that will start it, in the caller's transaction. */
export async function queueRun(trx: Db, input: QueueRunInput): Promise<string> {
  const [id] = await queueRuns(trx, [input]);
  return id as string;
}

/**
 * Rows of `row`'s shape one insert may carry: up to 1,000, within SQLite's 32,766 parameters per
 * statement (Postgres allows 65,535).
 */
const rowsPerInsert = (row: object) => Math.min(1_000, Math.floor(30_000 / Object.keys(row).length));

/** The columns a queued run sets: its row names each, and no other (see `queueFew`). */
const RUN_COLUMNS = [
  'id',
  'workspace_id',
  'automation_id',
  'flow_version_id',
  'parent_run_id',
  'parent_node_key',
  'cause',
  'dry_run',
  'status',
  'acting_id',
  'requested_by',
  'error',
  'queued_at',
  'started_at',
  'finished_at',
  'updated_at',
  'trigger_json',
  'output_json',
  'event_depth',
  'subflow_depth',
  'root_run_id',
  'rerun_of',
] as const;
type QueuedRun = Pick<Insertable<RunTable>, (typeof RUN_COLUMNS)[number]> & { id: string; queued_at: number };

/** Stores many queued runs and their jobs in two statements (the scheduler queues them in batches). */
export async function queueRuns(trx: Db, inputs: QueueRunInput[]): Promise<string[]> {
  if (inputs.length === 0) return [];
  const now = Date.now();
  const runs = inputs.map((input): QueuedRun => ({
    id: newId('run'),
    workspace_id: input.automation.workspace_id,
    automation_id: input.automation.id,
    flow_version_id: input.versionId,
    parent_run_id: input.parent?.runId ?? null,
    parent_node_key: input.parent?.nodeKey ?? null,
    cause: input.cause,
    dry_run: input.dryRun ? 1 : 0,
    status: 'queued',
    acting_id: input.automation.acting_id,
    requested_by: input.requestedBy ?? null,
    error: null,
    queued_at: now,
    started_at: null,
    finished_at: null,
    updated_at: now,
    trigger_json: JSON.stringify(input.payload ?? {}),
    output_json: null,
    event_depth: input.eventDepth ?? 0,
    subflow_depth: input.parent?.subflowDepth ?? 0,
    root_run_id: input.parent?.rootRunId ?? null,
    rerun_of: input.rerunOf ?? null,
  }));
  const ids = runs.map((r) => r.id);
  if (runs.length <= FEW) {
    await queueFew(trx, runs);
    if (!onPostgres(trx)) await addJobs(trx, ids, now);
    return ids;
  }
  const perInsert = rowsPerInsert(runs[0]!);
  if (runs.length <= perInsert && onPostgres(trx)) {
    await withTheirJobs(trx, runs, now).execute();
    return ids;
  }
  for (let i = 0; i < runs.length; i += perInsert)
    await trx
      .insertInto('runs')
      .values(runs.slice(i, i + perInsert))
      .execute();
  await addJobs(trx, ids, now);
  return ids;
}

/** Runs queued together most often (calls that arrived in the same turn): up to this many. */
const FEW = 16;

/**
 * A few queued runs (a call's `run` and those asked with it, an event's, a subflow's), compiled
 * once per number of runs: on Postgres with their jobs in the same statement; on SQLite the jobs
 * follow.
 */
const queueFew = compiledRows(RUN_COLUMNS, FEW, (db, few: QueuedRun[]) =>
  onPostgres(db) ? withTheirJobs(db, few, few[0]!.queued_at) : db.insertInto('runs').values(few),
);

/** On Postgres, one statement (one round trip) that stores runs and a due job for each. */
const withTheirJobs = (db: Db, runs: QueuedRun[], now: number) =>
  db
    .with('queued', (q) => q.insertInto('runs').values(runs))
    .insertInto('jobs')
    .values(
      dueJobs(
        runs.map((r) => r.id),
        now,
      ),
    );

/** Ends an automation's unfinished dry runs (pausing it does): they never start or go on again. */
export async function cancelDryRuns(trx: Db, automationId: string, why: string): Promise<void> {
  const now = Date.now();
  const active = await trx
    .selectFrom('runs')
    .select('id')
    .where('automation_id', '=', automationId)
    .where('dry_run', '=', 1)
    .where('status', 'not in', [...TERMINAL_RUN])
    .execute();
  if (active.length === 0) return;
  const ids = active.map((r) => r.id);
  await trx
    .updateTable('runs')
    .set({ status: 'cancelled', error: why, finished_at: now, updated_at: now })
    .where('id', 'in', ids)
    .where('status', 'not in', [...TERMINAL_RUN])
    .execute();
  await dropJobs(trx, ids);
}

/** A stored time (ms since the epoch) as automations show it: an ISO-8601 instant in UTC. */
export const iso = (ms: number | null | undefined) =>
  ms === null || ms === undefined ? undefined : new Date(ms).toISOString();

export interface RunSummary {
  run_id: string;
  status: string;
  dry_run: boolean;
  cause: string;
  error?: string;
  queued_at: string;
  started_at?: string;
  finished_at?: string;
}

function summary(run: Selectable<RunTable>): RunSummary {
  return {
    run_id: run.id,
    status: run.status,
    dry_run: run.dry_run === 1,
    cause: run.cause,
    ...(run.error ? { error: run.error } : {}),
    queued_at: iso(run.queued_at) as string,
    ...(run.started_at !== null ? { started_at: iso(run.started_at) } : {}),
    ...(run.finished_at !== null ? { finished_at: iso(run.finished_at) } : {}),
  };
}

/** Where a run is looked for: among an automation's, or among the dry runs of a draft version. */
export type RunOwner = string | { draftVersionId: string };

/** The latest runs of an automation, newest first. */
export async function latestRuns(db: Db, automationId: string) {
  const rows = await db
    .selectFrom('runs')
    .selectAll()
    .where('automation_id', '=', automationId)
    .orderBy('id', 'desc')
    .limit(RUNS_SHOWN + 1)
    .execute();
  return { runs: rows.slice(0, RUNS_SHOWN).map(summary), runs_truncated: rows.length > RUNS_SHOWN };
}

/**
 * One run of this automation (or dry run of this draft) with its nodes and output; null for any other id. `full` adds each
 * node's timing and output (the automation page shows them; read_automation stays small).
 */
export async function runDetail(db: Db, owner: RunOwner, runId: string, options: { full?: boolean } = {}) {
  const run = await db
    .selectFrom('runs')
    .selectAll()
    .where('id', '=', runId)
    .$if(typeof owner === 'string', (q) => q.where('automation_id', '=', owner as string))
    .$if(typeof owner !== 'string', (q) =>
      q
        .where('automation_id', 'is', null)
        .where('flow_version_id', '=', (owner as { draftVersionId: string }).draftVersionId),
    )
    .executeTakeFirst();
  if (!run) return null;
  const nodes = await db
    .selectFrom('run_nodes')
    .select(['node_key', 'status', 'attempt', 'error', 'started_at', 'finished_at'])
    .$if(options.full === true, (q) => q.select(['output_json', 'error_code', 'input_json']))
    .where('run_id', '=', run.id)
    .execute();
  // In the order they ran; skipped nodes, which never started, by when they were skipped.
  const when = (n: { started_at: number | null; finished_at: number | null }) =>
    n.started_at ?? n.finished_at ?? Number.MAX_SAFE_INTEGER;
  nodes.sort((a, b) => when(a) - when(b) || a.node_key.localeCompare(b.node_key));
  return {
    ...summary(run),
    nodes: nodes.map((n) => ({
      node_id: n.node_key,
      status: n.status,
      attempt: n.attempt,
      ...(n.error && n.status !== 'succeeded' ? { error: n.error } : {}),
      ...(options.full
        ? {
            ...(n.error_code ? { error_code: n.error_code } : {}),
            ...(n.started_at !== null ? { started_at: iso(n.started_at) } : {}),
            ...(n.finished_at !== null ? { finished_at: iso(n.finished_at) } : {}),
            ...(n.input_json ? { input: JSON.parse(n.input_json) as unknown } : {}),
            ...(n.output_json ? { output: JSON.parse(n.output_json) as unknown } : {}),
          }
        : {}),
    })),
    ...(run.output_json !== null ? { output: JSON.parse(run.output_json) as unknown } : {}),
    ...(options.full
      ? {
          trigger_payload: JSON.parse(run.trigger_json) as unknown,
          flow_version_id: run.flow_version_id,
          ...(run.rerun_of ? { rerun_of: run.rerun_of } : {}),
        }
      : {}),
  };
}
