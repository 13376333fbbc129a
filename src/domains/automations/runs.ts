import type { Selectable } from 'kysely';
import { newId } from '../../ids.ts';
import type { AutomationTable, RunTable } from '../../storage/schema.ts';
import type { Db } from '../workspace/access.ts';

type AutomationRow = Selectable<AutomationTable>;

export const TERMINAL_RUN = new Set(['succeeded', 'failed', 'cancelled']);
export const RUNS_SHOWN = 20;

export type RunCause = 'schedule' | 'event' | 'manual' | 'dry_run' | 'subflow';

export interface QueueRunInput {
  automation: AutomationRow;
  versionId: string;
  cause: RunCause;
  dryRun: boolean;
  payload: unknown;
  requestedBy?: string | undefined;
  parent?: { runId: string; nodeKey: string } | undefined;
}

/** Stores a queued run and the job that will start it, in the caller's transaction. */
export async function queueRun(trx: Db, input: QueueRunInput): Promise<string> {
  const now = Date.now();
  const id = newId('run');
  await trx
    .insertInto('runs')
    .values({
      id,
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
    })
    .execute();
  await trx
    .insertInto('jobs')
    .values({ run_id: id, available_at: now, locked_by: null, locked_until: null, created_at: now })
    .execute();
  return id;
}

/** Makes a run's job due at `at` (creating the job when the run has none). */
export async function wake(trx: Db, runId: string, at = Date.now()): Promise<void> {
  await trx
    .insertInto('jobs')
    .values({ run_id: runId, available_at: at, locked_by: null, locked_until: null, created_at: Date.now() })
    .onConflict((oc) => oc.column('run_id').doUpdateSet({ available_at: at }))
    .execute();
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

/** One run of this automation with its nodes and output; null for any other id. */
export async function runDetail(db: Db, automationId: string, runId: string) {
  const run = await db
    .selectFrom('runs')
    .selectAll()
    .where('id', '=', runId)
    .where('automation_id', '=', automationId)
    .executeTakeFirst();
  if (!run) return null;
  const nodes = await db
    .selectFrom('run_nodes')
    .select(['node_key', 'status', 'attempt', 'error', 'started_at', 'finished_at'])
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
    })),
    ...(run.output_json !== null ? { output: JSON.parse(run.output_json) as unknown } : {}),
  };
}

export function newApprovalId(): string {
  return newId('apr');
}
