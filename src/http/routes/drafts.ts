import * as contract from '../../contract/drafts.ts';
import { templates, templateSummary } from '../../domains/automations/templates.ts';
import { defineRoute } from '../route.ts';

const READ = ['automations:read'] as const;
const WRITE = ['automations:write'] as const;

/** Drafts in the app: from a sentence or a template, listed, opened, edited, dry-run and published. */
export const draftRoutes = [
  defineRoute({
    ...contract.listDrafts,
    description: 'the caller’s unpublished drafts, newest first, with who made each',
    scopes: READ,
    handler: ({ services, actor }) => services.drafts.list(actor),
  }),
  defineRoute({
    ...contract.listTemplates,
    description: 'the automation templates, with the fields each asks for',
    scopes: READ,
    handler: async ({ services, actor }) => ({
      templates: templates().map(templateSummary),
      model_configured: await services.describeIt.modelConfigured(actor),
    }),
  }),
  defineRoute({
    ...contract.listCapabilities,
    description: 'the capabilities the caller may use with their schemas, and the node kinds’ shapes',
    scopes: READ,
    handler: async ({ services, actor }) => {
      const described = await services.automations.describe(actor, {});
      return {
        namespaces: described.namespaces,
        node_shapes: described.node_shapes,
        transform_ops: described.transform_ops,
      };
    },
  }),
  defineRoute({
    ...contract.draftFromTemplate,
    description: 'draft an automation from a template with its fields filled in',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"template_id": "...", "values": {"field": "value"}, "timezone"?: "Europe/Berlin"}',
    handler: async ({ services, actor, body }) => {
      const draft = await services.draftActions.fromTemplate(actor, body);
      return { flow_version_id: draft.flow_version_id };
    },
  }),
  defineRoute({
    ...contract.describeDraft,
    description: '@Builder starts drafting an automation from a sentence (needs a model); answers at once',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"sentence": "..."}',
    handler: async ({ services, actor, body }) => services.describeIt.start(actor, body.sentence),
  }),
  defineRoute({
    ...contract.describeStatus,
    description:
      'where a drafting from a sentence is: drafting, drafted (with its draft) or failed (with why)',
    scopes: READ,
    handler: async ({ services, actor, params }) => services.describeIt.status(actor, params.id),
  }),
  defineRoute({
    ...contract.readDraft,
    description: 'one of the caller’s drafts with its plan and the trigger it proposes',
    scopes: READ,
    handler: ({ services, actor, params }) => services.drafts.read(actor, params.id),
  }),
  defineRoute({
    ...contract.redraft,
    description: 'store an edited plan as the draft’s next version (checked by the validator)',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"plan_json": {...}, "ask": "...", "write_approval"?: "required" | "automatic"}',
    handler: async ({ services, actor, params, body }) => {
      const draft = await services.drafts.read(actor, params.id);
      const target = draft.automation
        ? { automation_id: draft.automation.automation_id }
        : { flow_id: draft.flow_id };
      const next = await services.automations.draft(actor, { ...body, ...target });
      return { flow_version_id: next.flow_version_id };
    },
  }),
  defineRoute({
    ...contract.publishDraft,
    description: 'publish a draft with a trigger, name and scope (as edit_automation publish)',
    scopes: WRITE,
    bodyHint: 'Send JSON: {"trigger": {...}, "name": "...", "scope"?: "personal" | "workspace"}',
    handler: ({ services, actor, params, body }) => services.draftActions.publish(actor, params.id, body),
  }),
  defineRoute({
    ...contract.dryRunDraft,
    description: 'dry-run a draft as it is, every write simulated; nothing is published',
    scopes: WRITE,
    bodyHint: 'Send JSON: {}',
    handler: ({ services, actor, params }) => services.automations.draftRuns.dryRun(actor, params.id),
  }),
  defineRoute({
    ...contract.readDraftRun,
    description: 'one dry run of a draft in full: each step’s status, attempts, timing, error and output',
    scopes: READ,
    handler: ({ services, actor, params }) =>
      services.automations.draftRuns.read(actor, params.id, params.run_id),
  }),
];
