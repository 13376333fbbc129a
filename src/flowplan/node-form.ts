import type { Binding } from './bindings.ts';
import { fieldLabel, formFields, type FormField, type JsonSchema } from './step-form.ts';

/*
 * The form of a step that is not a capability call, built from its node kind's shape as
 * describe_capabilities renders it (`node_shapes`, `transform_ops`): a branch's condition, a map's
 * items and result, a transform's op with its inputs and args, a subflow's automation and input,
 * an approval's message and timeout. Where a field's value lives in the node is its `at`; a field
 * of the shape that is not a binding (an op, a count, a choice) is `plain`. Pure, like step-form.ts.
 */

export interface NodeShapes {
  node_shapes: Record<string, JsonSchema>;
  transform_ops: Record<string, JsonSchema>;
}

/** What a node looks like to its form: any of the plan's node kinds. */
export interface NodeLike {
  id: string;
  kind: string;
  [key: string]: unknown;
}

/** Choices the shape alone cannot give: automations a subflow may run, by id with their names. */
export interface NodeFormContext {
  automations?: { id: string; name: string }[];
}

/** The node's own fields a form never shows: they are the step itself, its graph or its body. */
const NOT_FIELDS = new Set(['kind', 'id', 'title', 'body', 'edges']);

/** Inputs whose names the plan chooses (a template's, a subflow's): one field per name given. */
export interface NodeForm {
  fields: FormField[];
  /** Whether inputs may be added by name (the shape's input is a record of bindings). */
  namedInputs: boolean;
}

const isBinding = (s: JsonSchema | undefined): boolean =>
  typeof s?.$ref === 'string' && s.$ref.endsWith('/Binding');

const branches = (s: JsonSchema): JsonSchema[] =>
  (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : [s]) as JsonSchema[];

const props = (s: JsonSchema) => (s.properties ?? {}) as Record<string, JsonSchema>;
const requiredOf = (s: JsonSchema) => new Set(Array.isArray(s.required) ? (s.required as string[]) : []);

/** The variant of a shape (a union: delay's seconds or until, a transform's op) this node is. */
function variantOf(shape: JsonSchema, node: NodeLike): JsonSchema {
  const all = branches(shape);
  if (all.length === 1) return all[0] as JsonSchema;
  const byOp = all.find((b) => props(b).op?.const === node.op);
  if (byOp) return byOp;
  const own = (b: JsonSchema) => [...requiredOf(b)].filter((k) => !NOT_FIELDS.has(k));
  return all.find((b) => own(b).every((k) => k in node)) ?? (all[0] as JsonSchema);
}

const LONG = /message|instructions|template/;

function bindingField(name: string, at: string[], required: boolean, description?: unknown): FormField {
  return {
    name: at.join('.'),
    label: fieldLabel(name),
    kind: LONG.test(name) ? 'long_text' : 'value',
    required,
    bindable: true,
    at,
    ...(typeof description === 'string' ? { description } : {}),
  };
}

/** Plain fields (stored as values, not bindings) of an object schema, at `base` in the node. */
function plainFields(schema: JsonSchema, base: string[]): FormField[] {
  return formFields(schema).map((f) => ({
    ...f,
    name: [...base, f.name].join('.'),
    label: f.label,
    at: [...base, f.name],
    plain: true,
    bindable: false,
  }));
}

/** A node's input fields: the shape's fixed inputs, or (a record of bindings) one per name given. */
function inputFields(schema: JsonSchema | undefined, node: NodeLike): NodeForm {
  if (!schema) return { fields: [], namedInputs: false };
  const fixed = props(schema);
  if (Object.keys(fixed).length > 0) {
    const req = requiredOf(schema);
    return {
      fields: Object.entries(fixed).map(([k, s]) => bindingField(k, ['input', k], req.has(k), s.description)),
      namedInputs: false,
    };
  }
  if (!isBinding(schema.additionalProperties as JsonSchema | undefined)) {
    return { fields: [], namedInputs: false };
  }
  const given = Object.keys((node.input ?? {}) as Record<string, unknown>);
  return { fields: given.map((k) => bindingField(k, ['input', k], true)), namedInputs: true };
}

/** A shape property that is a choice among strings (an enum, or an enum beside a list of them). */
function choice(
  name: string,
  schema: JsonSchema,
  at: string[],
  required: boolean,
  options: string[],
): FormField {
  return {
    name: at.join('.'),
    label: fieldLabel(name),
    kind: 'choice',
    required,
    options,
    bindable: false,
    plain: true,
    at,
    ...(typeof schema.description === 'string' ? { description: schema.description } : {}),
  };
}

/**
 * The fields of a step that is not a capability call, in the order of its shape. A transform's
 * inputs and args are its op's; a branch's condition is its op, left and (for ops that compare)
 * right; a subflow's automation is chosen from `ctx.automations`; a map's result from its body.
 */
export function nodeForm(node: NodeLike, shapes: NodeShapes, ctx: NodeFormContext = {}): NodeForm {
  const shape = shapes.node_shapes[node.kind];
  if (!shape || node.kind === 'capability') return { fields: [], namedInputs: false };
  const variant = variantOf(shape, node);
  const req = requiredOf(variant);
  const fields: FormField[] = [];
  let namedInputs = false;
  for (const [name, s] of Object.entries(props(variant))) {
    if (NOT_FIELDS.has(name)) continue;
    if (node.kind === 'transform' && name === 'op') {
      fields.push(choice('op', s, ['op'], true, Object.keys(shapes.transform_ops)));
      const op = shapes.transform_ops[String(node.op)];
      fields[fields.length - 1]!.description = typeof op?.describe === 'string' ? op.describe : undefined;
      continue;
    }
    if (name === 'input') {
      const inputs = inputFields(s, node);
      fields.push(...inputs.fields);
      namedInputs = inputs.namedInputs;
      continue;
    }
    if (name === 'args') {
      fields.push(...plainFields(s, ['args']));
      continue;
    }
    if (name === 'condition') {
      const variants = branches(s);
      const ops = variants.flatMap((v) => (props(v).op?.enum as string[] | undefined) ?? []);
      const condition = (node.condition ?? {}) as { op?: string };
      const current = variants.find((v) => (props(v).op?.enum as string[]).includes(condition.op ?? ''));
      fields.push(choice('op', s, ['condition', 'op'], true, ops));
      fields[fields.length - 1]!.label = 'Compare with';
      fields.push({ ...bindingField('left', ['condition', 'left'], true), label: 'Value' });
      if (!current || 'right' in props(current)) {
        fields.push({ ...bindingField('right', ['condition', 'right'], true), label: 'Compared to' });
      }
      continue;
    }
    if (isBinding(s)) {
      fields.push(bindingField(name, [name], req.has(name), s.description));
      continue;
    }
    if (name === 'automation_id') {
      const known = ctx.automations ?? [];
      const field = choice(
        'automation',
        s,
        ['automation_id'],
        true,
        known.map((a) => a.id),
      );
      field.optionLabels = Object.fromEntries(known.map((a) => [a.id, a.name]));
      fields.push(field);
      continue;
    }
    if (name === 'result' && node.kind === 'map') {
      const body = (node.body ?? {}) as { nodes?: { id: string }[] };
      fields.push(
        choice(
          'result',
          s,
          ['result'],
          true,
          (body.nodes ?? []).map((n) => n.id),
        ),
      );
      continue;
    }
    const alternatives = branches(s);
    if (alternatives.length > 1) {
      // approvers: one of a few words, or a list of e-mail addresses — one per line.
      const words = alternatives.flatMap((a) => (a.enum as string[] | undefined) ?? []);
      const list = alternatives.find((a) => a.type === 'array');
      fields.push({
        name,
        label: fieldLabel(name),
        kind: 'list',
        required: req.has(name),
        bindable: false,
        plain: true,
        at: [name],
        words,
        ...(typeof (list?.items as JsonSchema | undefined)?.format === 'string'
          ? { format: (list?.items as JsonSchema).format as string }
          : {}),
        ...(typeof s.description === 'string' ? { description: s.description } : {}),
      });
      continue;
    }
    fields.push(...plainFields({ properties: { [name]: s }, required: req.has(name) ? [name] : [] }, []));
  }
  return { fields, namedInputs };
}

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
