import { notify } from '../../domains/activity/notify.ts';
import { checkLength } from '../limits.ts';
import { asText } from '../../flowplan/values.ts';
import { resolve } from '../walker.ts';
import { defineNodeKind, postSession } from './context.ts';
import { effectDone, effectKey, effectOf } from './effects.ts';

/** A message to the session or the creator; a write, so it is simulated in a dry run and done once. */
export const notifyNode = defineNodeKind({
  kind: 'notify',
  async start(env, state, { key, node, scope }) {
    const { run, automation } = state;
    const message = asText(resolve(node.message, scope));
    checkLength(message.length, env.limits, 'the message');
    if (run.dry_run) {
      const output = { simulated: true, would_notify: node.to ?? 'session', message };
      await env.store.finish(env.db, state, key, node.id, { status: 'simulated', output });
      return;
    }
    const effect = effectKey(run.id, key);
    const done = await effectOf(env.db, effect);
    if (done?.state === 'done') {
      await env.store.finish(env.db, state, key, node.id, { status: 'succeeded', output: done.result });
      return;
    }
    await env.db.transaction().execute(async (trx) => {
      const messageId =
        node.to === 'creator'
          ? await notify(trx, {
              workspaceId: run.workspace_id,
              personId: automation.created_by,
              kind: 'automation',
              automationId: state.automation.id,
              runId: state.run.id,
              body: `“${automation.name}” says: ${message}`,
            })
          : await postSession(trx, state, message);
      const output = { message_id: messageId };
      await effectDone(trx, run.id, effect, output);
      await env.store.finish(trx, state, key, node.id, { status: 'succeeded', output });
    });
  },
});
