import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PlanNode } from '../../flowplan/plan.ts';
import { Scope } from '../../flowplan/resolve.ts';
import { computePureSteps } from './approval-scope.ts';

const lit = (value: unknown) => ({ kind: 'literal' as const, value });
const ref = (node: string, path = '') => ({ kind: 'ref' as const, node, path });

describe('computePureSteps', () => {
  it('works out transforms in dependency order, whatever their order in the plan', () => {
    const scope = new Scope({ who: 'Ada' });
    scope.outputs.set('before', { text: 'the digest' });
    const later = [
      {
        id: 'second',
        kind: 'transform',
        op: 'template',
        input: { a: ref('first', 'text') },
        args: { template: '«{{a}}»' },
      },
      {
        id: 'first',
        kind: 'transform',
        op: 'template',
        input: { b: ref('before', 'text') },
        args: { template: 'Sent {{b}}' },
      },
    ] as PlanNode[];
    assert.deepEqual([...computePureSteps(later, scope)], []);
    assert.deepEqual(scope.output('second'), { text: '«Sent the digest»' });
  });

  it('leaves a transform that needs a step with effects, and says why one fails now', () => {
    const scope = new Scope({});
    const later = [
      { id: 'write', kind: 'capability', capability: 'documents.append_to_document', input: {} },
      {
        id: 'count',
        kind: 'transform',
        op: 'template',
        input: { n: ref('write', 'written_chars') },
        args: { template: '{{n}}' },
      },
      { id: 'parse', kind: 'transform', op: 'json_parse', input: { text: lit('not json') } },
    ] as PlanNode[];
    const failed = computePureSteps(later, scope);
    assert.equal(scope.has('count'), false);
    assert.equal(scope.has('write'), false);
    assert.deepEqual([...failed.keys()], ['parse']);
    assert.match(failed.get('parse')!, /^text is not JSON/);
  });
});
