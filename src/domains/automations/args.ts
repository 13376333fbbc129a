import { invalid } from '../../errors.ts';

/** An optional string argument of at most `max` characters. */
export function optionalString(value: unknown, field: string, max: number): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalid(`${field} must be a string`);
  if (value.length > max) throw invalid(`${field} must be at most ${max} characters`);
  return value;
}

/** An optional true-or-false argument. */
export function optionalBoolean(value: unknown, field: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'boolean') throw invalid(`${field} must be true or false`);
  return value;
}
