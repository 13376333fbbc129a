import type { Edge, FlowPlan, PlanNode } from './plan.ts';

/** What changed between two versions of a plan, by step: what people compare when a version lands. */
export interface PlanDiff {
  added: { node_id: string; kind: string }[];
  removed: { node_id: string; kind: string }[];
  /** Steps kept under the same id whose fields changed, naming the fields. */
  changed: { node_id: string; kind: string; fields: string[] }[];
  edges_added: string[];
  edges_removed: string[];
  /** Plan-level fields (name, description) and the version's ask and write approval. */
  fields: string[];
}

function* nodesOf(nodes: PlanNode[], prefix = ''): Generator<[string, PlanNode]> {
  for (const n of nodes) {
    yield [`${prefix}${n.id}`, n];
    if (n.kind === 'map') yield* nodesOf(n.body.nodes, `${prefix}${n.id}/`);
  }
}

function* edgesOf(nodes: PlanNode[], edges: Edge[] | undefined, prefix = ''): Generator<string> {
  for (const e of edges ?? []) {
    yield `${prefix}${e.from} → ${prefix}${e.to}${e.when === undefined ? '' : ` (when ${e.when})`}`;
  }
  for (const n of nodes)
    if (n.kind === 'map') yield* edgesOf(n.body.nodes, n.body.edges, `${prefix}${n.id}/`);
}

/** Keys sorted at every level, so two equal values print the same whatever their key order. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)))
      : v,
  );
}

function changedFields(before: PlanNode, after: PlanNode): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  keys.delete('id');
  const a = before as unknown as Record<string, unknown>;
  const b = after as unknown as Record<string, unknown>;
  // A map's body is compared step by step on its own, so only its other fields count here.
  if (before.kind === 'map' && after.kind === 'map') keys.delete('body');
  return [...keys].filter((k) => canonical(a[k]) !== canonical(b[k])).sort();
}

interface VersionShape {
  plan: FlowPlan;
  ask: string;
  write_approval: string;
}

/** A structural diff of two plan versions: steps added, removed and changed (by id), and edges. */
export function planDiff(before: VersionShape, after: VersionShape): PlanDiff {
  const old = new Map(nodesOf(before.plan.nodes));
  const now = new Map(nodesOf(after.plan.nodes));
  const diff: PlanDiff = {
    added: [],
    removed: [],
    changed: [],
    edges_added: [],
    edges_removed: [],
    fields: [],
  };
  for (const [id, n] of now) {
    const was = old.get(id);
    if (!was) diff.added.push({ node_id: id, kind: n.kind });
    else {
      const fields = was.kind === n.kind ? changedFields(was, n) : ['kind'];
      if (fields.length) diff.changed.push({ node_id: id, kind: n.kind, fields });
    }
  }
  for (const [id, n] of old) if (!now.has(id)) diff.removed.push({ node_id: id, kind: n.kind });
  const oldEdges = new Set(edgesOf(before.plan.nodes, before.plan.edges));
  const newEdges = new Set(edgesOf(after.plan.nodes, after.plan.edges));
  diff.edges_added = [...newEdges].filter((e) => !oldEdges.has(e));
  diff.edges_removed = [...oldEdges].filter((e) => !newEdges.has(e));
  if (before.plan.name !== after.plan.name) diff.fields.push('name');
  if (before.plan.description !== after.plan.description) diff.fields.push('description');
  if (before.ask !== after.ask) diff.fields.push('ask');
  if (before.write_approval !== after.write_approval) diff.fields.push('write_approval');
  return diff;
}
