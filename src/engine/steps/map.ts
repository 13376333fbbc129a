import { MAX_MAP_ITEMS } from '../../flowplan/plan.ts';
import { checkLength } from '../limits.ts';
import { LimitError, StepError } from '../../errors.ts';
import { bodySize, resolve } from '../walker.ts';
import { defineNodeKind } from './context.ts';

/**
 * Runs its body once per item (at most `concurrency` items at a time). Starting it stores the items;
 * the walker then runs the items' bodies and ends the map with their results. A map whose items
 * would take the run past its step-execution cap fails before it starts.
 */
export const mapNode = defineNodeKind({
  kind: 'map',
  async start(env, state, { key, node, scope }) {
    const items = resolve(node.items, scope);
    if (!Array.isArray(items))
      throw new StepError(`items must be an array (got ${items === null ? 'null' : typeof items})`);
    if (items.length > MAX_MAP_ITEMS)
      throw new StepError(`items has ${items.length} entries; a map takes at most ${MAX_MAP_ITEMS}`);
    const steps = bodySize(node.body.nodes);
    const planned = state.nodes + items.length * steps;
    if (planned > env.limits.nodeExecutions) {
      throw new LimitError(
        `the map would take the run to ${planned} step executions (${items.length} items × ${steps} steps, nested maps counted once); a run may execute at most ${env.limits.nodeExecutions}`,
      );
    }
    const json = JSON.stringify({ items });
    checkLength(json.length, env.limits, 'the map’s items');
    // Its items are work to do, not a result: they are stored, but not counted as the map's output.
    await env.store.write(env.db, state, key, node.id, { status: 'running', output_json: json }, { items });
  },
});
