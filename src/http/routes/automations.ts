import * as contract from '../../contract/automations.ts';
import { awaitingApprovals } from '../../contract/people.ts';
import { triggerText } from '../../domains/automations/automations.ts';
import { previewTrigger } from '../../flowplan/schedule-preview.ts';
import { DomainError, invalid } from '../../errors.ts';
import { defineRoute } from '../route.ts';

const READ = ['automations:read'] as const;
const WRITE = ['automations:write'] as const;

/** The automations pages: the list, one automation with its runs and plan versions, and its controls. */
export const automationRoutes = [
  defineRoute({
    ...contract.listAutomations,
    description: 'the automations the caller can see, newest first',
    scopes: READ,
    handler: async ({ services, actor }) => {
      const list = await services.automations.list(actor, { limit: 200 });
      const last = await services.automationViews.lastRuns(
        actor,
        list.automations.map((a) => a.automation_id),
      );
      return {
        ...list,
        automations: list.automations.map((a) => {
          const run = last.get(a.automation_id);
          return { ...a, trigger_text: triggerText(a.trigger), ...(run ? { last_run: run } : {}) };
        }),
      };
    },
  }),
  // Before `/automations/:id`, which would otherwise take `trigger-preview` for an id.
  defineRoute({
    ...contract.triggerPreview,
    description: 'what a trigger (query trigger, as JSON) would mean: in words, with its next five firings',
    scopes: READ,
    handler: async ({ services, actor, query }) => {
      if (query.trigger === undefined) throw invalid('trigger is required: the trigger to preview, as JSON');
      // Event triggers name providers connected for this person, as publish checks them.
      return previewTrigger(query.trigger, await services.automations.catalogueFor(actor), new Date());
    },
  }),
  defineRoute({
    ...contract.readAutomation,
    description: 'one automation with its plan, latest runs and next firings',
    scopes: READ,
    handler: async ({ services, actor, params }) => {
      const args = { automation_id: params.id };
      const detail = await services.automations.read(actor, {
        ...args,
        include_plan: true,
        include_runs: true,
      });
      return {
        ...detail,
        runs: detail.runs ?? [],
        runs_truncated: detail.runs_truncated ?? false,
        schedule: await services.automationViews.schedule(actor, args),
      };
    },
  }),
  defineRoute({
    ...contract.readRun,
    description: 'one run of an automation in full: each step’s status, attempts, timing, error and output',
    scopes: READ,
    handler: async ({ services, actor, params }) => {
      const run = await services.automationViews.inspectRun(actor, {
        automation_id: params.id,
        run_id: params.run_id,
      });
      if (!run) throw new DomainError('not_found', 'Run not found');
      return run;
    },
  }),
  defineRoute({
    ...contract.rerunPreview,
    description: 'what a retry from the failed step and a replay with the same input of a run would do',
    scopes: READ,
    handler: ({ services, actor, params }) =>
      services.reruns.preview(actor, { automation_id: params.id, run_id: params.run_id }),
  }),
  defineRoute({
    ...contract.startRerun,
    description: 'retry a failed run from its failed step, or replay a run with the same input',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"mode": "retry" | "replay"}',
    handler: ({ services, actor, params, body }) =>
      services.reruns.rerun(actor, { automation_id: params.id, run_id: params.run_id, mode: body.mode }),
  }),
  defineRoute({
    ...contract.planVersions,
    description: 'the versions of an automation’s plan, newest first, each with what changed',
    scopes: READ,
    handler: ({ services, actor, params }) =>
      services.automationViews.versions(actor, { automation_id: params.id }),
  }),
  defineRoute({
    ...contract.setEnabled,
    description: 'pause (enabled false) or resume (enabled true) an automation',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"enabled": true | false}',
    handler: ({ services, actor, params, body }) =>
      services.automations.setEnabled(actor, { automation_id: params.id, enabled: body.enabled }),
  }),
  defineRoute({
    ...contract.startRun,
    description: 'run an automation now, or dry-run it (writes simulated)',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"dry_run": true | false}',
    handler: ({ services, actor, params, body }) =>
      services.automations.run(actor, { automation_id: params.id, dry_run: body.dry_run }),
  }),
  defineRoute({
    ...contract.draftVersion,
    description: 'check a plan with the validator and store it as the automation’s next draft',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"plan_json": {...}, "ask": "...", "write_approval"?: "required" | "automatic"}',
    handler: ({ services, actor, params, body }) =>
      services.automations.draft(actor, { ...body, automation_id: params.id }),
  }),
  defineRoute({
    ...contract.publishVersion,
    description: 'publish a draft (or the live version with a new trigger and settings)',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"flow_version_id": "...", "trigger": {...}, ...}',
    handler: ({ services, actor, params, body }) =>
      services.automations.publish(actor, { ...body, automation_id: params.id }),
  }),
  defineRoute({
    ...awaitingApprovals,
    description: 'approvals waiting on the caller',
    scopes: READ,
    handler: async ({ services, actor }) => ({ approvals: await services.automationViews.awaiting(actor) }),
  }),
];
