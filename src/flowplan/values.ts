import type { TransformNode } from './transforms.ts';
import { StepError } from '../errors.ts';

import { valueAt } from './resolve.ts';

export { valueAt };

export function asText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

function asArray(value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  throw new StepError(`${what} must be an array (got ${value === null ? 'null' : typeof value})`);
}

function compare(op: string, left: unknown, right: unknown): boolean {
  switch (op) {
    case 'eq':
      return JSON.stringify(left) === JSON.stringify(right);
    case 'ne':
      return JSON.stringify(left) !== JSON.stringify(right);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const a = typeof left === 'string' && typeof right === 'string' ? left : Number(left);
      const b = typeof left === 'string' && typeof right === 'string' ? right : Number(right);
      if (typeof a === 'number' && (Number.isNaN(a) || Number.isNaN(b as number))) return false;
      return op === 'gt' ? a > b : op === 'gte' ? a >= b : op === 'lt' ? a < b : a <= b;
    }
    case 'contains':
      if (typeof left === 'string') return left.includes(asText(right));
      if (Array.isArray(left)) return left.some((item) => JSON.stringify(item) === JSON.stringify(right));
      return false;
    case 'exists':
      return left !== null && left !== undefined;
    case 'truthy':
      return Boolean(left) && !(Array.isArray(left) && left.length === 0);
    default:
      throw new StepError(`unknown comparison ${op}`);
  }
}

export { compare };

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;

/** Values nested deeper than this are not pretty-printed (indentation grows with the depth). */
const MAX_PRETTY_DEPTH = 64;

function depthOf(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop() as [unknown, number];
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    if (v !== null && typeof v === 'object')
      for (const child of Object.values(v as object)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * Runs one transform op over its resolved inputs; no code runs, only the listed ops. Ops that build
 * text measure it first and call `check` with the length, which throws when it passes the cap.
 */
export function transform(
  node: TransformNode,
  input: Record<string, unknown>,
  now: Date,
  check: (length: number, what: string) => void = () => {},
): Record<string, unknown> {
  const args = (node.args ?? {}) as Record<string, unknown>;
  switch (node.op) {
    case 'get':
      return { value: valueAt(input.value, String(args.path ?? '')) ?? null };
    case 'template': {
      const template = String(args.template ?? '');
      const texts = new Map<string, string>();
      const textOf = (name: string) => {
        let text = texts.get(name);
        if (text === undefined) {
          const [head, ...rest] = name.split('.');
          text = asText(valueAt(input[head as string], rest.join('.')));
          texts.set(name, text);
        }
        return text;
      };
      let length = template.length;
      for (const match of template.matchAll(PLACEHOLDER))
        length += textOf(match[1] as string).length - match[0].length;
      check(length, 'the template’s text');
      return { text: template.replace(PLACEHOLDER, (_, name: string) => textOf(name)) };
    }
    case 'json_parse':
      try {
        return { value: JSON.parse(asText(input.text)) as unknown };
      } catch (error) {
        throw new StepError(`text is not JSON: ${(error as Error).message}`);
      }
    case 'json_stringify': {
      const pretty = Boolean(args.pretty) && depthOf(input.value, MAX_PRETTY_DEPTH) <= MAX_PRETTY_DEPTH;
      const text = JSON.stringify(input.value ?? null, null, pretty ? 2 : undefined);
      check(text.length, 'the JSON text');
      return { text };
    }
    case 'join': {
      const texts = asArray(input.items, 'items').map(asText);
      const separator = String(args.separator ?? '\n');
      const length =
        texts.reduce((sum, t) => sum + t.length, 0) + separator.length * Math.max(0, texts.length - 1);
      check(length, 'the joined text');
      return { text: texts.join(separator) };
    }
    case 'split':
      return { items: asText(input.text).split(String(args.separator)) };
    case 'pluck':
      return {
        items: asArray(input.items, 'items').map((item) => valueAt(item, String(args.field)) ?? null),
      };
    case 'filter':
      return {
        items: asArray(input.items, 'items').filter((item) =>
          compare(String(args.op), valueAt(item, String(args.field)), args.value),
        ),
      };
    case 'count': {
      const v = input.items;
      if (typeof v === 'string') return { count: v.length };
      return { count: asArray(v, 'items').length };
    }
    case 'first': {
      const items = asArray(input.items, 'items');
      return { value: items[0] ?? null };
    }
    case 'last': {
      const items = asArray(input.items, 'items');
      return { value: items.at(-1) ?? null };
    }
    case 'merge': {
      const merged: Record<string, unknown> = {};
      for (const [name, value] of Object.entries(input)) {
        if (value === null || value === undefined) continue;
        if (typeof value !== 'object' || Array.isArray(value))
          throw new StepError(`input ${name} must be an object to merge`);
        Object.assign(merged, value);
      }
      return { value: merged };
    }
    case 'coalesce':
      return { value: Object.values(input).find((v) => v !== null && v !== undefined) ?? null };
    case 'now': {
      const zone = typeof args.timezone === 'string' ? args.timezone : 'UTC';
      let local: string;
      try {
        local = now.toLocaleString('sv-SE', { timeZone: zone }).replace(' ', 'T');
      } catch {
        throw new StepError(`timezone ${zone} is not an IANA time zone`);
      }
      return { iso: now.toISOString(), epoch_ms: now.getTime(), local };
    }
  }
}
