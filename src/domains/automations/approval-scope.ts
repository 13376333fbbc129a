import type { Edge, FlowPlan, PlanNode } from '../../flowplan/plan.ts';
import { resolveInputs, Scope } from '../../flowplan/resolve.ts';
import { transform } from '../../flowplan/values.ts';

/**
 * The scope an approval card resolves writes in: the run's finished steps' outputs, as the walker
 * puts them in scope, plus the outputs of the pure steps between the approval and the write
 * (transforms: no I/O), worked out now with the engine's own `transform`.
 */

const DONE = new Set(['succeeded', 'simulated', 'skipped']);

interface NodeState {
  status: string;
  output_json: string | null;
}

/** The outputs of a graph's finished steps, as the walker puts them in scope. */
function fill(scope: Scope, nodes: PlanNode[], rows: Map<string, NodeState>, prefix: string): void {
  for (const n of nodes) {
    const row = rows.get(prefix + n.id);
    if (!row || !DONE.has(row.status)) continue;
    if (row.status === 'skipped' && !row.output_json) continue;
    scope.outputs.set(n.id, row.output_json === null ? undefined : (JSON.parse(row.output_json) as unknown));
  }
}

/** The graph an approval's step sits in (the plan, or one item of a map) and the scope it sees. */
export function graphOf(
  plan: FlowPlan,
  rows: Map<string, NodeState>,
  trigger: unknown,
  key: string,
): { nodes: PlanNode[]; edges: Edge[]; scope: Scope; id: string } | undefined {
  const parts = key.split('.');
  const id = parts.pop() as string;
  let nodes = plan.nodes;
  let edges = plan.edges ?? [];
  let prefix = '';
  let scope = new Scope(trigger);
  fill(scope, nodes, rows, prefix);
  for (const part of parts) {
    const match = /^(.+)\[(\d+)\]$/.exec(part);
    if (!match) return undefined;
    const map = nodes.find((n) => n.id === match[1]);
    if (map?.kind !== 'map') return undefined;
    const index = Number(match[2]);
    const row = rows.get(prefix + map.id);
    const items = row?.output_json ? (JSON.parse(row.output_json) as { items?: unknown[] }).items : undefined;
    prefix = `${prefix}${part}.`;
    scope = new Scope({ item: items?.[index], index }, scope);
    nodes = map.body.nodes;
    edges = map.body.edges ?? [];
    fill(scope, nodes, rows, prefix);
  }
  return { nodes, edges, scope, id };
}

/** The steps after `from` in its graph, in plan order. */
export function stepsAfter(nodes: PlanNode[], edges: Edge[], from: string): PlanNode[] {
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift() as string;
    for (const e of edges) {
      if (e.from === at && !seen.has(e.to)) {
        seen.add(e.to);
        queue.push(e.to);
      }
    }
  }
  return nodes.filter((n) => seen.has(n.id));
}

/** The most text a pure step may build for a card (the engine's own cap is checked when it runs). */
const PURE_TEXT_MAX = 1_000_000;

/** Every binding of a transform refers to a step already in scope. */
const ready = (node: PlanNode, scope: Scope) =>
  Object.values(node.kind === 'transform' ? (node.input ?? {}) : {}).every(
    (b) => b.kind !== 'ref' || scope.has(b.node),
  );

/**
 * Adds to `scope` the outputs of the transforms in `later` whose inputs are known (in dependency
 * order, one transform feeding the next), computed as the transform step computes them. Returns
 * those that could not be worked out, with why: a transform that fails now is left for the run.
 */
export function computePureSteps(later: PlanNode[], scope: Scope, now = new Date()): Map<string, string> {
  const failed = new Map<string, string>();
  for (let changed = true; changed;) {
    changed = false;
    for (const node of later) {
      if (node.kind !== 'transform' || scope.has(node.id) || failed.has(node.id) || !ready(node, scope))
        continue;
      try {
        const output = transform(node, resolveInputs(node.input, scope), now, (length, what) => {
          if (length > PURE_TEXT_MAX) throw new Error(`${what} would be ${length} characters long`);
        });
        scope.outputs.set(node.id, output);
        changed = true;
      } catch (error) {
        failed.set(node.id, error instanceof Error ? error.message : String(error));
      }
    }
  }
  return failed;
}
