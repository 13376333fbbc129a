import assert from 'node:assert/strict';
import type { CallResult } from './harness.ts';

/** Asserts the call succeeded and returns its structured result. */
export function ok(r: CallResult): Record<string, unknown> {
  assert.equal(r.isError, false, `expected success, got: ${r.text}`);
  assert.ok(r.structured, 'a successful call returns structuredContent');
  return r.structured;
}

/** Asserts the call was refused with exactly `text`. */
export function refused(r: CallResult, text: string): void {
  assert.equal(r.isError, true, `expected a refusal, got: ${r.text}`);
  assert.equal(r.text, text);
}

/** Asserts the call was refused with the usual prefix and, when given, text matching `pattern`. */
export function refusedWithPrefix(r: CallResult, pattern?: RegExp): void {
  assert.equal(r.isError, true, `expected a refusal, got: ${r.text}`);
  assert.match(r.text, /^Tool failed: /);
  if (pattern) assert.match(r.text, pattern);
}
