import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FlowPlan } from './plan.ts';
import { planDiff } from './plan-diff.ts';

const lit = (value: unknown) => ({ kind: 'literal' as const, value });
const base: FlowPlan = {
  planVersion: 1,
  name: 'Digest',
  description: 'Posts a digest.',
  nodes: [
    {
      id: 'read',
      kind: 'capability',
      capability: 'documents.read_document',
      input: { document_id: lit('doc_1') },
    },
    { id: 'ok', kind: 'approval', message: lit('Post it?') },
    { id: 'post', kind: 'capability', capability: 'conversations.post_message', input: { text: lit('Hi') } },
  ],
  edges: [
    { from: 'read', to: 'ok' },
    { from: 'ok', to: 'post' },
  ],
};
const version = (plan: FlowPlan, ask = 'Post the digest.') => ({ plan, ask, write_approval: 'required' });

describe('the structural diff of two plan versions', () => {
  it('finds nothing between a plan and itself, whatever its keys’ order', () => {
    const reordered = JSON.parse(JSON.stringify(base), (_k, v: unknown) =>
      v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
    ) as FlowPlan;
    assert.deepEqual(planDiff(version(base), version(reordered)), {
      added: [],
      removed: [],
      changed: [],
      edges_added: [],
      edges_removed: [],
      fields: [],
    });
  });

  it('names steps added, removed and changed (with the fields that changed), edges and plan fields', () => {
    const next: FlowPlan = {
      ...base,
      description: 'Posts a shorter digest.',
      nodes: [
        base.nodes[0]!,
        { id: 'ok', kind: 'approval', message: lit('Post the digest?'), approvers: 'admins' },
        { id: 'note', kind: 'notify', message: lit('Done.') },
      ],
      edges: [
        { from: 'read', to: 'ok' },
        { from: 'ok', to: 'note' },
      ],
    };
    assert.deepEqual(planDiff(version(base), version(next, 'Post a shorter digest.')), {
      added: [{ node_id: 'note', kind: 'notify' }],
      removed: [{ node_id: 'post', kind: 'capability' }],
      changed: [{ node_id: 'ok', kind: 'approval', fields: ['approvers', 'message'] }],
      edges_added: ['ok → note'],
      edges_removed: ['ok → post'],
      fields: ['description', 'ask'],
    });
  });

  it('compares the steps inside a map one by one, and a step whose kind changed', () => {
    const mapPlan = (text: string): FlowPlan => ({
      ...base,
      nodes: [
        {
          id: 'each',
          kind: 'map',
          items: lit([1, 2]),
          result: 'say',
          body: { nodes: [{ id: 'say', kind: 'notify', message: lit(text) }] },
        },
      ],
      edges: [],
    });
    const diff = planDiff(version(mapPlan('a')), version(mapPlan('b')));
    assert.deepEqual(diff.changed, [{ node_id: 'each/say', kind: 'notify', fields: ['message'] }]);
    const kinds = planDiff(
      version(base),
      version({ ...base, nodes: [{ id: 'read', kind: 'delay', seconds: 5 }] }),
    );
    assert.deepEqual(kinds.changed, [{ node_id: 'read', kind: 'delay', fields: ['kind'] }]);
  });
});
