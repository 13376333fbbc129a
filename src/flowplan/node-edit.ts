import type { Binding } from './bindings.ts';
import { isBinding, props, requiredOf, type NodeLike, type NodeShapes } from './node-form.ts';
import type { FormField, JsonSchema } from './step-form.ts';

/*
 * A step's form field read from and written back into its node (pure, like node-form.ts): where a
 * field lives, its value as a binding, the node with a new value or another transform op, the
 * field a validator error names, and what a node gives later steps to bind to.
 */

/** Where a field's value lives in the node (a capability's input by default). */
export const fieldAt = (field: FormField): string[] => field.at ?? ['input', field.name];

function getAt(value: unknown, at: string[]): unknown {
  let v = value;
  for (const k of at) v = v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

function setAt(value: Record<string, unknown>, at: string[], next: unknown): Record<string, unknown> {
  const [head, ...rest] = at as [string, ...string[]];
  const copy = { ...value };
  if (rest.length === 0) {
    if (next === undefined) delete copy[head];
    else copy[head] = next;
    return copy;
  }
  const inner = copy[head] && typeof copy[head] === 'object' ? (copy[head] as Record<string, unknown>) : {};
  copy[head] = setAt(inner, rest, next);
  return copy;
}

/** What a field holds as a binding: the node's binding, or a plain value as a literal. */
export function fieldBinding(node: NodeLike, field: FormField): Binding | undefined {
  const v = getAt(node, fieldAt(field));
  if (!field.plain) return v as Binding | undefined;
  if (v === undefined) return undefined;
  if (field.words && typeof v === 'string') return { kind: 'literal', value: [v] };
  return { kind: 'literal', value: v };
}

/**
 * The node with a field's new value (undefined removes it). A plain field stores the literal's
 * value; a branch that now compares nothing loses its right side, one that compares gains it.
 */
export function withField<N extends NodeLike>(node: N, field: FormField, b: Binding | undefined): N {
  let value: unknown = b;
  if (field.plain) {
    value = b?.kind === 'literal' ? b.value : undefined;
    if (field.words && Array.isArray(value)) {
      if (value.length === 0) value = undefined;
      else if (value.length === 1 && field.words.includes(String(value[0]))) value = value[0];
    }
  }
  let next = setAt(node, fieldAt(field), value) as N;
  if (next.kind === 'branch' && fieldAt(field).join('.') === 'condition.op') {
    const condition = { ...(next.condition as Record<string, unknown>) };
    const unary = ['exists', 'truthy'].includes(String(condition.op));
    if (unary) delete condition.right;
    else condition.right ??= { kind: 'literal', value: '' };
    next = { ...next, condition };
  }
  return next;
}

/** A transform with another op keeps only the inputs and args the new op takes. */
export function withOp<N extends NodeLike>(node: N, op: string, shapes: NodeShapes): N {
  const def = shapes.transform_ops[op] ?? {};
  const input = (def.input ?? {}) as JsonSchema;
  const args = (def.args ?? {}) as JsonSchema;
  const keep = (from: unknown, schema: JsonSchema, open: boolean) => {
    const names = new Set(Object.keys(props(schema)));
    const entries = Object.entries((from ?? {}) as Record<string, unknown>).filter(
      ([k]) => open || names.has(k),
    );
    return entries.length ? Object.fromEntries(entries) : undefined;
  };
  const next: NodeLike = { ...node, op };
  const openInput = Object.keys(props(input)).length === 0;
  const keptInput = keep(node.input, input, openInput && isBinding(input.additionalProperties as JsonSchema));
  const keptArgs = keep(node.args, args, false);
  if (keptInput) next.input = keptInput;
  else if (requiredOf(def).has('input') || openInput) next.input = {};
  else delete next.input;
  if (keptArgs) next.args = keptArgs;
  else delete next.args;
  return next as N;
}

/** The field a validator error names, from its path into the plan: the longest `at` it falls under. */
export function fieldOfError(path: readonly (string | number)[], fields: FormField[]): string | undefined {
  // The path inside its node: after the last `nodes.<index>` (a map body's nodes are nested).
  let start = 0;
  for (let i = 0; i < path.length - 1; i++) {
    if (path[i] === 'nodes' && typeof path[i + 1] === 'number') start = i + 2;
  }
  const inNode = path.slice(start).map(String);
  let best: FormField | undefined;
  for (const f of fields) {
    const at = fieldAt(f);
    if (at.length <= inNode.length && at.every((k, i) => inNode[i] === k)) {
      if (!best || at.length > fieldAt(best).length) best = f;
    }
  }
  return best?.name;
}

/** What each kind of node gives its later steps, besides a capability's or a transform op's output. */
const KIND_OUTPUTS: Record<string, string[]> = {
  branch: ['value'],
  map: ['results'],
  approval: ['approved', 'by', 'at', 'note'],
  notify: ['message_id'],
  delay: ['resumed_at'],
  agent: ['text'],
};

/** A node's output schema, as far as the form can know it, for the bindings later steps pick from. */
export function nodeOutput(
  node: { kind: string; op?: unknown },
  shapes: NodeShapes | undefined,
): JsonSchema | undefined {
  if (node.kind === 'transform') {
    const op = shapes?.transform_ops[String(node.op)];
    return op?.output as JsonSchema | undefined;
  }
  const keys = KIND_OUTPUTS[node.kind];
  return keys ? { type: 'object', properties: Object.fromEntries(keys.map((k) => [k, {}])) } : undefined;
}
