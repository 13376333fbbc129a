import type { Report, ValidationContext } from '../validate.ts';
import type { GraphNode, Level, PlanGraph } from './structure.ts';

/**
 * The write rule, on the top-level graph: a capability of kind `write` has an approval node
 * upstream on every path from the roots (`write/needs-approval`), unless the draft says
 * `write_approval: "automatic"`, and then the plan has no approval node at all
 * (`write/approval-with-automatic`). Writes in map bodies and subflows count at their map or
 * subflow node, and an approval inside a map body does not guard it.
 */

/** What a node writes, counting what a map's body or a subflow's automation writes. */
function writesInside(gn: GraphNode, graph: PlanGraph, ctx: ValidationContext): string[] {
  const n = gn.parsed;
  if (!n) return [];
  if (n.kind === 'capability') {
    const cap = ctx.catalogue.capability(n.capability);
    return cap?.kind === 'write' ? [cap.key] : [];
  }
  if (n.kind === 'subflow')
    return ctx.subflows.get(n.automation_id)?.writes ? [`automation ${n.automation_id}`] : [];
  if (n.kind === 'map') {
    const body = graph.levels.find((l) => l.mapId === gn.id);
    return body ? body.nodes.flatMap((inner) => writesInside(inner, graph, ctx)) : [];
  }
  return [];
}

/** `write/approval-with-automatic`: no approval node when writes are approved automatically. */
export function writeApprovalWithAutomatic(graph: PlanGraph, report: Report): void {
  for (const gn of graph.nodes.values()) {
    if (gn.kind !== 'approval') continue;
    report(
      'write/approval-with-automatic',
      gn.path,
      `approval node "${gn.id}" is not allowed with write_approval "automatic"; remove it, or draft with write_approval "required"`,
      gn.id,
    );
  }
}

/** `write/needs-approval`: no path from a root reaches a write without passing an approval. */
export function writeNeedsApproval(graph: PlanGraph, ctx: ValidationContext, report: Report): void {
  const top = graph.levels[0] as Level;
  const hasIncoming = new Set(top.edges.map((e) => e.to));
  const reached = new Set<string>();
  const stack = top.nodes.filter((n) => !hasIncoming.has(n.id) && n.kind !== 'approval').map((n) => n.id);
  while (stack.length) {
    const id = stack.pop() as string;
    if (reached.has(id)) continue;
    reached.add(id);
    for (const e of top.edges) {
      if (e.from === id && top.byId.get(e.to)?.kind !== 'approval') stack.push(e.to);
    }
  }
  for (const gn of top.nodes) {
    const writes = writesInside(gn, graph, ctx);
    if (writes.length === 0 || !reached.has(gn.id)) continue;
    const what = gn.kind === 'capability' ? writes[0] : `${[...new Set(writes)].join(', ')} inside it`;
    report(
      'write/needs-approval',
      gn.path,
      `"${gn.id}" writes (${what}) but not every path to it passes an approval node; add an approval node before it, or draft with write_approval "automatic"`,
      gn.id,
    );
  }
}
