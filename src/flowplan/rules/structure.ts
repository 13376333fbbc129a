import { z } from 'zod';
import { findCycle } from '../graph.ts';
import { describeIssues, isObject, pathText, type PathPart } from '../issues.ts';
import {
  edge as edgeSchema,
  mapNode,
  MAX_NODES,
  NODE_KINDS,
  nodeShapes,
  planFrame,
  type Edge,
  type NodeKind,
  type PlanNode,
} from '../plan.ts';
import type { Report } from '../validate.ts';

/**
 * The structure rules (`shape`, `plan/too-many-nodes`, `node/duplicate-id`, `edge/unknown-node`,
 * `edge/when`, `dag/cycle`, `map/result`), applied while the plan's graph is read: each node and
 * edge as it comes, each graph (the plan's top level, every map body) once its edges are known.
 */

/** A node as the graph rules see it; `parsed` is absent when its own shape is wrong. */
export interface GraphNode {
  id: string;
  index: number;
  path: PathPart[];
  parsed: PlanNode | undefined;
  kind: unknown;
  /** The graph this node belongs to (0 is the plan's top level). */
  level: Level;
}

export interface Level {
  nodes: GraphNode[];
  edges: Edge[];
  byId: Map<string, GraphNode>;
  /** Node ids each node can reach backwards (its upstream nodes), within this level. */
  upstream: Map<string, Set<string>>;
  /** For a map body: the nodes upstream of the map node itself, at every enclosing level. */
  outer: Set<string>;
  mapId: string | undefined;
}

/** The plan's graphs: every node by id, and the levels (the top level first, then map bodies). */
export interface PlanGraph {
  nodes: Map<string, GraphNode>;
  levels: Level[];
}

const mapFrame = z.strictObject({
  ...mapNode.shape,
  body: z.strictObject({ nodes: z.array(z.unknown()), edges: z.array(z.unknown()).optional() }),
});

function countNodes(nodes: unknown): number {
  if (!Array.isArray(nodes)) return 0;
  let total = 0;
  for (const n of nodes) {
    total += 1;
    if (isObject(n) && n.kind === 'map' && isObject(n.body)) total += countNodes(n.body.nodes);
  }
  return total;
}

/** `shape`: the plan's own fields (planVersion, name, description, nodes, edges). */
export function planShape(raw: Record<string, unknown>, report: Report): void {
  const frame = planFrame.safeParse(raw);
  if (!frame.success) {
    for (const p of describeIssues(frame.error.issues, [])) report('shape', p.path, p.message);
  }
}

/** `plan/too-many-nodes`: at most MAX_NODES, map bodies included. */
export function planTooManyNodes(raw: Record<string, unknown>, report: Report): void {
  const total = countNodes(raw.nodes);
  if (total > MAX_NODES) {
    report(
      'plan/too-many-nodes',
      ['nodes'],
      `the plan has ${total} nodes (map bodies included) and at most ${MAX_NODES} are allowed; split it into subflows`,
    );
  }
}

/** `shape`: one node against its own kind's schema (a map's body is read as a graph of its own). */
export function nodeShape(rawNode: unknown, path: PathPart[], report: Report): PlanNode | undefined {
  const id = isObject(rawNode) && typeof rawNode.id === 'string' ? rawNode.id : undefined;
  if (isObject(rawNode) && rawNode.kind === 'map') {
    const result = mapFrame.safeParse(rawNode);
    if (result.success) return { ...result.data, body: { nodes: [], edges: [] } } as PlanNode;
    for (const p of describeIssues(result.error.issues, path)) report('shape', p.path, p.message, id);
  } else if (!isObject(rawNode)) {
    report('shape', path, `${pathText(path)} must be a node object with id and kind`, id);
  } else if (!(NODE_KINDS as readonly unknown[]).includes(rawNode.kind)) {
    report(
      'shape',
      [...path, 'kind'],
      `${pathText([...path, 'kind'])} must be ${NODE_KINDS.slice(0, -1).join(', ')} or ${NODE_KINDS.at(-1)}`,
      id,
    );
  } else {
    // The union member for this kind, so its errors are the ones reported.
    const result = nodeShapes[rawNode.kind as NodeKind].safeParse(rawNode);
    if (result.success) return result.data as PlanNode;
    for (const p of describeIssues(result.error.issues, path)) report('shape', p.path, p.message, id);
  }
  return undefined;
}

/** `node/duplicate-id`: every node of the plan, map bodies included, has its own id. */
export function nodeDuplicateId(gn: GraphNode, seen: GraphNode | undefined, report: Report): boolean {
  if (!seen) return false;
  report(
    'node/duplicate-id',
    [...gn.path, 'id'],
    `node id "${gn.id}" is already used at ${pathText(seen.path)}; give every node its own id`,
    gn.id,
  );
  return true;
}

/** `edge/unknown-node`: both ends of an edge are nodes of the graph the edge is in. */
export function edgeUnknownNode(
  e: Edge,
  path: PathPart[],
  base: PathPart[],
  level: Level,
  elsewhere: (id: string) => PathPart[] | undefined,
  report: Report,
): boolean {
  let usable = true;
  for (const end of ['from', 'to'] as const) {
    if (level.byId.has(e[end])) continue;
    usable = false;
    const other = elsewhere(e[end]);
    report(
      'edge/unknown-node',
      [...path, end],
      other
        ? `edge ${end} "${e[end]}" is a node of another graph (${pathText(other)}); edges join nodes of the same list`
        : `edge ${end} "${e[end]}" is not a node id of ${base.length ? `${pathText(base)}.nodes` : 'the plan'}; use one of the node ids`,
    );
  }
  return usable;
}

/** `edge/when`: edges leaving a branch say when they are taken; no other edge does. */
export function edgeWhen(e: Edge, path: PathPart[], level: Level, report: Report): void {
  const fromBranch = level.byId.get(e.from)?.kind === 'branch';
  if (fromBranch && e.when === undefined) {
    report(
      'edge/when',
      path,
      `edge from branch "${e.from}" to "${e.to}" needs when: true or when: false`,
      e.from,
    );
  } else if (!fromBranch && e.when !== undefined) {
    report(
      'edge/when',
      [...path, 'when'],
      `edge from "${e.from}" has when, but only edges leaving a branch node may; remove it`,
      e.from,
    );
  }
}

/** `dag/cycle`: whatever Kahn's algorithm cannot order lies on or behind a cycle. */
export function dagCycle(level: Level, base: PathPart[], report: Report): void {
  const ids = level.nodes.map((n) => n.id);
  const indegree = new Map(ids.map((id) => [id, 0]));
  for (const e of level.edges) indegree.set(e.to, (indegree.get(e.to) ?? 0) + 1);
  const ordered = new Set<string>();
  const queue = ids.filter((id) => indegree.get(id) === 0);
  while (queue.length) {
    const id = queue.shift() as string;
    ordered.add(id);
    for (const e of level.edges) {
      if (e.from !== id) continue;
      const left = (indegree.get(e.to) ?? 0) - 1;
      indegree.set(e.to, left);
      if (left === 0) queue.push(e.to);
    }
  }
  if (ordered.size < ids.length) {
    const cycle = findCycle(new Set(ids.filter((id) => !ordered.has(id))), level.edges);
    report(
      'dag/cycle',
      [...base, 'edges'],
      `the edges form a cycle ${cycle.join(' → ')}; remove one of these edges (repeat work with a map node instead)`,
      cycle[0],
    );
  }
}

/** `map/result`: a map collects the output of one of its body's nodes. */
export function mapResult(gn: GraphNode, body: Level, report: Report): void {
  if (gn.parsed?.kind !== 'map') return;
  const result = gn.parsed.result;
  if (body.byId.has(result)) return;
  report(
    'map/result',
    [...gn.path, 'result'],
    `result "${result}" is not a node of this map's body; name the body node whose output to collect`,
    gn.id,
  );
}

/** Each node's upstream nodes within its level (what it may refer to). */
function findUpstream(level: Level): void {
  for (const { id } of level.nodes) {
    const up = new Set<string>();
    const stack = [id];
    while (stack.length) {
      const at = stack.pop() as string;
      for (const e of level.edges) {
        if (e.to === at && !up.has(e.from)) {
          up.add(e.from);
          stack.push(e.from);
        }
      }
    }
    up.delete(id);
    level.upstream.set(id, up);
  }
}

/** Reads the plan's graphs, applying the structure rules as it goes. */
export function readGraph(raw: Record<string, unknown>, report: Report): PlanGraph {
  const graph: PlanGraph = { nodes: new Map(), levels: [] };
  // Where every id sits (map bodies included), so an edge into another graph is named as such.
  const rawPaths = new Map<string, PathPart[]>();
  const collect = (nodes: unknown, base: PathPart[]) => {
    if (!Array.isArray(nodes)) return;
    nodes.forEach((n, i) => {
      if (!isObject(n)) return;
      if (typeof n.id === 'string' && !rawPaths.has(n.id)) rawPaths.set(n.id, [...base, 'nodes', i]);
      if (n.kind === 'map' && isObject(n.body)) collect(n.body.nodes, [...base, 'nodes', i, 'body']);
    });
  };
  collect(raw.nodes, []);
  const elsewhere = (id: string) => graph.nodes.get(id)?.path ?? rawPaths.get(id);

  const readLevel = (
    rawNodes: unknown,
    rawEdges: unknown,
    base: PathPart[],
    outer: Set<string>,
    mapId: string | undefined,
  ): Level => {
    const level: Level = { nodes: [], edges: [], byId: new Map(), upstream: new Map(), outer, mapId };
    graph.levels.push(level);
    const maps: [GraphNode, Record<string, unknown>][] = [];
    (Array.isArray(rawNodes) ? rawNodes : []).forEach((rawNode, index) => {
      const path = [...base, 'nodes', index];
      const parsed = nodeShape(rawNode, path, report);
      if (!isObject(rawNode) || typeof rawNode.id !== 'string') return;
      const gn: GraphNode = { id: rawNode.id, index, path, parsed, kind: rawNode.kind, level };
      const duplicate = nodeDuplicateId(gn, graph.nodes.get(gn.id), report);
      // A map's body is read whatever its own id, so every mistake inside it is reported too.
      if (rawNode.kind === 'map') maps.push([gn, rawNode]);
      if (duplicate) return;
      graph.nodes.set(gn.id, gn);
      level.nodes.push(gn);
      level.byId.set(gn.id, gn);
    });

    (Array.isArray(rawEdges) ? rawEdges : []).forEach((rawEdge, index) => {
      const path = [...base, 'edges', index];
      const result = edgeSchema.safeParse(rawEdge);
      if (!result.success) {
        for (const p of describeIssues(result.error.issues, path)) report('shape', p.path, p.message);
        return;
      }
      if (!edgeUnknownNode(result.data, path, base, level, elsewhere, report)) return;
      edgeWhen(result.data, path, level, report);
      level.edges.push(result.data);
    });

    dagCycle(level, base, report);
    findUpstream(level);

    for (const [gn, rawNode] of maps) {
      const body = isObject(rawNode.body) ? rawNode.body : {};
      const inner = new Set([...outer, ...(level.upstream.get(gn.id) ?? [])]);
      mapResult(gn, readLevel(body.nodes, body.edges, [...gn.path, 'body'], inner, gn.id), report);
    }
    return level;
  };

  readLevel(raw.nodes, raw.edges, [], new Set(), undefined);
  return graph;
}
