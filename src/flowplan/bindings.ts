import { z } from 'zod';

/** Node ids and bindings: how a node names the values it reads. */

const nodeId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, "_" or "-"')
  .describe('Unique in the plan (map bodies included).');

export const valuePath = z
  .string()
  .regex(/^$|^[^.]+(\.[^.]+)*$/, 'must be dot-separated keys and array indexes such as items.0.title, or ""')
  .describe('Dot-separated keys and array indexes (items.0.title); "" is the whole value.');

export const literalBinding = z
  .strictObject({ kind: z.literal('literal'), value: z.unknown() })
  .describe('A fixed value.');
export const refBinding = z
  .strictObject({
    kind: z.literal('ref'),
    node: z.string().describe('An upstream node id.'),
    path: valuePath,
  })
  .describe('Part of the output of a node upstream of this one.');
export const triggerBinding = z
  .strictObject({ kind: z.literal('trigger'), path: valuePath })
  .describe('Part of the trigger payload (inside a map body: {item, index}).');

export const binding = z
  .discriminatedUnion('kind', [literalBinding, refBinding, triggerBinding])
  .meta({ id: 'Binding' });
export type Binding = z.infer<typeof binding>;

export const inputs = z.record(z.string(), binding).describe('Named inputs, each a binding.');
export const common = {
  id: nodeId,
  title: z.string().min(1).max(200).optional().describe('Shown in steps instead of the generated text.'),
};
