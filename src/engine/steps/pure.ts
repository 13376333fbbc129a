import { checkLength } from '../limits.ts';
import { compare, transform } from '../../flowplan/values.ts';
import { resolve, resolveInputs } from '../walker.ts';
import { defineNodeKind } from './context.ts';

/** A transform op over its resolved inputs: no I/O; text it builds is measured before it is built. */
export const transformNode = defineNodeKind({
  kind: 'transform',
  pure: true,
  async start(env, state, { key, node, scope, begun }) {
    const output = transform(node, resolveInputs(node.input, scope), new Date(), (length, what) =>
      checkLength(length, env.limits, what),
    );
    await env.store.finish('staged', state, key, node.id, { status: 'succeeded', output, begun });
  },
});

/** A condition over two bound values; its successors run on the side it chose. */
export const branchNode = defineNodeKind({
  kind: 'branch',
  pure: true,
  async start(env, state, { key, node, scope, begun }) {
    const c = node.condition;
    const value = compare(c.op, resolve(c.left, scope), 'right' in c ? resolve(c.right, scope) : undefined);
    await env.store.finish('staged', state, key, node.id, { status: 'succeeded', output: { value }, begun });
  },
});
