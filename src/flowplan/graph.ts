import { z } from 'zod';
import type { Catalogue } from '../capabilities/catalogue.ts';
import { isObject, type PathPart } from './issues.ts';
import { TRANSFORM_OPS } from './transforms.ts';
import type { Binding } from './bindings.ts';
import type { Edge, PlanNode } from './plan.ts';

/** What a plan's graph is made of, as the validator, the summary and the engine read it. */

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

/** A cycle among `ids` along `edges`, as the ids on it (the first repeated at the end). */
export function findCycle(ids: Set<string>, edges: readonly Edge[]): string[] {
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
export function typeAt(schema: Record<string, unknown> | undefined, path: string): string | undefined {
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

export function compatible(expected: string | undefined, actual: string | undefined): boolean {
  if (!expected || !actual) return true;
  if (expected === actual) return true;
  // Numbers meet integers either way; a fractional value is refused when the step runs.
  if ((expected === 'number' || expected === 'integer') && (actual === 'number' || actual === 'integer'))
    return true;
  // Anything becomes text when a string is wanted only through a template; refs are passed as is.
  return false;
}

const outputSchemas = new WeakMap<z.ZodType, Record<string, unknown>>();
export function jsonOf(schema: z.ZodType): Record<string, unknown> {
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
