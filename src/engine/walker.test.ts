import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { FlowPlan, PlanNode } from '../flowplan/plan.ts';
import { bodySize, resolveInputs, Scope, walk, type NodeRow, type Task } from './walker.ts';

const lit = (value: unknown) => ({ kind: 'literal' as const, value });
const ref = (node: string, path = '') => ({ kind: 'ref' as const, node, path });

const t = (id: string, input: Record<string, unknown> = {}): PlanNode =>
  ({ id, kind: 'transform', op: 'coalesce', input }) as PlanNode;

function plan(nodes: PlanNode[], edges: FlowPlan['edges'] = []): FlowPlan {
  return { planVersion: 1, name: 'P', description: 'P.', nodes, edges } as FlowPlan;
}

function row(key: string, status: string, output?: unknown, extra: Partial<NodeRow> = {}): NodeRow {
  return {
    run_id: 'run',
    node_key: key,
    node_id: key.split('.').at(-1) as string,
    status,
    attempt: 1,
    error: null,
    error_code: null,
    wait_until: null,
    started_at: 1,
    finished_at: status === 'running' || status === 'waiting' ? null : 2,
    output_json: output === undefined ? null : JSON.stringify(output),
    input_json: null,
    ...extra,
  };
}

const rowsOf = (...rows: NodeRow[]) => new Map(rows.map((r) => [r.node_key, r]));
const starts = (tasks: Task[]) => tasks.filter((x) => x.type === 'start').map((x) => x.key);
const at = (p: FlowPlan, rows: Map<string, NodeRow>, extra: { paused?: boolean; now?: number } = {}) =>
  walk({ plan: p, rows, trigger: { who: 'ada' }, paused: extra.paused ?? false, now: extra.now ?? 1_000 });

describe('the plan walker', () => {
  it('starts the roots of a fresh plan and nothing that waits on them', () => {
    const w = at(plan([t('a'), t('b'), t('c')], [{ from: 'a', to: 'c' }]), rowsOf());
    assert.deepEqual(starts(w.tasks).sort(), ['a', 'b']);
    assert.equal(w.done, false);
  });

  it('starts a step once everything before it finished, with their outputs in scope', () => {
    const p = plan([t('a'), t('b', { x: ref('a', 'v') })], [{ from: 'a', to: 'b' }]);
    const w = at(p, rowsOf(row('a', 'succeeded', { v: 7 })));
    const task = w.tasks.find((x) => x.type === 'start');
    assert.ok(task && task.type === 'start');
    assert.equal(task.key, 'b');
    assert.deepEqual(resolveInputs((task.node as unknown as { input: never }).input, task.scope), { x: 7 });
  });

  it('is done when every node is finished, and names the first failure', () => {
    const p = plan([t('a'), t('b')]);
    assert.equal(at(p, rowsOf(row('a', 'succeeded', {}), row('b', 'skipped'))).done, true);
    const failed = at(p, rowsOf(row('a', 'failed', undefined, { error: 'boom' }), row('b', 'succeeded', {})));
    assert.deepEqual(failed.failed, { nodeId: 'a', error: 'boom' });
  });

  it('skips the untaken side of a branch and everything only it leads to', () => {
    const branch = {
      id: 'if',
      kind: 'branch',
      condition: { op: 'truthy', left: lit(true) },
    } as unknown as PlanNode;
    const p = plan(
      [branch, t('yes'), t('no'), t('after_no')],
      [
        { from: 'if', to: 'yes', when: true },
        { from: 'if', to: 'no', when: false },
        { from: 'no', to: 'after_no' },
      ],
    );
    const w = at(p, rowsOf(row('if', 'succeeded', { value: true })));
    assert.deepEqual(starts(w.tasks), ['yes']);
    assert.deepEqual(
      w.tasks.filter((x) => x.type === 'skip').map((x) => x.key),
      ['no'],
    );
    const later = at(
      p,
      rowsOf(row('if', 'succeeded', { value: true }), row('yes', 'succeeded', {}), row('no', 'skipped')),
    );
    assert.deepEqual(
      later.tasks.filter((x) => x.type === 'skip').map((x) => x.key),
      ['after_no'],
    );
  });

  it('holds every step that would start while paused, and counts them', () => {
    const w = at(plan([t('a'), t('b')]), rowsOf(), { paused: true });
    assert.deepEqual(w.tasks, []);
    assert.equal(w.held, 2);
  });

  it('looks at waiting steps and says when the earliest wait ends', () => {
    const delay = { id: 'd', kind: 'delay', seconds: 60 } as PlanNode;
    const w = at(plan([delay, t('b')]), rowsOf(row('d', 'waiting', undefined, { wait_until: 5_000 })), {
      now: 1_000,
    });
    assert.deepEqual(
      w.tasks.filter((x) => x.type === 'check').map((x) => x.key),
      ['d'],
    );
    assert.equal(w.wakeAt, 5_000);
  });

  it('does not retry a step before its backoff ends', () => {
    const w = at(plan([t('a')]), rowsOf(row('a', 'pending', undefined, { wait_until: 9_000 })), {
      now: 1_000,
    });
    assert.deepEqual(w.tasks, []);
    assert.equal(w.wakeAt, 9_000);
  });

  describe('maps', () => {
    const map = (concurrency?: number): PlanNode =>
      ({
        id: 'm',
        kind: 'map',
        items: lit([1, 2, 3]),
        ...(concurrency ? { concurrency } : {}),
        body: { nodes: [t('x', { i: { kind: 'trigger', path: 'item' } })], edges: [] },
        result: 'x',
      }) as unknown as PlanNode;

    it('starts at most `concurrency` items at once, each with its item in scope', () => {
      const running = row('m', 'running', { items: [1, 2, 3] });
      const w = at(plan([map(2)]), rowsOf(running));
      assert.deepEqual(starts(w.tasks), ['m[0].x', 'm[1].x']);
      const first = w.tasks.find((x) => x.key === 'm[0].x');
      assert.ok(first && first.type === 'start');
      assert.deepEqual(resolveInputs((first.node as unknown as { input: never }).input, first.scope), {
        i: 1,
      });
    });

    it('starts again a map that was marked running but died before it stored its items', () => {
      const w = at(plan([map(2)]), rowsOf(row('m', 'running')));
      assert.deepEqual(starts(w.tasks), ['m']);
      assert.equal(
        w.tasks.some((x) => x.type === 'map-finish'),
        false,
        'a map with no stored items has not done them',
      );
    });

    it('finishes with the items’ results in order once every item is done', () => {
      const w = at(
        plan([map(3)]),
        rowsOf(
          row('m', 'running', { items: [1, 2, 3] }),
          row('m[0].x', 'succeeded', 'one'),
          row('m[1].x', 'succeeded', 'two'),
          row('m[2].x', 'succeeded', 'three'),
        ),
      );
      assert.deepEqual(w.tasks, [
        { type: 'map-finish', key: 'm', node: w.tasks[0]?.node, results: ['one', 'two', 'three'] },
      ]);
    });

    it('fails the map, naming the item, when an item fails', () => {
      const w = at(
        plan([map(3)]),
        rowsOf(
          row('m', 'running', { items: [1, 2, 3] }),
          row('m[1].x', 'failed', undefined, { error: 'bad' }),
        ),
      );
      const finish = w.tasks.find((x) => x.type === 'map-finish');
      assert.ok(finish && finish.type === 'map-finish');
      assert.equal(finish.failed, 'item 1: bad');
      assert.equal(w.failed, undefined, 'the item’s failure is the map’s, not the run’s directly');
    });

    it('counts nested maps’ bodies once in a map item’s steps', () => {
      const outer = { ...map(), body: { nodes: [map(), t('y')], edges: [] } } as unknown as PlanNode;
      assert.equal(bodySize([outer]), 1 + (1 + 1) + 1);
    });
  });

  it('scopes see their own outputs before their parent’s', () => {
    const outer = new Scope({ top: true });
    outer.outputs.set('a', 'outer');
    const inner = new Scope({ item: 1 }, outer);
    assert.equal(inner.output('a'), 'outer');
    inner.outputs.set('a', 'inner');
    assert.equal(inner.output('a'), 'inner');
    assert.equal(outer.output('a'), 'outer');
  });
});
