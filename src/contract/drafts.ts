import { z } from 'zod';
import { runInspection } from './automations.ts';
import type { Trigger } from '../flowplan/triggers.ts';
import { endpoint } from './endpoint.ts';

/*
 * Drafts in the app: made from a sentence (`Describe it`) or a template, listed with who made
 * them, opened, edited, dry-run and published through the same domain calls as the tools.
 */

const checked = <T>() => z.custom<T>();
const writeApproval = z.enum(['required', 'automatic']);

export const draftRow = z.object({
  flow_version_id: z.string(),
  flow_id: z.string(),
  version: z.number(),
  name: z.string(),
  ask: z.string(),
  write_approval: writeApproval,
  steps: z.array(z.string()),
  writes: z.array(z.string()),
  author: z.string(),
  made_by: z.enum(['person', 'agent']),
  /** The agent of Tandem that drafted it (`Builder`). */
  agent: z.string().optional(),
  created_at: z.string(),
});
export type DraftRow = z.infer<typeof draftRow>;

export const draftDetail = draftRow.extend({
  plan_json: z.record(z.string(), z.unknown()),
  /** The trigger the draft proposes (a template's). */
  trigger: z.custom<Trigger>().optional(),
  /** Set once a dry run published it paused. */
  automation: z.object({ automation_id: z.string(), enabled: z.boolean(), live: z.boolean() }).optional(),
});
export type DraftDetail = z.infer<typeof draftDetail>;

export const listDrafts = endpoint({
  method: 'GET',
  path: '/drafts',
  output: z.object({ drafts: z.array(draftRow) }),
});

export const readDraft = endpoint({
  method: 'GET',
  path: '/drafts/:id',
  output: draftDetail,
});

const drafted = z.object({ flow_version_id: z.string() });

/** The draft's next version: the plan as the forms or the JSON left it. */
export const redraft = endpoint({
  method: 'POST',
  path: '/drafts/:id/versions',
  body: z.object({
    plan_json: z.unknown(),
    ask: checked<string>(),
    write_approval: checked<z.infer<typeof writeApproval>>().optional(),
  }),
  output: drafted,
});

const publishBody = z.object({
  trigger: checked<Trigger>(),
  name: checked<string>(),
  scope: checked<'personal' | 'workspace'>().optional(),
  notify: checked<'off' | 'problems' | 'everyRun'>().optional(),
  cooldown_s: checked<number>().optional(),
});

export const publishDraft = endpoint({
  method: 'POST',
  path: '/drafts/:id/publish',
  body: publishBody,
  output: z.object({
    automation_id: z.string(),
    name: z.string(),
    version: z.number(),
    enabled: z.boolean(),
  }),
});

/** A dry run of the draft as it is: nothing is published, the run belongs to the draft. */
export const dryRunDraft = endpoint({
  method: 'POST',
  path: '/drafts/:id/dry-run',
  body: z.object({}),
  output: z.object({ flow_version_id: z.string(), run_id: z.string(), dry_run: z.literal(true) }),
});

/** One dry run of a draft in full, as an automation's run is read. */
export const readDraftRun = endpoint({
  method: 'GET',
  path: '/drafts/:id/runs/:run_id',
  output: runInspection,
});

export const templateField = z.object({
  name: z.string(),
  label: z.string(),
  kind: z.enum(['document', 'page', 'repo', 'channel', 'email', 'text']),
});
export type TemplateField = z.infer<typeof templateField>;

export const listTemplates = endpoint({
  method: 'GET',
  path: '/automation-templates',
  output: z.object({
    templates: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        description: z.string(),
        fields: z.array(templateField),
        trigger: z.record(z.string(), z.unknown()),
      }),
    ),
    /** Whether `Describe it` can draft (a model is configured). */
    model_configured: z.boolean(),
  }),
});

export const draftFromTemplate = endpoint({
  method: 'POST',
  path: '/drafts/from-template',
  body: z.object({
    template_id: checked<string>(),
    values: checked<Record<string, string>>(),
    words: checked<Record<string, string>>().optional(),
    timezone: checked<string>().optional(),
  }),
  output: drafted,
});

/** A drafting by @Builder from a sentence: under way, done with its draft, or failed with why. */
const drafting = z.discriminatedUnion('status', [
  z.object({ request_id: z.string(), status: z.literal('drafting') }),
  z.object({ request_id: z.string(), status: z.literal('drafted'), flow_version_id: z.string() }),
  z.object({ request_id: z.string(), status: z.literal('failed'), error: z.string() }),
]);

/** Starts @Builder drafting from a sentence; answers at once (read the outcome with describeStatus). */
export const describeDraft = endpoint({
  method: 'POST',
  path: '/drafts/describe',
  body: z.object({ sentence: checked<string>() }),
  output: drafting,
});

export const describeStatus = endpoint({
  method: 'GET',
  path: '/drafts/describe/:id',
  output: drafting,
});

const schema = z.record(z.string(), z.unknown());

/** The capabilities a person may use with their schemas, and the node kinds' shapes: what step forms are built from. */
export const listCapabilities = endpoint({
  method: 'GET',
  path: '/automation-capabilities',
  output: z.object({
    namespaces: z.array(
      z.object({
        namespace: z.string(),
        connected: z.boolean(),
        capabilities: z.array(
          z.object({
            key: z.string(),
            kind: z.enum(['read', 'write']),
            describe: z.string(),
            input: schema.optional(),
            output: schema.optional(),
          }),
        ),
      }),
    ),
    /** Each node kind's shape and each transform op's input, args and output, as describe_capabilities renders them. */
    node_shapes: z.record(z.string(), schema),
    transform_ops: z.record(z.string(), schema),
  }),
});
