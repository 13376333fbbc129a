import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors.ts';
import { checkFields, checkShape, expectation, MAX_ARGUMENT_CHARS, MAX_DEPTH } from './arguments.ts';
import type { FieldRule } from './tool.ts';

const refusal = (run: () => void): string => {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof DomainError);
    assert.equal(error.code, 'invalid_argument');
    return error.message;
  }
  assert.fail('expected a refusal');
};

const rule = (schema: Record<string, unknown>, extra: Partial<FieldRule> = {}): FieldRule => ({
  schema,
  clamped: false,
  anyValue: false,
  ...extra,
});

describe('checkShape', () => {
  it('measures a value a million levels deep without recursing', () => {
    let deep: unknown = 0;
    for (let i = 0; i < 1_000_000; i++) deep = i % 2 ? [deep] : { a: deep };
    assert.equal(
      refusal(() => checkShape({ plan_json: deep })),
      `plan_json is nested too deeply: at most ${MAX_DEPTH} levels of objects and arrays are accepted`,
    );
  });

  it('stops counting an array of millions at the budget', () => {
    const wide = new Array<number>(MAX_ARGUMENT_CHARS + 1).fill(0);
    assert.match(
      refusal(() => checkShape({ tags: wide })),
      /^tags is too large/,
    );
  });

  it('counts keys and strings of every argument towards one budget', () => {
    const half = 'x'.repeat(MAX_ARGUMENT_CHARS / 2);
    checkShape({ a: half.slice(1), b: half.slice(2) });
    assert.match(
      refusal(() => checkShape({ a: half, b: { [half]: 1 } })),
      /^b is too large/,
    );
  });
});

describe('checkFields', () => {
  it('names every field of the wrong type in one line, and leaves values of the right type to the tool', () => {
    const fields = {
      limit: rule({ type: 'integer', minimum: 1, maximum: 50 }, { clamped: true }),
      scope: rule({ type: 'string', enum: ['mine', 'org'] }),
      resolved: rule({ type: 'boolean' }),
      plan_json: rule({ type: 'object' }, { anyValue: true }),
    };
    assert.equal(
      refusal(() => checkFields(fields, { limit: '3', scope: 4, resolved: 'yes', plan_json: 'x' })),
      'limit must be a number from 1 to 50; scope must be mine or org; resolved must be a boolean',
    );
    checkFields(fields, { limit: -7, scope: 'team', resolved: false });
  });
});

describe('expectation', () => {
  it('says what a field must be from its advertised schema', () => {
    const cases: [FieldRule, string][] = [
      [rule({ type: 'string' }), 'a string'],
      [rule({ type: 'string', minLength: 1 }), 'a non-empty string'],
      [rule({ type: 'string', enum: ['user', 'pod', 'org'] }), 'user, pod or org'],
      [rule({ type: 'integer', minimum: 0 }), 'a non-negative integer'],
      [rule({ type: 'integer', minimum: 0 }, { clamped: true }), 'a non-negative number'],
      [rule({ type: 'integer', minimum: 1, maximum: 200 }, { clamped: true }), 'a number from 1 to 200'],
      [rule({ type: 'object' }), 'an object'],
      [rule({ type: 'array', items: { type: 'string' } }), 'an array of strings'],
      [rule({ type: 'array' }, { expects: 'a list of tags' }), 'a list of tags'],
    ];
    for (const [r, text] of cases) assert.equal(expectation(r), text);
  });
});
