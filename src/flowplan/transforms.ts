import { z } from 'zod';
import { binding, common, inputs, valuePath, type Binding } from './bindings.ts';

/** The transform operations (no code runs): each declares its input, args and output. */

// ── transform operations ────────────────────────────────────────────────────────────────────────

const items = binding.describe('An array.');
const filterOps = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists'] as const;

interface TransformOp {
  describe: string;
  input: z.ZodType;
  args?: z.ZodType;
  output: z.ZodType;
}

export const TRANSFORM_OPS = {
  get: {
    describe: 'Pick a part of a value by path.',
    input: z.strictObject({ value: binding }),
    args: z.strictObject({ path: valuePath }),
    output: z.object({ value: z.unknown() }),
  },
  template: {
    describe: 'Fill {{name}} placeholders with the named inputs (objects and arrays as JSON).',
    input: inputs.optional(),
    args: z.strictObject({ template: z.string().max(20_000) }),
    output: z.object({ text: z.string() }),
  },
  json_parse: {
    describe: 'Parse JSON text.',
    input: z.strictObject({ text: binding }),
    output: z.object({ value: z.unknown() }),
  },
  json_stringify: {
    describe: 'Write a value as JSON text.',
    input: z.strictObject({ value: binding }),
    args: z.strictObject({ pretty: z.boolean().optional() }).optional(),
    output: z.object({ text: z.string() }),
  },
  join: {
    describe: 'Join an array of values into text.',
    input: z.strictObject({ items }),
    args: z.strictObject({ separator: z.string().max(100).optional() }).optional(),
    output: z.object({ text: z.string() }),
  },
  split: {
    describe: 'Split text into an array.',
    input: z.strictObject({ text: binding }),
    args: z.strictObject({ separator: z.string().min(1).max(100) }),
    output: z.object({ items: z.array(z.string()) }),
  },
  pluck: {
    describe: 'Take one field of every object in an array.',
    input: z.strictObject({ items }),
    args: z.strictObject({ field: valuePath }),
    output: z.object({ items: z.array(z.unknown()) }),
  },
  filter: {
    describe: 'Keep the array items whose field compares true against value.',
    input: z.strictObject({ items }),
    args: z.strictObject({ field: valuePath, op: z.enum(filterOps), value: z.unknown().optional() }),
    output: z.object({ items: z.array(z.unknown()) }),
  },
  count: {
    describe: 'The length of an array (or of text).',
    input: z.strictObject({ items }),
    output: z.object({ count: z.number() }),
  },
  first: {
    describe: 'The first item of an array (null when empty).',
    input: z.strictObject({ items }),
    output: z.object({ value: z.unknown() }),
  },
  last: {
    describe: 'The last item of an array (null when empty).',
    input: z.strictObject({ items }),
    output: z.object({ value: z.unknown() }),
  },
  merge: {
    describe: 'Merge the named object inputs, later names winning.',
    input: inputs,
    output: z.object({ value: z.record(z.string(), z.unknown()) }),
  },
  coalesce: {
    describe: 'The first named input that is neither null nor missing, in the order given.',
    input: inputs,
    output: z.object({ value: z.unknown() }),
  },
  now: {
    describe: 'The current instant.',
    input: z.strictObject({}).optional(),
    args: z.strictObject({ timezone: z.string().optional() }).optional(),
    output: z.object({ iso: z.string(), epoch_ms: z.number(), local: z.string() }),
  },
} satisfies Record<string, TransformOp>;

export type TransformOpName = keyof typeof TRANSFORM_OPS;

const transformNodes = Object.entries(TRANSFORM_OPS).map(([op, def]: [string, TransformOp]) =>
  z.strictObject({
    kind: z.literal('transform'),
    ...common,
    op: z.literal(op),
    input: def.input,
    ...(def.args ? { args: def.args } : {}),
  }),
);

export const transformNode = z
  .discriminatedUnion('op', transformNodes as unknown as [z.ZodObject, ...z.ZodObject[]])
  .meta({ id: 'TransformNode' });

export interface TransformNode {
  kind: 'transform';
  id: string;
  title?: string | undefined;
  op: TransformOpName;
  input?: Record<string, Binding> | undefined;
  args?: Record<string, unknown> | undefined;
}
