import { StepError } from '../../errors.ts';
import { resolve } from '../walker.ts';
import { defineNodeKind } from './context.ts';

/** Waits a number of seconds or until an instant; a dry run passes over it. */
export const delayNode = defineNodeKind({
  kind: 'delay',
  async start(env, state, { key, node, scope }) {
    let until: number;
    if ('seconds' in node) until = Date.now() + node.seconds * 1000;
    else {
      const value = resolve(node.until, scope);
      until = typeof value === 'string' ? Date.parse(value) : Number.NaN;
      if (Number.isNaN(until))
        throw new StepError(`until must be an ISO-8601 instant (got ${JSON.stringify(value)})`);
    }
    if (state.run.dry_run) {
      const output = { resumed_at: new Date().toISOString(), skipped_in_dry_run: true };
      await env.store.finish(env.db, state, key, node.id, { status: 'skipped', output });
      return;
    }
    await env.store.write(env.db, state, key, node.id, { status: 'waiting', wait_until: until });
  },
  async check(env, state, { key, node, row }) {
    const now = Date.now();
    if (row.wait_until !== null && row.wait_until <= now)
      await env.store.finish(env.db, state, key, node.id, {
        status: 'succeeded',
        output: { resumed_at: new Date(now).toISOString() },
      });
  },
});
