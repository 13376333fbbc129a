import { sql } from 'kysely';
import type { FlowPlan } from '../flowplan/plan.ts';
import { cancelPendingApprovals } from '../domains/automations/approvals.ts';
import { TERMINAL_RUN } from '../domains/automations/runs.ts';
import { endHeldJobs, endJob, wake } from '../queue/jobs.ts';
import { notify } from '../domains/activity/notify.ts';
import { compiledRow } from '../storage/compiled.ts';
import type { Db } from '../storage/schema.ts';
import type { Dialect } from '../storage/db.ts';
import { perTurn } from '../per-turn.ts';
import {
  LeaseLost,
  storeNodes,
  storeNodesOfHeldRuns,
  type NodeStore,
  type RunRow,
  type RunState,
} from './run-state.ts';
import { postSession } from './steps/context.ts';
import type { NodeRow } from './walker.ts';

export type RunEnd = 'succeeded' | 'failed' | 'cancelled';

interface FinishEnv {
  db: Db;
  dialect: Dialect;
  store: NodeStore;
  workerId: string;
}

/** The run's output: what its last steps (those nothing follows) gave. */
function runOutput(state: RunState, plan: FlowPlan): string {
  const sinks = plan.nodes.filter((n) => !(plan.edges ?? []).some((e) => e.from === n.id));
  const output: Record<string, unknown> = {};
  for (const n of sinks) {
    const row = state.rows.get(n.id);
    if (row && (row.status === 'succeeded' || row.status === 'simulated') && row.output_json !== null)
      output[n.id] = JSON.parse(row.output_json) as unknown;
  }
  return JSON.stringify(output);
}

const waitsForPeople = (plan: FlowPlan) =>
  plan.nodes.some(function approves(n): boolean {
    return n.kind === 'approval' || (n.kind === 'map' && n.body.nodes.some(approves));
  });

/**
 * Ending runs. A run that ends quietly (it succeeded, nothing waits on it or for it, nobody is
 * told) ends together with the runs ending in the same turn (see `quietEnds`); every other end is
 * a transaction that also cancels its approvals, wakes its parent, counts failures and tells who
 * asked to hear.
 */
export function runFinisher({ db, dialect, store, workerId }: FinishEnv) {
  const endQuietly = quietEnds(db, dialect, workerId);
  /** Ends the run: its state, its job, its waiting approvals, its parent, and who hears of it. */
  return async function finishRun(state: RunState, plan: FlowPlan, status: RunEnd, error?: string) {
    const { run, automation } = state;
    const now = Date.now();
    const ended = {
      status,
      started_at: run.started_at ?? now,
      finished_at: now,
      updated_at: now,
      error: error ?? null,
      output_json: runOutput(state, plan),
    };
    const waits = waitsForPeople(plan);
    const quiet =
      status === 'succeeded' &&
      !waits &&
      !run.parent_run_id &&
      (run.dry_run !== 0 || (automation.consecutive_failures === 0 && automation.notify !== 'everyRun'));
    if (quiet) {
      await store.storing(state, (rows) => endQuietly({ runId: run.id, rows, ...ended }));
      return;
    }
    await db.transaction().execute(async (trx) => {
      // Letting go of the run's job is the lease check: a worker that lost the run writes nothing.
      if (!(await endJob(trx, run.id, workerId))) throw new LeaseLost(`run ${run.id} is no longer held`);
      await store.flush(trx, state, true);
      const updated = await endRun(trx, { id: run.id, ...ended });
      if (Number(updated.numAffectedRows) === 0) return;
      // Waiting steps of a run that ended no longer wait.
      if (waits) await cancelPendingApprovals(trx, run.id);
      if (run.parent_run_id) await wake(trx, run.parent_run_id);
      if (run.dry_run) return;
      // Counted in the statement itself, so runs that end together all count.
      if (status === 'failed' || (status === 'succeeded' && automation.consecutive_failures !== 0)) {
        await trx
          .updateTable('automations')
          .set((eb) => ({
            consecutive_failures: status === 'failed' ? eb('consecutive_failures', '+', 1) : eb.val(0),
          }))
          .where('id', '=', automation.id)
          .execute();
      }
      // Said as a sentence; the card links it to the run's page.
      if (status === 'failed')
        await postSession(trx, state, `A run failed: ${error ?? 'no reason was given'}.`, {
          type: 'run',
          run_id: run.id,
          status,
        });
      if (automation.notify === 'everyRun' || (automation.notify === 'problems' && status === 'failed')) {
        await notify(trx, {
          workspaceId: run.workspace_id,
          personId: automation.created_by,
          kind: 'automation',
          automationId: automation.id,
          runId: run.id,
          body: `“${automation.name}” ${RUN_ENDS[status] ?? status}${error ? `: ${error}` : '.'}`,
        });
      }
    });
  };
}

interface QuietEnd {
  runId: string;
  rows: NodeRow[];
  status: RunEnd;
  started_at: number;
  finished_at: number;
  updated_at: number;
  output_json: string;
}

/** How a run's end reads in a notice: `“Digest” failed: …`. */
const RUN_ENDS: Record<string, string> = {
  succeeded: 'ran to the end',
  failed: 'failed',
  cancelled: 'was cancelled',
};

/** Ends a run that has not ended yet (compiled once: every run that does not end quietly). */
const endRun = compiledRow(
  ['id', 'status', 'started_at', 'finished_at', 'updated_at', 'error', 'output_json'],
  (
    db,
    {
      id,
      ...ended
    }: Pick<RunRow, 'id' | 'status' | 'started_at' | 'finished_at' | 'updated_at' | 'error' | 'output_json'>,
  ) =>
    db
      .updateTable('runs')
      .set(ended)
      .where('id', '=', id)
      .where('status', 'not in', [...TERMINAL_RUN]),
);

/**
 * Quiet ends: each lets go of its run's job (the lease check), stores the run's last node states
 * and ends it; nothing is written for a run whose job is not this worker's. Ends asked for in the
 * same turn of the event loop (runs finishing together) are one transaction on SQLite and one
 * statement on Postgres (a statement is its own transaction, as durable as the one it replaces).
 */
function quietEnds(db: Db, dialect: Dialect, workerId: string) {
  const terminal = sql.join([...TERMINAL_RUN].map((s) => sql.lit(s)));
  const lost = (runId: string) => new LeaseLost(`run ${runId} is no longer held`);
  if (dialect !== 'postgres')
    return perTurn((batch: QuietEnd[]) =>
      db.transaction().execute(async (trx) => {
        const answers: (undefined | LeaseLost)[] = [];
        for (const { runId, rows, ...ended } of batch) {
          if (!(await endJob(trx, runId, workerId))) {
            answers.push(lost(runId));
            continue;
          }
          await storeNodes(trx, rows);
          await endRun(trx, { id: runId, ...ended, error: null });
          answers.push(undefined);
        }
        return answers;
      }),
    );
  return perTurn(async (batch: QuietEnd[]): Promise<(undefined | LeaseLost)[]> => {
    const ends = batch.map(({ rows: _rows, ...end }) => ({ run_id: end.runId, ...end }));
    const rows = batch.flatMap((end) => end.rows);
    // Each statement in a WITH runs to completion whether or not the query reads it.
    const result = await sql<{ run_id: string }>`
      with asked as (
        select * from json_to_recordset(${JSON.stringify(ends)}::json) as a(
          run_id text, status text, started_at bigint, finished_at bigint, updated_at bigint,
          output_json text)
      ), held as (
        ${endHeldJobs(workerId)}
      ), nodes as (
        ${storeNodesOfHeldRuns(rows, sql`select run_id from held`)}
      ), ended as (
        update runs set status = asked.status,
          started_at = coalesce(runs.started_at, asked.started_at),
          finished_at = asked.finished_at, updated_at = asked.updated_at, error = null,
          output_json = asked.output_json
        from asked
        where runs.id = asked.run_id and runs.id in (select run_id from held)
          and runs.status not in (${terminal})
      )
      select run_id from held`.execute(db);
    const held = new Set(result.rows.map((r) => r.run_id));
    return batch.map((end) => (held.has(end.runId) ? undefined : lost(end.runId)));
  });
}
