import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db, AutomationTable, RunTable } from '../storage/schema.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import { LimitError } from '../errors.ts';
import { renewLease } from '../queue/jobs.ts';
import { compiledRows } from '../storage/compiled.ts';
import { storedOutput, type RunLimits } from './limits.ts';
import { knownOutput, type NodeRow } from './walker.ts';

/**
 * The one writer of `run_nodes`. A worker holding a run keeps its node rows in memory: it reads
 * them once, changes them only through this module (so its copy stays what is stored), and writes
 * a step's state only while it still holds the run's lease — inside the write's own transaction.
 * Pure steps are staged and stored together with the next write (or on their own before the run
 * waits), so a chain of transforms costs one round trip.
 */

export type RunRow = Selectable<RunTable>;
export type AutomationRow = Selectable<AutomationTable>;
export type NodePatch = Partial<Omit<NodeRow, 'run_id' | 'node_key' | 'node_id'>>;

/**
 * Why a step failed, as a value: a rejected approval cancels the run; an unknown outcome is never
 * retried; a busy document (another writer held it, nothing done) is always tried again a few times.
 */
export type ErrorCode = 'rejected' | 'outcome_unknown' | 'limit' | 'timeout' | 'busy';

/** The worker no longer holds the run (its lease ran out and another took it, or the run ended). */
export class LeaseLost extends Error {}

/** What a worker knows of the run it holds. */
export interface RunState {
  run: RunRow;
  automation: AutomationRow;
  actor: Actor;
  rows: Map<string, NodeRow>;
  /** Rows changed in memory and not stored yet (pure steps). */
  staged: Map<string, NodeRow>;
  /** Node changes made so far: a round that made none changed nothing. */
  changes: number;
  /** Bytes of node outputs so far, and node executions so far (the run's caps). */
  bytes: number;
  nodes: number;
}

/** What a node row's key is, and the SQL type of each of its other columns (what a step changes). */
const NODE_KEY = { run_id: 'text', node_key: 'text', node_id: 'text' } as const;
const NODE_STATE_TYPES = {
  status: 'text',
  attempt: 'integer',
  error: 'text',
  error_code: 'text',
  wait_until: 'bigint',
  started_at: 'bigint',
  finished_at: 'bigint',
  output_json: 'text',
  input_json: 'text',
} as const;
const NODE_STATE = Object.keys(NODE_STATE_TYPES) as (keyof typeof NODE_STATE_TYPES)[];
const NODE_COLUMNS = { ...NODE_KEY, ...NODE_STATE_TYPES };
// A column added to run_nodes and not listed above fails the type check here.
const everyNodeColumn: Exclude<keyof NodeRow, keyof typeof NODE_COLUMNS> extends never ? true : never = true;
void everyNodeColumn;

/**
 * On Postgres, the statement (for a common table expression) that stores `rows` of the runs
 * `held` selects, as the store's own upserts do: the quiet end stores a run's last node states in
 * the statement that lets go of its job and ends it.
 */
export function storeNodesOfHeldRuns(rows: NodeRow[], held: RawBuilder<unknown>): RawBuilder<unknown> {
  const names = Object.keys(NODE_COLUMNS);
  const typed = Object.entries(NODE_COLUMNS).map(([name, type]) => `${name} ${type}`);
  return sql`insert into run_nodes (${sql.raw(names.join(', '))})
        select ${sql.raw(names.map((n) => `n.${n}`).join(', '))}
        from json_to_recordset(${JSON.stringify(rows)}::json) as n(${sql.raw(typed.join(', '))})
        where n.run_id in (${held})
        on conflict (run_id, node_key) do update set
          ${sql.raw(NODE_STATE.map((c) => `${c} = excluded.${c}`).join(', '))}`;
}

const NODE_ROWS_A_STATEMENT = 200;

/** Stores node rows (new or changed) in one statement, compiled once per number of rows. */
const upsertNodes = compiledRows(
  Object.keys(NODE_COLUMNS) as (keyof NodeRow & keyof typeof NODE_COLUMNS)[],
  NODE_ROWS_A_STATEMENT,
  (db, rows: NodeRow[]) =>
    db
      .insertInto('run_nodes')
      .values(rows)
      .onConflict((oc) =>
        oc
          .columns(['run_id', 'node_key'])
          .doUpdateSet((eb) => Object.fromEntries(NODE_STATE.map((c) => [c, eb.ref(`excluded.${c}`)]))),
      ),
);

/** Stores node rows (new or changed) in `trx`; the caller checked the run's lease in it. */
export async function storeNodes(trx: Db, rows: NodeRow[]): Promise<void> {
  for (let i = 0; i < rows.length; i += NODE_ROWS_A_STATEMENT)
    await upsertNodes(trx, rows.slice(i, i + NODE_ROWS_A_STATEMENT));
}

const BASE = {
  status: 'pending',
  attempt: 0,
  error: null,
  error_code: null,
  wait_until: null,
  started_at: null,
  finished_at: null,
  output_json: null,
  input_json: null,
} as const;

export interface NodeStoreOptions {
  workerId: string;
  leaseMs: number;
  limits: RunLimits;
}

export function nodeStore({ workerId, leaseMs, limits }: NodeStoreOptions) {
  /** Renews this worker's lease on the run inside `trx`; a worker that lost it writes nothing. */
  async function holdLease(trx: Db, runId: string, progressed = false): Promise<void> {
    // A step that ended is progress: the deaths counted before it were not this run's doing.
    if ((await renewLease(trx, runId, { workerId, leaseMs }, progressed)) !== 1)
      throw new LeaseLost(`run ${runId} is no longer held by ${workerId}`);
  }

  function changed(
    state: RunState,
    key: string,
    nodeId: string,
    patch: NodePatch,
    output?: unknown,
  ): NodeRow {
    const known = state.rows.get(key) ?? { run_id: state.run.id, node_key: key, node_id: nodeId, ...BASE };
    const row = { ...known, ...patch };
    if (output !== undefined) knownOutput(row, output);
    state.rows.set(key, row);
    state.changes += 1;
    return row;
  }

  /** Stores `rows` in `trx`, renewing the lease (unless the caller checked it in `trx` already). */
  async function storeRows(trx: Db, state: RunState, rows: NodeRow[], leaseChecked = false): Promise<void> {
    if (!leaseChecked)
      await holdLease(
        trx,
        state.run.id,
        rows.some((r) => r.status !== 'running'),
      );
    await storeNodes(trx, rows);
  }

  /** Takes the staged rows out, to be stored now (put back if storing them fails). */
  async function withStaged(state: RunState, store: (rows: NodeRow[]) => Promise<void>, extra: NodeRow[]) {
    const staged = [...state.staged.values()];
    state.staged.clear();
    try {
      await store([...staged, ...extra]);
    } catch (error) {
      for (const row of staged) if (!state.staged.has(row.node_key)) state.staged.set(row.node_key, row);
      throw error;
    }
  }

  /**
   * Changes a node now. In a transaction of the caller's it stores that row alone (the caller's
   * transaction may still fail); on its own it stores what is staged with it.
   */
  async function write(
    on: Db,
    state: RunState,
    key: string,
    nodeId: string,
    patch: NodePatch,
    output?: unknown,
  ) {
    const row = changed(state, key, nodeId, patch, output);
    state.staged.delete(key);
    if (on.isTransaction) await storeRows(on, state, [row]);
    else
      await withStaged(state, (rows) => on.transaction().execute((trx) => storeRows(trx, state, rows)), [
        row,
      ]);
  }

  /** Changes a node in memory only; stored with the next write or `flush`. */
  function stage(state: RunState, key: string, nodeId: string, patch: NodePatch, output?: unknown): void {
    state.staged.set(key, changed(state, key, nodeId, patch, output));
  }

  /** Stores what is staged (`leaseChecked`: the caller's transaction checked the lease already). */
  async function flush(on: Db, state: RunState, leaseChecked = false): Promise<void> {
    if (state.staged.size === 0) return;
    const store = (trx: Db, rows: NodeRow[]) => storeRows(trx, state, rows, leaseChecked);
    if (on.isTransaction) await withStaged(state, (rows) => store(on, rows), []);
    else await withStaged(state, (rows) => on.transaction().execute((trx) => store(trx, rows)), []);
  }

  /**
   * Ends a node (written now, or staged for a pure step); an output past the node's or the run's
   * cap fails it instead of being stored.
   */
  async function finish(
    on: Db | 'staged',
    state: RunState,
    key: string,
    nodeId: string,
    end: {
      status: string;
      output?: unknown;
      error?: string | undefined;
      code?: ErrorCode | null | undefined;
      begun?: { attempt: number; started_at: number; input_json?: string | null } | undefined;
      /** Keep what the node stored so far (a failed map keeps its items, so a retry can go on). */
      keepOutput?: boolean;
    },
  ): Promise<void> {
    let json: string | null;
    let patch: NodePatch;
    try {
      const kept = end.keepOutput ? (state.rows.get(key)?.output_json ?? null) : undefined;
      json = kept !== undefined ? kept : storedOutput(end.output, limits, state.bytes);
      patch = {
        ...end.begun,
        status: end.status,
        finished_at: Date.now(),
        wait_until: null,
        error: end.error ?? null,
        error_code: end.code ?? null,
        output_json: json,
      };
      if (kept === undefined) state.bytes += json === null ? 0 : json.length;
    } catch (refused) {
      if (!(refused instanceof LimitError)) throw refused;
      json = null;
      patch = {
        ...end.begun,
        status: 'failed',
        finished_at: Date.now(),
        wait_until: null,
        error: refused.message,
        error_code: 'limit',
        output_json: null,
      };
    }
    const output = json === null || end.keepOutput ? undefined : end.output;
    if (on === 'staged') stage(state, key, nodeId, patch, output);
    else await write(on, state, key, nodeId, patch, output);
  }

  /** Stores a retried run's first rows (the steps it keeps from the run it repeats), under the lease. */
  async function seed(on: Db, runId: string, rows: NodeRow[]): Promise<void> {
    await on.transaction().execute(async (trx) => {
      await holdLease(trx, runId);
      for (let i = 0; i < rows.length; i += 200)
        await trx
          .insertInto('run_nodes')
          .values(rows.slice(i, i + 200))
          .execute();
    });
  }

  /** Hands the staged rows to `store`, which stores them as it will (put back if it fails). */
  const storing = (state: RunState, store: (rows: NodeRow[]) => Promise<void>) =>
    withStaged(state, store, []);

  return { holdLease, write, stage, flush, storing, finish, seed };
}

export type NodeStore = ReturnType<typeof nodeStore>;
