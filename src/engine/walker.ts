import type { Selectable } from 'kysely';
import type { Edge, FlowPlan, PlanNode } from '../flowplan/plan.ts';
import { topologicalOrder } from '../flowplan/graph.ts';
import type { RunNodeTable } from '../storage/schema.ts';
import { Scope } from '../flowplan/resolve.ts';

export { resolve, resolveInputs, Scope } from '../flowplan/resolve.ts';

/**
 * The plan walker: pure. Given a plan and the states of its nodes, it says what can happen now —
 * which steps start, which waiting steps need a look, which are skipped, whether the run failed or
 * is done, and when it next needs looking at. It reads nothing and writes nothing.
 */

export type NodeRow = Selectable<RunNodeTable>;

export const DONE_NODE = new Set(['succeeded', 'failed', 'skipped', 'simulated']);

/** A node to work on now. */
export type Task =
  | { type: 'skip'; key: string; node: PlanNode }
  | { type: 'start'; key: string; node: PlanNode; scope: Scope; row: NodeRow | undefined }
  | { type: 'check'; key: string; node: PlanNode; scope: Scope; row: NodeRow }
  | {
      type: 'map-finish';
      key: string;
      node: Extract<PlanNode, { kind: 'map' }>;
      results: unknown[];
      failed?: string;
    };

export interface Walk {
  tasks: Task[];
  /** The earliest time a waiting node needs looking at again. */
  wakeAt: number | null;
  failed: { nodeId: string; error: string } | undefined;
  done: boolean;
  /** Ready steps held back because the automation is paused. */
  held: number;
}

/** A graph's nodes by id, their order and each one's incoming edges, worked out once per plan. */
interface Shape {
  byId: Map<string, PlanNode>;
  order: string[];
  incomingOf: Map<string, Edge[]>;
}
const shapes = new WeakMap<PlanNode[], Shape>();
function shapeOf(nodes: PlanNode[], edges: Edge[]): Shape {
  let shape = shapes.get(nodes);
  if (!shape) {
    const incomingOf = new Map<string, Edge[]>();
    for (const e of edges) incomingOf.set(e.to, [...(incomingOf.get(e.to) ?? []), e]);
    shape = {
      byId: new Map(nodes.map((n) => [n.id, n])),
      order: topologicalOrder(
        nodes.map((n) => n.id),
        edges,
      ),
      incomingOf,
    };
    shapes.set(nodes, shape);
  }
  return shape;
}

/** A node row's output, parsed once per row object (a row read or written again is a new object). */
const parsedOutputs = new WeakMap<NodeRow, unknown>();
export function outputOf<T>(row: NodeRow): T | undefined {
  if (row.output_json === null) return undefined;
  if (!parsedOutputs.has(row)) parsedOutputs.set(row, JSON.parse(row.output_json));
  return parsedOutputs.get(row) as T;
}

/** Remembers an output already in hand for a row, so it is never parsed back. */
export function knownOutput(row: NodeRow, output: unknown): NodeRow {
  if (row.output_json !== null) parsedOutputs.set(row, output);
  return row;
}

export interface WalkInput {
  plan: FlowPlan;
  rows: ReadonlyMap<string, NodeRow>;
  trigger: unknown;
  /** Hold every step that would start (the automation is paused). */
  paused: boolean;
  now: number;
}

export function walk({ plan, rows, trigger, paused, now }: WalkInput): Walk {
  const result: Walk = { tasks: [], wakeAt: null, failed: undefined, done: true, held: 0 };
  const soonest = (at: number) => {
    result.wakeAt = result.wakeAt === null ? at : Math.min(result.wakeAt, at);
  };

  const live = (edge: Edge, prefix: string, byId: Map<string, PlanNode>): boolean => {
    const row = rows.get(prefix + edge.from);
    if (!row) return false;
    if (row.status === 'succeeded' || row.status === 'simulated') {
      if (byId.get(edge.from)?.kind === 'branch') {
        return (outputOf<{ value: boolean }>(row)?.value ?? false) === edge.when;
      }
      return true;
    }
    // A delay a dry run passed over is skipped but lets its successors run.
    return row.status === 'skipped' && row.output_json !== null;
  };

  const graph = (nodes: PlanNode[], edges: Edge[], prefix: string, scope: Scope): boolean => {
    const { byId, order, incomingOf } = shapeOf(nodes, edges);
    let complete = true;
    for (const id of order) {
      const node = byId.get(id) as PlanNode;
      const key = prefix + id;
      const row = rows.get(key);
      const status = row?.status ?? 'pending';
      if (status === 'failed') {
        result.failed ??= { nodeId: key, error: row?.error ?? 'failed' };
        continue;
      }
      if (DONE_NODE.has(status)) {
        if (row && (status !== 'skipped' || row.output_json)) scope.outputs.set(id, outputOf(row));
        continue;
      }
      complete = false;
      const incoming = incomingOf.get(id) ?? [];
      if (incoming.some((e) => !DONE_NODE.has(rows.get(prefix + e.from)?.status ?? 'pending'))) continue;
      if (incoming.length > 0 && !incoming.some((e) => live(e, prefix, byId))) {
        result.tasks.push({ type: 'skip', key, node });
        continue;
      }
      // A map's items are stored after its start: a map that holds none yet (its worker died in
      // between) starts again, rather than finishing with no items done.
      if (node.kind === 'map' && status === 'running' && row && outputOf(row) !== undefined) {
        mapItems(node, key, row, scope);
        continue;
      }
      if (status === 'waiting' && row) {
        if (row.wait_until !== null && row.wait_until > now) soonest(row.wait_until);
        result.tasks.push({ type: 'check', key, node, scope, row });
        continue;
      }
      if (row?.wait_until && row.wait_until > now) {
        soonest(row.wait_until);
        continue;
      }
      if (paused) {
        result.held += 1;
        continue;
      }
      result.tasks.push({ type: 'start', key, node, scope, row });
    }
    return complete;
  };

  const mapItems = (node: Extract<PlanNode, { kind: 'map' }>, key: string, row: NodeRow, scope: Scope) => {
    const items = outputOf<{ items: unknown[] }>(row)?.items ?? [];
    const limit = node.concurrency ?? 1;
    let activeItems = 0;
    let allDone = true;
    const results: unknown[] = [];
    let failed: string | undefined;
    for (const [index, item] of items.entries()) {
      const itemPrefix = `${key}[${index}].`;
      const started = node.body.nodes.some((n) => rows.has(itemPrefix + n.id));
      if (!started && activeItems >= limit) {
        allDone = false;
        continue;
      }
      const itemScope = new Scope({ item, index }, scope);
      const itemFailedBefore = result.failed;
      const itemDone = graph(node.body.nodes, node.body.edges ?? [], itemPrefix, itemScope);
      if (result.failed && result.failed !== itemFailedBefore) {
        failed ??= `item ${index}: ${result.failed.error}`;
        result.failed = itemFailedBefore;
      }
      if (!itemDone) {
        allDone = false;
        activeItems += 1;
      }
      results.push(itemScope.outputs.get(node.result) ?? null);
    }
    if (failed) result.tasks.push({ type: 'map-finish', key, node, results, failed });
    else if (allDone) result.tasks.push({ type: 'map-finish', key, node, results });
  };

  result.done = graph(plan.nodes, plan.edges ?? [], '', new Scope(trigger));
  return result;
}

/** Steps one item of a map runs (a nested map counts once with its own body). */
export function bodySize(nodes: PlanNode[]): number {
  return nodes.reduce((sum, n) => sum + 1 + (n.kind === 'map' ? bodySize(n.body.nodes) : 0), 0);
}
