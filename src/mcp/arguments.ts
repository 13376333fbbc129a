import { invalid } from '../errors.ts';
import type { FieldRule } from './tool.ts';

/** Objects and arrays inside one argument; a FlowPlan, the deepest thing a tool takes, needs about ten. */
export const MAX_DEPTH = 64;

/**
 * Characters in one call's arguments, keys included (other values count one each). Room for an
 * edit_document append far past its 60,000-character cap, which stops early as the spec says.
 */
export const MAX_ARGUMENT_CHARS = 10_000_000;

/**
 * Refuses an argument nested deeper than MAX_DEPTH or arguments larger than
 * MAX_ARGUMENT_CHARS. The walk keeps its own stack and stops at the first limit passed, so
 * it costs at most what the limits allow, whatever arrives.
 */
export function checkShape(args: Record<string, unknown>): void {
  let budget = MAX_ARGUMENT_CHARS;
  for (const [field, value] of Object.entries(args)) {
    budget -= field.length + size(value);
    // Only objects and arrays wait on the stack; everything else is counted where it is found.
    const stack: [object, number][] = isContainer(value) ? [[value, 1]] : [];
    while (budget >= 0 && stack.length > 0) {
      const [item, depth] = stack.pop()!;
      if (depth > MAX_DEPTH) {
        throw invalid(
          `${field} is nested too deeply: at most ${MAX_DEPTH} levels of objects and arrays are accepted`,
        );
      }
      // Counted as they are reached, without copying: an array of millions stops at the budget.
      if (Array.isArray(item)) {
        for (let i = 0; i < item.length && budget >= 0; i++) {
          const v: unknown = item[i];
          budget -= size(v);
          if (isContainer(v)) stack.push([v, depth + 1]);
        }
      } else {
        for (const key in item) {
          const v = (item as Record<string, unknown>)[key];
          budget -= key.length + size(v);
          if (budget < 0) break;
          if (isContainer(v)) stack.push([v, depth + 1]);
        }
      }
    }
    if (budget < 0) {
      throw invalid(
        `${field} is too large: the arguments of one call may hold at most ${MAX_ARGUMENT_CHARS.toLocaleString('en')} characters`,
      );
    }
  }
}

function isContainer(value: unknown): value is object {
  return typeof value === 'object' && value !== null;
}

function size(value: unknown): number {
  return typeof value === 'string' ? value.length : 1;
}

function list(values: readonly unknown[]): string {
  const words = values.map(String);
  return words.length < 2 ? (words[0] ?? '') : `${words.slice(0, -1).join(', ')} or ${words.at(-1)}`;
}

/** What a field must be, from its advertised schema: the second half of `<field> must be …`. */
export function expectation(rule: FieldRule): string {
  if (rule.expects) return rule.expects;
  const { schema } = rule;
  if (Array.isArray(schema.enum)) return list(schema.enum);
  const { minimum, maximum } = schema;
  switch (schema.type) {
    case 'string':
      return typeof schema.minLength === 'number' && schema.minLength > 0 ? 'a non-empty string' : 'a string';
    case 'boolean':
      return 'a boolean';
    case 'integer':
    case 'number': {
      const kind = rule.clamped || schema.type === 'number' ? 'number' : 'integer';
      if (minimum !== undefined && maximum !== undefined) return `a ${kind} from ${minimum} to ${maximum}`;
      if (minimum === 0) return `a non-negative ${kind}`;
      return kind === 'integer' ? 'an integer' : 'a number';
    }
    case 'object':
      return 'an object';
    case 'array':
      return (schema.items as { type?: unknown } | undefined)?.type === 'string'
        ? 'an array of strings'
        : 'an array';
    default:
      return 'a JSON value';
  }
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value === 'number' ? 'number' : typeof value;
}

/**
 * What is wrong with one present argument's type, or undefined when it fits. Only the type (and
 * a string's length, which bounds what the tool will parse) is checked here: which values of the
 * right type are allowed is the tool's to say, in its own order and words.
 */
function problem(name: string, rule: FieldRule, value: unknown): string | undefined {
  if (rule.anyValue) return undefined;
  const { schema } = rule;
  const wrong = `${name} must be ${expectation(rule)}`;
  const type = Array.isArray(schema.enum) ? jsonType(schema.enum[0]) : schema.type;
  switch (type) {
    case 'string':
      if (typeof value !== 'string') return wrong;
      if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) {
        return rule.expects ? wrong : `${name} must be at most ${schema.maxLength} characters`;
      }
      return undefined;
    case 'integer':
    case 'number':
      return typeof value === 'number' ? undefined : wrong;
    case 'array': {
      if (!Array.isArray(value)) return wrong;
      const items = (schema.items as { type?: unknown } | undefined)?.type;
      return items === 'string' && value.some((v) => typeof v !== 'string') ? wrong : undefined;
    }
    case 'boolean':
    case 'object':
      return jsonType(value) === type ? undefined : wrong;
    default:
      return undefined;
  }
}

/**
 * Refuses every present argument whose value is not of its advertised type, in one line:
 * `<field> must be …` for each. Missing arguments are left to the tool, which words them.
 */
export function checkFields(fields: Record<string, FieldRule>, args: Record<string, unknown>): void {
  const problems: string[] = [];
  for (const [name, rule] of Object.entries(fields)) {
    if (args[name] === undefined) continue;
    const found = problem(name, rule, args[name]);
    if (found) problems.push(found);
  }
  if (problems.length > 0) throw invalid(problems.join('; '));
}
