import { z } from 'zod';
import type { Catalogue } from '../capabilities/catalogue.ts';
import { describeIssues, isObject, pathText, withArticle, type PathPart } from './issues.ts';
import {
  edge as edgeSchema,
  mapNode,
  MAX_NODES,
  NODE_KINDS,
  nodeShapes,
  type NodeKind,
  plan as planSchema,
  planFrame,
  TRANSFORM_OPS,
  type Binding,
  type Edge,
  type FlowPlan,
  type PlanNode,
  type WriteApproval,
} from './plan.ts';
import { subflowProblems, type SubflowGraph, type SubflowTarget } from './subflows.ts';

export type { SubflowTarget } from './subflows.ts';

export type Rule =
  | 'shape'
  | 'plan/too-many-nodes'
  | 'node/duplicate-id'
  | 'edge/unknown-node'
  | 'edge/when'
  | 'dag/cycle'
  | 'capability/unknown'
  | 'capability/not-connected'
  | 'capability/input'
  | 'binding/unknown-node'
  | 'binding/not-upstream'
  | 'write/needs-approval'
  | 'write/approval-with-automatic'
  | 'subflow/unknown'
  | 'subflow/forbidden'
  | 'subflow/cycle'
  | 'approval/unknown-approver'
  | 'map/result'
  | 'scope/personal-connector';

export interface PlanError {
  rule: Rule;
  path: PathPart[];
  node_id?: string;
  message: string;
}

export interface ValidationContext {
  catalogue: Catalogue;
  writeApproval: WriteApproval;
  /** Automations a subflow node may name, by id: those the drafter can open that have a live version. */
  subflows: ReadonlyMap<string, SubflowTarget>;
  /** The automation this plan is a version of, which may not run itself, directly or through others. */
  automationId?: string | undefined;
  /** The subflow calls beyond the plan's own, through live versions, to find a cycle back to automationId. */
  subflowGraph?: SubflowGraph | undefined;
  /**
   * The lower-case e-mail addresses, among those the plan names as approvers, of the workspace's
   * people; when given, every named approver must be one of them.
   */
  people?: ReadonlySet<string> | undefined;
}

export type ValidationResult = { ok: true; plan: FlowPlan } | { ok: false; errors: PlanError[] };

/** A node as the graph checks see it; `parsed` is absent when its own shape is wrong. */
interface GraphNode {
  id: string;
  index: number;
  path: PathPart[];
  parsed: PlanNode | undefined;
  kind: unknown;
  /** The graph this node belongs to (0 is the plan's top level). */
  level: Level;
}

interface Level {
  nodes: GraphNode[];
  edges: Edge[];
  byId: Map<string, GraphNode>;
  /** Node ids each node can reach backwards (its upstream nodes), within this level. */
  upstream: Map<string, Set<string>>;
  /** For a map body: the nodes upstream of the map node itself, at every enclosing level. */
  outer: Set<string>;
  mapId: string | undefined;
}

const mapFrame = z.strictObject({
  ...mapNode.shape,
  body: z.strictObject({ nodes: z.array(z.unknown()), edges: z.array(z.unknown()).optional() }),
});

/** Node ids of every subflow node, so the caller can look their targets up before validating. */
export function subflowTargets(raw: unknown): string[] {
  const found: string[] = [];
  const walk = (nodes: unknown) => {
    if (!Array.isArray(nodes)) return;
    for (const n of nodes) {
      if (!isObject(n)) continue;
      if (n.kind === 'subflow' && typeof n.automation_id === 'string') found.push(n.automation_id);
      if (n.kind === 'map' && isObject(n.body)) walk(n.body.nodes);
    }
  };
  if (isObject(raw)) walk(raw.nodes);
  return [...new Set(found)];
}

/** The e-mail addresses approval nodes name as approvers, so the caller can look them up before validating. */
export function approverEmails(raw: unknown): string[] {
  const found: string[] = [];
  const walk = (nodes: unknown) => {
    if (!Array.isArray(nodes)) return;
    for (const n of nodes) {
      if (!isObject(n)) continue;
      if (n.kind === 'approval' && Array.isArray(n.approvers))
        for (const a of n.approvers) if (typeof a === 'string') found.push(a.toLowerCase());
      if (n.kind === 'map' && isObject(n.body)) walk(n.body.nodes);
    }
  };
  if (isObject(raw)) walk(raw.nodes);
  return [...new Set(found)];
}

function countNodes(nodes: unknown): number {
  if (!Array.isArray(nodes)) return 0;
  let total = 0;
  for (const n of nodes) {
    total += 1;
    if (isObject(n) && n.kind === 'map' && isObject(n.body)) total += countNodes(n.body.nodes);
  }
  return total;
}

/** Every binding a node reads, with its path inside the node. */
export function bindingsOf(n: PlanNode): [PathPart[], Binding][] {
  const out: [PathPart[], Binding][] = [];
  const named = (field: string, input: Record<string, Binding> | undefined) => {
    for (const [k, b] of Object.entries(input ?? {})) out.push([[field, k], b]);
  };
  switch (n.kind) {
    case 'capability':
    case 'subflow':
    case 'transform':
      named('input', n.input);
      break;
    case 'agent':
      out.push([['instructions'], n.instructions]);
      named('input', n.input);
      break;
    case 'branch':
      out.push([['condition', 'left'], n.condition.left]);
      if ('right' in n.condition) out.push([['condition', 'right'], n.condition.right]);
      break;
    case 'map':
      out.push([['items'], n.items]);
      break;
    case 'approval':
    case 'notify':
      out.push([['message'], n.message]);
      break;
    case 'delay':
      if ('until' in n) out.push([['until'], n.until]);
      break;
  }
  return out;
}

/** Ids of the nodes in topological order (ties in plan order); nodes on a cycle come last. */
export function topologicalOrder(ids: string[], edges: readonly Edge[]): string[] {
  const incoming = new Map(ids.map((id) => [id, 0]));
  const next = new Map<string, string[]>(ids.map((id) => [id, []]));
  for (const e of edges) {
    if (!incoming.has(e.from) || !incoming.has(e.to)) continue;
    incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
    next.get(e.from)?.push(e.to);
  }
  const position = new Map(ids.map((id, i) => [id, i]));
  const ready = ids.filter((id) => incoming.get(id) === 0);
  const order: string[] = [];
  while (ready.length > 0) {
    ready.sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0));
    const id = ready.shift() as string;
    order.push(id);
    for (const to of next.get(id) ?? []) {
      const left = (incoming.get(to) ?? 0) - 1;
      incoming.set(to, left);
      if (left === 0) ready.push(to);
    }
  }
  for (const id of ids) if (!order.includes(id)) order.push(id);
  return order;
}

function findCycle(ids: Set<string>, edges: readonly Edge[]): string[] {
  const next = new Map<string, string[]>();
  for (const e of edges)
    if (ids.has(e.from) && ids.has(e.to)) next.set(e.from, [...(next.get(e.from) ?? []), e.to]);
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 'open');
    stack.push(id);
    for (const to of next.get(id) ?? []) {
      if (state.get(to) === 'open') return [...stack.slice(stack.indexOf(to)), to];
      if (!state.has(to)) {
        const found = visit(to);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 'done');
    return undefined;
  };
  for (const id of ids) {
    if (state.has(id)) continue;
    const found = visit(id);
    if (found) return found;
  }
  return [...ids];
}

/** A JSON Schema's `type` at a path of an output schema, when it can be known. */
function typeAt(schema: Record<string, unknown> | undefined, path: string): string | undefined {
  let current: Record<string, unknown> | undefined = schema;
  for (const part of path === '' ? [] : path.split('.')) {
    if (!current) return undefined;
    if (current.type === 'array' && /^\d+$/.test(part) && isObject(current.items)) {
      current = current.items;
      continue;
    }
    const props = current.properties;
    current = isObject(props) && isObject(props[part]) ? props[part] : undefined;
  }
  return current && typeof current.type === 'string' ? current.type : undefined;
}

function compatible(expected: string | undefined, actual: string | undefined): boolean {
  if (!expected || !actual) return true;
  if (expected === actual) return true;
  // Numbers meet integers either way; a fractional value is refused when the step runs.
  if ((expected === 'number' || expected === 'integer') && (actual === 'number' || actual === 'integer'))
    return true;
  // Anything becomes text when a string is wanted only through a template; refs are passed as is.
  return false;
}

const outputSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();
function jsonOf(schema: z.ZodType): Record<string, unknown> {
  let json = outputSchemas.get(schema);
  if (!json) {
    json = z.toJSONSchema(schema, { io: 'output', unrepresentable: 'any' }) as Record<string, unknown>;
    outputSchemas.set(schema, json);
  }
  return json;
}

const FIXED_OUTPUTS: Partial<Record<string, Record<string, unknown>>> = {
  branch: { type: 'object', properties: { value: { type: 'boolean' } } },
  map: { type: 'object', properties: { results: { type: 'array' } } },
  approval: {
    type: 'object',
    properties: {
      approved: { type: 'boolean' },
      by: { type: 'string' },
      at: { type: 'string' },
      note: { type: 'string' },
    },
  },
  notify: { type: 'object', properties: { message_id: { type: 'string' } } },
  delay: { type: 'object', properties: { resumed_at: { type: 'string' } } },
};

/** What a node outputs, as JSON Schema, where that is known before it runs. */
export function outputSchemaOf(n: PlanNode, catalogue: Catalogue): Record<string, unknown> | undefined {
  switch (n.kind) {
    case 'capability': {
      const cap = catalogue.capability(n.capability);
      return cap ? jsonOf(cap.output) : undefined;
    }
    case 'transform':
      return jsonOf(TRANSFORM_OPS[n.op].output);
    case 'agent':
      return n.output_schema ?? { type: 'object', properties: { text: { type: 'string' } } };
    case 'subflow':
      return undefined;
    default:
      return FIXED_OUTPUTS[n.kind];
  }
}

/** Checks a raw plan against the FlowPlan schema and every graph rule; all errors at once. */
export function validatePlan(raw: unknown, ctx: ValidationContext): ValidationResult {
  const errors: PlanError[] = [];
  const add = (rule: Rule, path: PathPart[], message: string, nodeId?: string) =>
    errors.push({ rule, path, ...(nodeId ? { node_id: nodeId } : {}), message });

  if (!isObject(raw)) {
    add(
      'shape',
      [],
      'plan_json must be a FlowPlan object with planVersion, name, description, nodes and edges',
    );
    return { ok: false, errors };
  }
  const frame = planFrame.safeParse(raw);
  if (!frame.success) {
    for (const p of describeIssues(frame.error.issues, [])) add('shape', p.path, p.message);
  }
  const total = countNodes(raw.nodes);
  if (total > MAX_NODES) {
    add(
      'plan/too-many-nodes',
      ['nodes'],
      `the plan has ${total} nodes (map bodies included) and at most ${MAX_NODES} are allowed; split it into subflows`,
    );
  }

  const allNodes = new Map<string, GraphNode>();
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
  const levels: Level[] = [];

  const buildLevel = (
    rawNodes: unknown,
    rawEdges: unknown,
    base: PathPart[],
    outer: Set<string>,
    mapId: string | undefined,
  ): Level => {
    const level: Level = { nodes: [], edges: [], byId: new Map(), upstream: new Map(), outer, mapId };
    levels.push(level);
    const nodeList = Array.isArray(rawNodes) ? rawNodes : [];
    const pending: [GraphNode, Record<string, unknown>][] = [];
    nodeList.forEach((rawNode, index) => {
      const path = [...base, 'nodes', index];
      const id = isObject(rawNode) && typeof rawNode.id === 'string' ? rawNode.id : undefined;
      let parsed: PlanNode | undefined;
      if (isObject(rawNode) && rawNode.kind === 'map') {
        const result = mapFrame.safeParse(rawNode);
        if (result.success) parsed = { ...result.data, body: { nodes: [], edges: [] } } as PlanNode;
        else for (const p of describeIssues(result.error.issues, path)) add('shape', p.path, p.message, id);
      } else if (!isObject(rawNode)) {
        add('shape', path, `${pathText(path)} must be a node object with id and kind`, id);
      } else if (!(NODE_KINDS as readonly unknown[]).includes(rawNode.kind)) {
        add(
          'shape',
          [...path, 'kind'],
          `${pathText([...path, 'kind'])} must be ${NODE_KINDS.slice(0, -1).join(', ')} or ${NODE_KINDS.at(-1)}`,
          id,
        );
      } else {
        // The union member for this kind, so its errors are the ones reported.
        const result = nodeShapes[rawNode.kind as NodeKind].safeParse(rawNode);
        if (result.success) parsed = result.data as PlanNode;
        else for (const p of describeIssues(result.error.issues, path)) add('shape', p.path, p.message, id);
      }
      if (id === undefined) return;
      const gn: GraphNode = {
        id,
        index,
        path,
        parsed,
        kind: isObject(rawNode) ? rawNode.kind : undefined,
        level,
      };
      const seen = allNodes.get(id);
      if (seen) {
        add(
          'node/duplicate-id',
          [...path, 'id'],
          `node id "${id}" is already used at ${pathText(seen.path)}; give every node its own id`,
          id,
        );
        return;
      }
      allNodes.set(id, gn);
      level.nodes.push(gn);
      level.byId.set(id, gn);
      if (isObject(rawNode) && rawNode.kind === 'map') pending.push([gn, rawNode]);
    });

    const edgeList = Array.isArray(rawEdges) ? rawEdges : [];
    edgeList.forEach((rawEdge, index) => {
      const path = [...base, 'edges', index];
      const result = edgeSchema.safeParse(rawEdge);
      if (!result.success) {
        for (const p of describeIssues(result.error.issues, path)) add('shape', p.path, p.message);
        return;
      }
      const e = result.data;
      let usable = true;
      for (const end of ['from', 'to'] as const) {
        if (level.byId.has(e[end])) continue;
        usable = false;
        const elsewhere =
          allNodes.get(e[end]) ??
          (rawPaths.has(e[end]) ? { path: rawPaths.get(e[end]) as PathPart[] } : undefined);
        add(
          'edge/unknown-node',
          [...path, end],
          elsewhere
            ? `edge ${end} "${e[end]}" is a node of another graph (${pathText(elsewhere.path)}); edges join nodes of the same list`
            : `edge ${end} "${e[end]}" is not a node id of ${base.length ? `${pathText(base)}.nodes` : 'the plan'}; use one of the node ids`,
        );
      }
      if (!usable) return;
      const fromBranch = level.byId.get(e.from)?.kind === 'branch';
      if (fromBranch && e.when === undefined) {
        add(
          'edge/when',
          path,
          `edge from branch "${e.from}" to "${e.to}" needs when: true or when: false`,
          e.from,
        );
      } else if (!fromBranch && e.when !== undefined) {
        add(
          'edge/when',
          [...path, 'when'],
          `edge from "${e.from}" has when, but only edges leaving a branch node may; remove it`,
          e.from,
        );
      }
      level.edges.push(e);
    });

    // Cycles: whatever Kahn's algorithm cannot order lies on or behind a cycle.
    const ids = level.nodes.map((n) => n.id);
    const incoming = new Map(ids.map((id) => [id, 0]));
    for (const e of level.edges) incoming.set(e.to, (incoming.get(e.to) ?? 0) + 1);
    const ordered = new Set<string>();
    const indegree = new Map(incoming);
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
      add(
        'dag/cycle',
        [...base, 'edges'],
        `the edges form a cycle ${cycle.join(' → ')}; remove one of these edges (repeat work with a map node instead)`,
        cycle[0],
      );
    }

    for (const id of ids) {
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

    for (const [gn, rawNode] of pending) {
      const body = isObject(rawNode.body) ? rawNode.body : {};
      const inner = new Set([...outer, ...(level.upstream.get(gn.id) ?? [])]);
      const child = buildLevel(body.nodes, body.edges, [...gn.path, 'body'], inner, gn.id);
      if (gn.parsed?.kind === 'map') {
        const result = gn.parsed.result;
        if (!child.byId.has(result)) {
          add(
            'map/result',
            [...gn.path, 'result'],
            `result "${result}" is not a node of this map's body; name the body node whose output to collect`,
            gn.id,
          );
        }
      }
    }
    return level;
  };

  buildLevel(raw.nodes, raw.edges, [], new Set(), undefined);

  const { catalogue } = ctx;
  const checkCapability = (gn: GraphNode, key: string, path: PathPart[]) => {
    const ns = catalogue.namespaceOf(key);
    const cap = catalogue.capability(key);
    if (!ns || !cap) {
      const known = ns ? ns.plugin.capabilities.map((c) => c.key).join(', ') : undefined;
      add(
        'capability/unknown',
        path,
        known
          ? `${key} is not a capability of ${ns?.plugin.namespace}; use one of ${known}`
          : `${key} is not a known capability; describe_capabilities lists the namespaces and their capabilities`,
        gn.id,
      );
      return undefined;
    }
    if (!ns.connected) {
      add(
        'capability/not-connected',
        path,
        `${key} needs the ${ns.plugin.namespace} connector, which is not connected for you in this workspace; connect it or use another capability`,
        gn.id,
      );
      return undefined;
    }
    return cap;
  };

  for (const gn of allNodes.values()) {
    const n = gn.parsed;
    if (!n) continue;
    const level = gn.level;

    // Bindings: every ref names a node that has finished before this one starts.
    const upstream = level.upstream.get(gn.id) ?? new Set();
    for (const [rel, b] of bindingsOf(n)) {
      if (b.kind !== 'ref') continue;
      const path = [...gn.path, ...rel, 'node'];
      const target = allNodes.get(b.node);
      if (!target) {
        add('binding/unknown-node', path, `ref names "${b.node}", which is not a node of this plan`, gn.id);
        continue;
      }
      if (upstream.has(b.node) || level.outer.has(b.node)) continue;
      const insideMap = target.level.mapId && target.level !== level ? target.level.mapId : undefined;
      add(
        'binding/not-upstream',
        path,
        insideMap
          ? `ref names "${b.node}", a node inside map "${insideMap}"'s body; refer to "${insideMap}" (its results) from after the map instead`
          : `ref names "${b.node}", which does not run before "${gn.id}"; add an edge path from "${b.node}" to "${gn.id}" or refer to an upstream node`,
        gn.id,
      );
    }

    if (n.kind === 'capability') {
      const cap = checkCapability(gn, n.capability, [...gn.path, 'capability']);
      if (cap) checkInput(gn, n.input ?? {}, cap.input);
    } else if (n.kind === 'agent') {
      (n.tools ?? []).forEach((key, i) => {
        const cap = checkCapability(gn, key, [...gn.path, 'tools', i]);
        if (cap && cap.kind !== 'read') {
          add(
            'capability/input',
            [...gn.path, 'tools', i],
            `${key} writes; an agent node's tools may only be read capabilities (add a capability node after an approval to write)`,
            gn.id,
          );
        }
      });
    } else if (n.kind === 'subflow') {
      checkSubflow(gn, n.automation_id);
    } else if (n.kind === 'approval' && Array.isArray(n.approvers) && ctx.people) {
      const people = ctx.people;
      n.approvers.forEach((email, i) => {
        if (people.has(email.toLowerCase())) return;
        add(
          'approval/unknown-approver',
          [...gn.path, 'approvers', i],
          `approver ${email} is not a person of this workspace, so nobody could ever decide the approval; name people of the workspace by their e-mail address, or use "creator" or "admins"`,
          gn.id,
        );
      });
    }
  }

  function checkSubflow(gn: GraphNode, id: string) {
    for (const problem of subflowProblems(id, ctx))
      add(problem.rule, [...gn.path, 'automation_id'], problem.message, gn.id);
  }

  function checkInput(gn: GraphNode, input: Record<string, Binding>, schema: z.ZodObject) {
    const shape = schema.shape as Record<string, z.ZodType>;
    const json = jsonOf(schema) as { properties?: Record<string, Record<string, unknown>> };
    const key = (gn.parsed as { capability: string }).capability;
    for (const [field, b] of Object.entries(input)) {
      const path = [...gn.path, 'input', field];
      const fieldSchema = shape[field];
      if (!fieldSchema) {
        add(
          'capability/input',
          path,
          `${key} has no input ${field}; its inputs are ${Object.keys(shape).join(', ')}`,
          gn.id,
        );
        continue;
      }
      if (b.kind === 'literal') {
        const result = fieldSchema.safeParse(b.value);
        if (!result.success) {
          for (const p of describeIssues(result.error.issues, [...path, 'value'])) {
            add('capability/input', p.path, `${key}: ${p.message}`, gn.id);
          }
        }
      } else if (b.kind === 'ref') {
        const source = allNodes.get(b.node)?.parsed;
        if (!source) continue;
        const actual = typeAt(outputSchemaOf(source, catalogue), b.path);
        const expected = json.properties?.[field]?.type;
        if (!compatible(typeof expected === 'string' ? expected : undefined, actual)) {
          add(
            'capability/input',
            path,
            `${key} wants ${field} as ${withArticle(String(expected))}, but ${b.node}${b.path ? `.${b.path}` : ''} is ${withArticle(String(actual))}; point the ref at ${withArticle(String(expected))} or convert it with a transform node`,
            gn.id,
          );
        }
      }
    }
    for (const [field, fieldSchema] of Object.entries(shape)) {
      if (input[field] !== undefined || fieldSchema.safeParse(undefined).success) continue;
      add(
        'capability/input',
        [...gn.path, 'input'],
        `${key} needs input ${field}; add it as a binding`,
        gn.id,
      );
    }
  }

  // The write rule, on the top-level graph: writes in map bodies and subflows count at their map or subflow node.
  const writesInside = (gn: GraphNode): string[] => {
    const n = gn.parsed;
    if (!n) return [];
    if (n.kind === 'capability') {
      const cap = catalogue.capability(n.capability);
      return cap?.kind === 'write' ? [cap.key] : [];
    }
    if (n.kind === 'subflow')
      return ctx.subflows.get(n.automation_id)?.writes ? [`automation ${n.automation_id}`] : [];
    if (n.kind === 'map') {
      const body = levels.find((l) => l.mapId === gn.id);
      return body ? body.nodes.flatMap(writesInside) : [];
    }
    return [];
  };
  const top = levels[0] as Level;
  if (ctx.writeApproval === 'automatic') {
    for (const gn of allNodes.values()) {
      if (gn.kind !== 'approval') continue;
      add(
        'write/approval-with-automatic',
        gn.path,
        `approval node "${gn.id}" is not allowed with write_approval "automatic"; remove it, or draft with write_approval "required"`,
        gn.id,
      );
    }
  } else {
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
      const writes = writesInside(gn);
      if (writes.length === 0 || !reached.has(gn.id)) continue;
      const what = gn.kind === 'capability' ? writes[0] : `${[...new Set(writes)].join(', ')} inside it`;
      add(
        'write/needs-approval',
        gn.path,
        `"${gn.id}" writes (${what}) but not every path to it passes an approval node; add an approval node before it, or draft with write_approval "automatic"`,
        gn.id,
      );
    }
  }

  if (errors.length > 0) return { ok: false, errors };
  // Everything the rules checked is also what the advertised plan schema accepts.
  const full = planSchema.safeParse(raw);
  if (!full.success) {
    return {
      ok: false,
      errors: describeIssues(full.error.issues, []).map((p) => ({ rule: 'shape', ...p })),
    };
  }
  return { ok: true, plan: full.data as FlowPlan };
}
