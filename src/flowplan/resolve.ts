import type { Binding } from './bindings.ts';

/**
 * How a step's bindings become values: the engine resolves every step's input through these, and
 * an approval card works out what the writes it guards would be sent through the very same ones.
 */

/** The value at a dot path (`items.0.title`; `""` is the whole value); undefined when absent. */
export function valueAt(value: unknown, path: string): unknown {
  if (path === '') return value;
  let current: unknown = value;
  for (const part of path.split('.')) {
    if (current === null || current === undefined) return undefined;
    if (Array.isArray(current)) {
      if (!/^\d+$/.test(part)) return undefined;
      current = current[Number(part)];
    } else if (typeof current === 'object') {
      current = Object.prototype.hasOwnProperty.call(current, part)
        ? (current as Record<string, unknown>)[part]
        : undefined;
    } else {
      return undefined;
    }
  }
  return current;
}

/** What bindings of a node may see: outputs of finished nodes by id, then the enclosing scope's. */
export class Scope {
  readonly outputs = new Map<string, unknown>();
  readonly trigger: unknown;
  private readonly parent: Scope | undefined;
  constructor(trigger: unknown, parent?: Scope) {
    this.trigger = trigger;
    this.parent = parent;
  }
  output(id: string): unknown {
    if (this.outputs.has(id)) return this.outputs.get(id);
    return this.parent?.output(id);
  }
  /** Whether the node has finished, here or in the enclosing scope. */
  has(id: string): boolean {
    return this.outputs.has(id) || (this.parent?.has(id) ?? false);
  }
}

export function resolve(binding: Binding, scope: Scope): unknown {
  if (binding.kind === 'literal') return binding.value;
  if (binding.kind === 'trigger') return valueAt(scope.trigger, binding.path);
  return valueAt(scope.output(binding.node), binding.path);
}

export function resolveInputs(
  input: Record<string, Binding> | undefined,
  scope: Scope,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, b] of Object.entries(input ?? {})) {
    const value = resolve(b, scope);
    if (value !== undefined) out[name] = value;
  }
  return out;
}
