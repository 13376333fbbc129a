import type { FlowPlan, PlanNode } from './plan.ts';

/** What a retry reads of a step of the run it repeats (the engine's node rows have these fields). */
export interface StepRow {
  run_id: string;
  node_key: string;
  status: string;
  output_json: string | null;
  error: string | null;
  error_code: string | null;
  wait_until: number | null;
  finished_at: number | null;
}

/** The plan node a run node's key names (`map[3].step` is `step` in the body of `map`). */
export function planNodeAt(plan: FlowPlan, key: string): PlanNode | undefined {
  const ids = key.split(/\[\d+\]\./);
  let nodes = plan.nodes;
  let node: PlanNode | undefined;
  for (const [i, id] of ids.entries()) {
    node = nodes.find((n) => n.id === id);
    if (!node) return undefined;
    if (i < ids.length - 1) {
      if (node.kind !== 'map') return undefined;
      nodes = node.body.nodes;
    }
  }
  return node;
}

/** The keys of the maps a node's key sits in (`a[1].b[0].c` is in `a` and `a[1].b`). */
function enclosingMaps(key: string): string[] {
  const maps: string[] = [];
  for (const match of key.matchAll(/\[\d+\]\./g)) maps.push(key.slice(0, match.index));
  return maps;
}

const hasItems = (row: StepRow) => row.output_json !== null && row.output_json.startsWith('{"items":');

/**
 * What a retry starts from: the finished steps of the run it repeats, under its own id. Steps that
 * succeeded (or were simulated) keep their outputs, so their writes do not happen again; a map that
 * failed or was cut off goes on from its items, its finished items kept; every other step — the one
 * that failed and all after it — runs again. Skips are worked out afresh by the walk.
 */
export function retryRows<Row extends StepRow>(plan: FlowPlan, rows: readonly Row[], runId: string): Row[] {
  const kept = new Map<string, Row>();
  for (const row of rows) {
    const node = planNodeAt(plan, row.node_key);
    if (!node) continue;
    if (row.status === 'succeeded' || row.status === 'simulated') {
      kept.set(row.node_key, { ...row, run_id: runId });
    } else if (row.status === 'skipped' && row.output_json !== null) {
      // A delay a dry run passed over.
      kept.set(row.node_key, { ...row, run_id: runId });
    } else if (node.kind === 'map' && hasItems(row)) {
      kept.set(row.node_key, {
        ...row,
        run_id: runId,
        status: 'running',
        error: null,
        error_code: null,
        wait_until: null,
        finished_at: null,
      });
    }
  }
  // A step inside a map item stays only while every map around it goes on.
  return [...kept.values()].filter((row) => enclosingMaps(row.node_key).every((map) => kept.has(map)));
}

/**
 * The steps of `plan` that a retry of a run with these node rows would run again, in plan order:
 * each top-level step with no finished row kept, and every step in the body of a map that goes on
 * (for the items that did not finish).
 */
export function stepsRunAgain(plan: FlowPlan, rows: readonly StepRow[]): PlanNode[] {
  const done = new Set(
    retryRows(plan, rows, '')
      .filter((r) => r.status !== 'running')
      .map((r) => r.node_key),
  );
  const again: PlanNode[] = [];
  const visit = (nodes: PlanNode[], inBody: boolean) => {
    for (const node of nodes) {
      if (!inBody && done.has(node.id)) continue;
      again.push(node);
      if (node.kind === 'map') visit(node.body.nodes, true);
    }
  };
  visit(plan.nodes, false);
  return again;
}
