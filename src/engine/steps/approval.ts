import { approvalOfStep, requestApproval, timeOutApproval } from '../../domains/automations/approvals.ts';
import { DEFAULT_APPROVAL_TIMEOUT_S } from '../../flowplan/plan.ts';
import { checkLength } from '../limits.ts';
import { asText } from '../../flowplan/values.ts';
import { resolve } from '../walker.ts';
import { defineNodeKind } from './context.ts';

/**
 * An approval step: it asks for the approval (a card in the session, its approvers told), then
 * waits. A person's decision is recorded on the approval (`decideApproval`) and wakes the run;
 * looking at the waiting step then ends it — approved, rejected (the run is cancelled) or, past
 * its time, timed out. What each of those means lives in `src/domains/automations/approvals.ts`;
 * this step only stores how it ended.
 */
export const approvalNode = defineNodeKind({
  kind: 'approval',
  async start(env, state, { key, node, scope }) {
    const { run, automation } = state;
    const message = asText(resolve(node.message, scope));
    checkLength(message.length, env.limits, 'the message');
    if (run.dry_run) {
      const output = { approved: true, by: 'dry run', at: new Date().toISOString() };
      await env.store.finish(env.db, state, key, node.id, { status: 'simulated', output });
      return;
    }
    const expires = Date.now() + (node.timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S) * 1000;
    await env.db.transaction().execute(async (trx) => {
      await requestApproval(trx, {
        run,
        automation,
        nodeKey: key,
        nodeId: node.id,
        message,
        approvers: node.approvers,
        expiresAt: expires,
      });
      await env.store.write(trx, state, key, node.id, { status: 'waiting', wait_until: expires });
    });
  },
  async check(env, state, { key, node, row }) {
    const found = await approvalOfStep(env.db, state.run.id, key);
    if (!found) return;
    if (found.end) {
      await env.store.finish(env.db, state, key, node.id, found.end);
      return;
    }
    // The step's own wait is the approval's deadline.
    const now = Date.now();
    if (found.approval.status !== 'pending' || row.wait_until === null || row.wait_until > now) return;
    await env.db.transaction().execute(async (trx) => {
      const end = await timeOutApproval(
        trx,
        found.approval,
        state.automation.session_id,
        node.on_timeout,
        now,
      );
      if (end) await env.store.finish(trx, state, key, node.id, end);
    });
  },
});
