import type { Binding } from '../flowplan/bindings.ts';
import type { PlanNode } from '../flowplan/plan.ts';
import { resolve, type Scope } from './walker.ts';

/** The most of a step's resolved input kept for people to read; a bigger one is kept as its size. */
export const INPUT_SHOWN_BYTES = 16 * 1024;

const isBinding = (value: unknown): value is Binding =>
  typeof value === 'object' &&
  value !== null &&
  !Array.isArray(value) &&
  ((value as { kind?: unknown }).kind === 'literal' ||
    (value as { kind?: unknown }).kind === 'ref' ||
    (value as { kind?: unknown }).kind === 'trigger');

/** A node field with every binding in it resolved (a record of bindings, a condition, a binding). */
function resolved(value: unknown, scope: Scope, depth = 0): unknown {
  if (isBinding(value)) return resolve(value, scope);
  if (depth > 2 || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const out: Record<string, unknown> = {};
  for (const [name, inner] of Object.entries(value)) {
    const v = resolved(inner, scope, depth + 1);
    if (v !== undefined) out[name] = v;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The fields of plan nodes that hold bindings (everything else is the node's shape). */
const BOUND = ['input', 'instructions', 'condition', 'items', 'message', 'until'] as const;

/**
 * What a step was given, as stored with it: every binding of the node resolved against the scope it
 * ran in. Past INPUT_SHOWN_BYTES only the size is kept, so showing inputs never costs a run its caps.
 */
export function storedInput(node: PlanNode, scope: Scope): string | null {
  const input: Record<string, unknown> = {};
  for (const field of BOUND) {
    const v = resolved((node as Record<string, unknown>)[field], scope);
    if (v !== undefined) input[field] = v;
  }
  if (Object.keys(input).length === 0) return null;
  let json: string;
  try {
    json = JSON.stringify(input);
  } catch {
    return JSON.stringify({ not_shown: 'the input is nested too deeply to show' });
  }
  const bytes = Buffer.byteLength(json);
  return bytes > INPUT_SHOWN_BYTES
    ? JSON.stringify({ not_shown: `the input is ${bytes} bytes; up to ${INPUT_SHOWN_BYTES} are kept` })
    : json;
}
