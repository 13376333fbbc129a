import type { Binding } from './bindings.ts';

/*
 * A step's form, built from its capability's input schema (as describe_capabilities renders it;
 * node-form.ts does the same from a node kind's shape): one field per input, of a kind a person can fill in (text,
 * numbers, choices, yes/no, lists), and the values those fields hold turned into the plan's
 * bindings and back. Pure: the app draws the fields, the validator checks what they make.
 */

export type JsonSchema = Record<string, unknown>;

/** `value`: any value — what is typed is read as JSON when it is (a number, a list), else as text. */
export type FieldKind =
  'text' | 'long_text' | 'integer' | 'number' | 'boolean' | 'choice' | 'list' | 'json' | 'value';

export interface FormField {
  /** The input's name in the plan (`document_id`). */
  name: string;
  /** The input's name in words (`Document id`). */
  label: string;
  kind: FieldKind;
  required: boolean;
  description?: string;
  /** A choice's values. */
  options?: string[];
  min?: number;
  max?: number;
  /** A text's pattern, as the schema states it. */
  pattern?: string;
  /** A text's format (`email`, `uri`), or a list's items'. */
  format?: string;
  /** Whether an agent's or a step's output may be bound to it (every input but a yes/no). */
  bindable: boolean;
  /** Where the value lives in the node; a capability's input field (`['input', name]`) when absent. */
  at?: string[];
  /** Stored as a value of the node's shape (an op, a count), not as a binding. */
  plain?: boolean;
  /** A list that may instead be one of these words (approvers: `creator`, `admins` or addresses). */
  words?: string[];
  /** Words for a choice's values (a subflow's automation by its name). */
  optionLabels?: Record<string, string>;
}

/** What a field holds: a value typed in, or a binding picked from earlier steps or the trigger. */
export type FieldValue =
  | { source: 'value'; text: string }
  | { source: 'ref'; node: string; path: string }
  | { source: 'trigger'; path: string };

/** Words for an input's name: `content_markdown` → `Content markdown`. */
export function fieldLabel(name: string): string {
  const words = name.replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const LONG_TEXT = /markdown|body|text|html|message|instructions|content|template/;

function kindOf(name: string, schema: JsonSchema): Pick<FormField, 'kind' | 'options'> {
  if (Array.isArray(schema.enum) && schema.enum.every((v) => typeof v === 'string')) {
    return { kind: 'choice', options: schema.enum as string[] };
  }
  switch (schema.type) {
    case 'string':
      return { kind: LONG_TEXT.test(name) && schema.format === undefined ? 'long_text' : 'text' };
    case 'integer':
      return { kind: 'integer' };
    case 'number':
      return { kind: 'number' };
    case 'boolean':
      return { kind: 'boolean' };
    case 'array': {
      const items = (schema.items ?? {}) as JsonSchema;
      return { kind: items.type === 'string' ? 'list' : 'json' };
    }
    default:
      return { kind: 'json' };
  }
}

function formatOf(prop: JsonSchema): { format?: string } {
  const own = prop.type === 'array' ? ((prop.items ?? {}) as JsonSchema).format : prop.format;
  return typeof own === 'string' ? { format: own } : {};
}

/** The fields of an object schema (a capability's input), required ones first, in schema order. */
export function formFields(schema: JsonSchema): FormField[] {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  const fields = Object.entries(properties).map(([name, prop]): FormField => {
    const kind = kindOf(name, prop);
    const bounds = {
      ...(typeof prop.minimum === 'number' ? { min: prop.minimum } : {}),
      ...(typeof prop.maximum === 'number' && prop.maximum < Number.MAX_SAFE_INTEGER
        ? { max: prop.maximum }
        : {}),
      ...(typeof prop.pattern === 'string' ? { pattern: prop.pattern } : {}),
      ...formatOf(prop),
    };
    return {
      name,
      label: fieldLabel(name),
      ...kind,
      required: required.has(name),
      ...(typeof prop.description === 'string' ? { description: prop.description } : {}),
      ...bounds,
      bindable: kind.kind !== 'boolean',
    };
  });
  return [...fields.filter((f) => f.required), ...fields.filter((f) => !f.required)];
}

function literalText(field: FormField, value: unknown): string {
  if (value === undefined || value === null) return '';
  if (field.kind === 'list' && Array.isArray(value)) return value.map(String).join('\n');
  if (field.kind === 'json') return JSON.stringify(value, null, 2);
  if (field.kind === 'value' && typeof value !== 'string') return JSON.stringify(value);
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}

/** What a field shows for a binding of the plan (or nothing yet). */
export function valueOf(field: FormField, binding: Binding | undefined): FieldValue {
  if (!binding) return { source: 'value', text: '' };
  if (binding.kind === 'ref') return { source: 'ref', node: binding.node, path: binding.path };
  if (binding.kind === 'trigger') return { source: 'trigger', path: binding.path };
  return { source: 'value', text: literalText(field, binding.value) };
}

/** A field's value as a plain value (for node-shape fields that are not bindings, such as a delay's seconds). */
export type Converted = { binding?: Binding; error?: string };

/**
 * The binding a field's value makes: a literal of the field's type, a ref or a trigger path.
 * An empty optional field makes none; a value that is not of the field's type says why.
 */
export function bindingOf(field: FormField, value: FieldValue): Converted {
  if (value.source === 'ref') return { binding: { kind: 'ref', node: value.node, path: value.path } };
  if (value.source === 'trigger') return { binding: { kind: 'trigger', path: value.path } };
  const text = value.text;
  if (text.trim() === '' && !['text', 'long_text', 'value'].includes(field.kind)) {
    return field.required ? { error: `${field.label} is required` } : {};
  }
  if (text === '' && !field.required) return {};
  const literal = (v: unknown): Converted => ({ binding: { kind: 'literal', value: v } });
  switch (field.kind) {
    case 'integer':
    case 'number': {
      const n = Number(text.trim());
      if (!Number.isFinite(n)) return { error: `${field.label} must be a number` };
      if (field.kind === 'integer' && !Number.isInteger(n))
        return { error: `${field.label} must be a whole number` };
      return literal(n);
    }
    case 'boolean':
      return literal(text === 'true');
    case 'list':
      return literal(
        text
          .split('\n')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    case 'value':
      try {
        return literal(JSON.parse(text));
      } catch {
        return literal(text);
      }
    case 'json':
      try {
        return literal(JSON.parse(text));
      } catch {
        return { error: `${field.label} must be JSON` };
      }
    default:
      return literal(text);
  }
}

/** A value a field may be bound to: an earlier step's output, a part of it, or a trigger field. */
export interface Source {
  label: string;
  value: Extract<FieldValue, { source: 'ref' | 'trigger' }>;
}

/** What a run's trigger payload holds, by trigger kind (describe_capabilities: trigger_input.payloads). */
const TRIGGER_FIELDS: Record<string, string[]> = {
  schedule: ['scheduled_for', 'fired_at', 'timezone'],
  connector_event: ['provider', 'event', 'data'],
  github_event: ['event', 'action', 'repo', 'payload'],
  /** Inside a map's body, the trigger is the item and its index. */
  map: ['item', 'index'],
};

interface PlanLike {
  nodes: { id: string; kind: string; title?: string; capability?: string }[];
  edges?: { from: string; to: string }[];
}

/** The nodes upstream of `nodeId`: those with a path of edges to it. */
export function upstreamOf(plan: PlanLike, nodeId: string): string[] {
  const into = new Map<string, string[]>();
  for (const e of plan.edges ?? []) into.set(e.to, [...(into.get(e.to) ?? []), e.from]);
  const seen = new Set<string>();
  const stack = [...(into.get(nodeId) ?? [])];
  while (stack.length) {
    const id = stack.pop() as string;
    if (seen.has(id) || id === nodeId) continue;
    seen.add(id);
    stack.push(...(into.get(id) ?? []));
  }
  return plan.nodes.map((n) => n.id).filter((id) => seen.has(id));
}

/**
 * What a step's fields may be bound to: each upstream step's whole output and its top-level
 * fields (from its capability's output schema), then the trigger's fields.
 */
export function sourcesFor(
  plan: PlanLike,
  nodeId: string,
  outputOf: (node: PlanLike['nodes'][number]) => JsonSchema | undefined,
  triggerKind?: string,
): Source[] {
  const sources: Source[] = [];
  const byId = new Map(plan.nodes.map((n) => [n.id, n]));
  for (const id of upstreamOf(plan, nodeId)) {
    const node = byId.get(id);
    if (!node) continue;
    const name = node.title ?? id;
    sources.push({ label: `${name}: whole output`, value: { source: 'ref', node: id, path: '' } });
    const props = (outputOf(node)?.properties ?? {}) as Record<string, unknown>;
    for (const key of Object.keys(props)) {
      sources.push({
        label: `${name}: ${fieldLabel(key).toLowerCase()}`,
        value: { source: 'ref', node: id, path: key },
      });
    }
  }
  const triggerFields = triggerKind
    ? (TRIGGER_FIELDS[triggerKind] ?? [])
    : Object.entries(TRIGGER_FIELDS).flatMap(([kind, fields]) => (kind === 'map' ? [] : fields));
  for (const path of [...new Set(triggerFields)]) {
    sources.push({ label: `Trigger: ${fieldLabel(path).toLowerCase()}`, value: { source: 'trigger', path } });
  }
  return sources;
}

/** A source's value as one string, for a list box's option. */
export const sourceKey = (v: Source['value']) =>
  v.source === 'ref' ? `ref:${v.node}:${v.path}` : `trigger:${v.path}`;
