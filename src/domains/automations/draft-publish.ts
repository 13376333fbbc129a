import type { Actor } from '../workspace/actor.ts';
import type { AutomationsService } from './automations.ts';
import type { DraftsService } from './drafts.ts';
import { fillTemplate } from './templates.ts';

/** What the app sends to publish or dry-run a draft: edit_automation's publish arguments. */
export interface DraftPublishArgs {
  trigger?: unknown;
  name?: unknown;
  description?: unknown;
  scope?: unknown;
  notify?: unknown;
  cooldown_s?: unknown;
}

/**
 * A person's drafts in the app, through the same calls as the tools: drafting from a template
 * (draft_automation) and publishing (edit_automation publish). A dry run publishes nothing: it
 * runs the draft as it is (`draft-runs.ts`).
 */
export function draftActions(automations: AutomationsService, drafts: DraftsService) {
  /** Publishes the draft (into its automation when it is a version of one). */
  async function publish(actor: Actor, flowVersionId: unknown, args: DraftPublishArgs, enabled?: boolean) {
    const draft = await drafts.read(actor, flowVersionId);
    const into = draft.automation?.automation_id;
    return automations.publish(actor, {
      ...args,
      flow_version_id: draft.flow_version_id,
      ...(into ? { automation_id: into } : {}),
      ...(enabled === undefined ? {} : { enabled }),
    });
  }

  return {
    /** Drafts a template with its fields filled in; the draft proposes the template's trigger. */
    async fromTemplate(
      actor: Actor,
      args: { template_id?: unknown; values?: unknown; words?: unknown; timezone?: unknown },
    ) {
      const filled = fillTemplate(args.template_id, args);
      return automations.draft(
        actor,
        { plan_json: filled.plan_json, ask: filled.ask, write_approval: filled.write_approval },
        { trigger: filled.trigger },
      );
    },

    /** Makes the draft live and enabled with the trigger and settings given. */
    publish: (actor: Actor, flowVersionId: unknown, args: DraftPublishArgs) =>
      publish(actor, flowVersionId, args, true),
  };
}

export type DraftActions = ReturnType<typeof draftActions>;
