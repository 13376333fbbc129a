import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { decideApproval } from './approvals.ts';
import { approvalCard, capabilityLookup } from './approval-cards.ts';
import { automationsContext, type AutomationOptions } from './context.ts';
import { automationControls } from './controls.ts';
import { draftRuns } from './draft-runs.ts';
import { draftVersion, type DraftArgs, type DraftOptions } from './draft-version.ts';
import { publish, type PublishArgs } from './publish.ts';
import { runProgress } from './run-progress.ts';
import { automationQueries } from './queries.ts';
import { sessionView } from './session-view.ts';

export type { AutomationOptions, Notify, Scope } from './context.ts';
export type { StoredSummary } from './checks.ts';
export { REPEATED_FAILURES, type DegradedReason } from './queries.ts';
export { triggerText } from '../../flowplan/triggers.ts';

/**
 * The automations service the tools, the JSON API, the CLI and the engine call: drafting and
 * publishing plans (`drafts.ts`, `publish.ts`), starting and pausing runs (`controls.ts`), reading
 * automations (`queries.ts`), their sessions (`session-view.ts`) and deciding approvals
 * (`approvals.ts`). Who may do what is asked of `../policies/`.
 */
export function automationsService(deps: Deps, options: AutomationOptions = {}) {
  const ctx = automationsContext(deps, options);
  const controls = automationControls(ctx);
  const queries = automationQueries(ctx);
  const capabilityOf = capabilityLookup(ctx.plugins);

  return {
    plugins: ctx.plugins,
    catalogueFor: ctx.catalogueFor,

    receiveEvent: controls.receiveEvent,
    onQueued: controls.onQueued,
    run: controls.run,

    /** Where a run stands, for the person who started it (an MCP task follows it). */
    runProgress: (actor: Actor, runId: unknown) => runProgress(ctx, actor, runId, capabilityOf),

    /** A person's decision on an approval step; only the step's approvers may decide it. */
    async decideApproval(actor: Actor, approvalId: unknown, input: { decision?: unknown; note?: unknown }) {
      const decided = await decideApproval(ctx.db, actor, approvalId, input);
      ctx.queued();
      return decided;
    },

    /** An automation's session, for its participants and everyone who can open the automation. */
    session: (actor: Actor, sessionId: unknown) => sessionView(ctx.db, actor, sessionId, capabilityOf),

    /** One approval's card with the writes it lets happen, for anyone who may see the approval. */
    approvalCard: (actor: Actor, approvalId: unknown) =>
      approvalCard(ctx.db, actor, approvalId, capabilityOf),

    describe: queries.describe,

    /** Checks a plan and stores it as a draft version (of a new flow, or of `automation_id`). */
    draft: (actor: Actor, args: DraftArgs, options: DraftOptions = {}) =>
      draftVersion(ctx, actor, args, options),

    /** Dry runs of a draft as it is, which publish nothing (`draft-runs.ts`). */
    draftRuns: draftRuns(ctx),

    /** Makes a draft live with a trigger, or changes only the trigger of the live version. */
    publish: (actor: Actor, args: PublishArgs) => publish(ctx, actor, args),

    setEnabled: controls.setEnabled,
    list: queries.list,
    read: queries.read,
  };
}

export type AutomationsService = ReturnType<typeof automationsService>;
