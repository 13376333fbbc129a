import { DomainError, invalid } from '../../errors.ts';
import type { Actor } from '../workspace/actor.ts';
import { personName } from '../workspace/artifacts.ts';
import type { AutomationsContext } from './context.ts';
import { draftNotFound } from './drafts.ts';
import { queueRun } from './runs.ts';
import { runInFull } from './views.ts';

/*
 * Dry runs of a draft as it is: the draft's own plan runs once with every write simulated, as its
 * drafter, and nothing is published — no automation is made or changed, no trigger is set. The run
 * belongs to the draft version (`runs.automation_id` is null) and is read through the draft.
 */

/** The caller's own draft version; anyone else's is not found. */
async function ownVersion(ctx: AutomationsContext, actor: Actor, flowVersionId: unknown) {
  if (typeof flowVersionId !== 'string' || flowVersionId === '') throw draftNotFound();
  const version = await ctx.db
    .selectFrom('flow_versions')
    .select(['id', 'workspace_id'])
    .where('id', '=', flowVersionId)
    .where('workspace_id', '=', actor.workspaceId)
    .where('created_by', '=', actor.personId)
    .executeTakeFirst();
  if (!version) throw draftNotFound();
  return version;
}

export function draftRuns(ctx: AutomationsContext) {
  return {
    /** Queues a dry run of the draft version; it runs with the caller's rights, writes simulated. */
    async dryRun(actor: Actor, flowVersionId: unknown) {
      const version = await ownVersion(ctx, actor, flowVersionId);
      const runId = await ctx.db.transaction().execute(async (trx) =>
        queueRun(trx, {
          automation: { id: null, workspace_id: version.workspace_id, acting_id: actor.personId },
          versionId: version.id,
          cause: 'dry_run',
          dryRun: true,
          payload: { manual: true, by: await personName(trx, actor.personId) },
          requestedBy: actor.personId,
        }),
      );
      ctx.queued();
      return { flow_version_id: version.id, run_id: runId, dry_run: true as const };
    },

    /** One dry run of the caller's draft, in full (as an automation's run page shows a run). */
    async read(actor: Actor, flowVersionId: unknown, runId: unknown) {
      const version = await ownVersion(ctx, actor, flowVersionId);
      if (typeof runId !== 'string' || runId === '') throw invalid('run_id must be a string');
      const run = await runInFull(ctx.db, { draftVersionId: version.id }, runId);
      if (!run) throw new DomainError('not_found', 'Run not found');
      return run;
    },
  };
}
