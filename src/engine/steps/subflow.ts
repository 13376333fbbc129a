import { queueRun, TERMINAL_RUN } from '../../domains/automations/runs.ts';
import { subflowRefusal } from '../../domains/automations/subflows.ts';
import { LimitError, StepError } from '../../errors.ts';
import { resolveInputs } from '../walker.ts';
import { defineNodeKind } from './context.ts';

/**
 * Runs another automation's live version as a child run with input of the plan's choosing — only
 * one the parent's acting person could run directly, never one that leads back, within the depth
 * and tree caps — and waits for it to end.
 */
export const subflowNode = defineNodeKind({
  kind: 'subflow',
  async start(env, state, { key, node, scope }) {
    const { run } = state;
    if (run.subflow_depth + 1 > env.limits.subflowDepth) {
      throw new LimitError(
        `subflows may nest at most ${env.limits.subflowDepth} deep; this one would be ${run.subflow_depth + 1} deep`,
      );
    }
    await env.db.transaction().execute(async (trx) => {
      await env.store.holdLease(trx, run.id);
      const child = await trx
        .selectFrom('automations')
        .selectAll()
        .where('id', '=', node.automation_id)
        .where('workspace_id', '=', run.workspace_id)
        .executeTakeFirst();
      if (!child) throw new StepError(`automation ${node.automation_id} is not available as a subflow`);
      const existing = await trx
        .selectFrom('runs')
        .select('id')
        .where('parent_run_id', '=', run.id)
        .where('parent_node_key', '=', key)
        .executeTakeFirst();
      if (!existing) {
        const refusal = await subflowRefusal(
          trx,
          { workspaceId: run.workspace_id, automationId: run.automation_id, actingId: run.acting_id },
          child.id,
        );
        if (refusal) throw new StepError(refusal);
        const root = run.root_run_id ?? run.id;
        const tree = await trx
          .selectFrom('runs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('root_run_id', '=', root)
          .executeTakeFirstOrThrow();
        if (Number(tree.n) + 1 >= env.limits.subflowRuns) {
          throw new LimitError(
            `a run may start at most ${env.limits.subflowRuns - 1} subflow runs in all; this one would be more`,
          );
        }
        await queueRun(trx, {
          automation: child,
          versionId: child.live_version_id,
          cause: 'subflow',
          dryRun: run.dry_run === 1,
          payload: resolveInputs(node.input, scope),
          parent: { runId: run.id, nodeKey: key, rootRunId: root, subflowDepth: run.subflow_depth + 1 },
          eventDepth: run.event_depth,
        });
      }
      await env.store.write(trx, state, key, node.id, { status: 'waiting', wait_until: null });
    });
  },
  async check(env, state, { key, node }) {
    const child = await env.db
      .selectFrom('runs')
      .select(['id', 'status', 'error', 'output_json'])
      .where('parent_run_id', '=', state.run.id)
      .where('parent_node_key', '=', key)
      .executeTakeFirst();
    if (!child || !TERMINAL_RUN.has(child.status)) return;
    if (child.status === 'succeeded') {
      const output = child.output_json === null ? {} : (JSON.parse(child.output_json) as unknown);
      await env.store.finish(env.db, state, key, node.id, { status: 'succeeded', output });
    } else {
      await env.store.finish(env.db, state, key, node.id, {
        status: 'failed',
        error: `subflow run ${child.id} ${child.status}${child.error ? `: ${child.error}` : ''}`,
      });
    }
  },
});
