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

export const isBinding = (s: JsonSchema | undefined): boolean =>
  typeof s?.$ref === 'string' && s.$ref.endsWith('/Binding');

const branches = (s: JsonSchema): JsonSchema[] =>
  (Array.isArray(s.anyOf) ? s.anyOf : Array.isArray(s.oneOf) ? s.oneOf : [s]) as JsonSchema[];

export const props = (s: JsonSchema) => (s.properties ?? {}) as Record<string, JsonSchema>;
export const requiredOf = (s: JsonSchema) =>
  new Set(Array.isArray(s.required) ? (s.required as string[]) : []);

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
