import { z } from 'zod';
import { triggerText } from '../../domains/automations/automations.ts';
import type { Trigger } from '../../flowplan/triggers.ts';
import { DomainError } from '../../errors.ts';
import { defineTool, READ_ONLY, specChecked, WRITE } from '../tool.ts';

const json = z.record(z.string(), z.unknown());
const trigger = json.describe('A trigger object; describe_capabilities gives its shape (trigger_input).');
const timestamp = z.string().describe('An ISO-8601 instant (UTC).');
const degraded = z
  .enum([
    'connector_disconnected',
    'personal_connector_unavailable',
    'subflow_unavailable',
    'model_unavailable',
    'repeated_failures',
  ])
  .describe('Why the automation cannot run as published right now.');
const scope = z.enum(['personal', 'workspace']);
const planError = z.object({
  rule: z.string(),
  path: z.array(z.union([z.string(), z.number()])),
  node_id: z.string().optional(),
  message: z.string(),
});

function when(t: Trigger, enabled: boolean, next: string | undefined): string {
  if (!enabled) return 'paused';
  return next ? `enabled, next run ${next}` : `enabled, runs ${triggerText(t)}`;
}

export const listAutomations = defineTool({
  name: 'list_automations',
  title: 'List automations',
  description: "Automations you can see (yours and the workspace's), newest first.",
  scope: 'automations:read',
  annotations: READ_ONLY,
  input: z.object({
    limit: specChecked(
      {
        type: 'integer',
        minimum: 1,
        maximum: 200,
        description: 'Default 50.',
      },
      { clamped: true },
    ),
  }),
  output: z.object({
    automations: z.array(
      z.object({
        automation_id: z.string(),
        name: z.string(),
        enabled: z.boolean(),
        degraded_reason: degraded.optional(),
        trigger,
        scope,
        can_control: z.boolean(),
        version: z.number().int().optional(),
        step_count: z.number().int().optional(),
        namespaces: z.array(z.string()).optional(),
        session_id: z.string().optional(),
        next_fire_at: timestamp.optional(),
        last_fired_at: timestamp.optional(),
        consecutive_failures: z.number().int(),
        created_at: timestamp,
        url: z.string().optional(),
      }),
    ),
    truncated: z.boolean(),
  }),
  async run({ actor, services }, args) {
    const result = await services.automations.list(actor, args);
    const text =
      result.automations.length === 0
        ? 'No automations found.'
        : result.automations
            .map((a) => {
              const state = when(a.trigger as Trigger, a.enabled, a.next_fire_at);
              const degradedText = a.degraded_reason ? `, degraded: ${a.degraded_reason}` : '';
              return `${a.name} — ${a.scope}, version ${a.version}, ${state}${degradedText} (automation_id: ${a.automation_id})`;
            })
            .join('\n') + (result.truncated ? '\nMore automations exist; raise limit to see them.' : '');
    return { structured: result, text };
  },
});

const runRecord = z.object({
  run_id: z.string(),
  status: z.string(),
  dry_run: z.boolean(),
  cause: z.string(),
  error: z.string().optional(),
  queued_at: timestamp.optional(),
  started_at: timestamp.optional(),
  finished_at: timestamp.optional(),
});

export const readAutomation = defineTool({
  name: 'read_automation',
  title: 'Read automation',
  description:
    'One automation: ask, steps, writes, trigger, state and live flow_version_id. Options add the FlowPlan, the latest 20 runs, or one run with its nodes.',
  scope: 'automations:read',
  annotations: READ_ONLY,
  input: z.object({
    automation_id: specChecked({ type: 'string' }, { required: true }),
    include_plan: specChecked({
      type: 'boolean',
    }),
    include_runs: specChecked({ type: 'boolean' }),
    run_id: specChecked({ type: 'string' }),
  }),
  output: z.object({
    automation_id: z.string(),
    name: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    ask: z.string(),
    steps: z.array(z.string()),
    writes: z.array(z.string()),
    namespaces: z.array(z.string()),
    connectors: z.array(z.string()),
    personal_connectors: z.array(z.string()),
    trigger,
    scope,
    enabled: z.boolean(),
    degraded_reason: degraded.optional(),
    can_control: z.boolean(),
    created_by: z.string().optional(),
    version: z.number().int(),
    flow_version_id: z.string(),
    write_approval: z.enum(['required', 'automatic']),
    notify: z.enum(['off', 'problems', 'everyRun']),
    cooldown_s: z.number().int(),
    session_id: z.string().optional(),
    url: z.string().optional(),
    next_fire_at: timestamp.optional(),
    last_fired_at: timestamp.optional(),
    consecutive_failures: z.number().int(),
    created_at: timestamp,
    plan_json: json.optional(),
    runs: z.array(runRecord).optional(),
    runs_truncated: z.boolean().optional(),
    run: z
      .object({
        ...runRecord.shape,
        nodes: z.array(
          z.object({
            node_id: z.string(),
            status: z.string(),
            attempt: z.number().int(),
            error: z.string().optional(),
          }),
        ),
        output: z.unknown().optional(),
      })
      .nullable()
      .optional(),
  }),
  async run({ actor, services }, args) {
    const a = await services.automations.read(actor, args);
    const lines = [
      `# ${a.name} (automation_id: ${a.automation_id})`,
      `${a.scope} automation, version ${a.version} (flow_version_id: ${a.flow_version_id}), ${when(a.trigger as Trigger, a.enabled, a.next_fire_at)}${a.degraded_reason ? `, degraded: ${a.degraded_reason}` : ''}.`,
      `Trigger: runs ${triggerText(a.trigger as Trigger)}. Writes: ${a.writes.length ? a.writes.join(', ') : 'none'}${a.writes.length ? ` (approval ${a.write_approval})` : ''}.`,
      `Ask: ${a.ask}`,
      'Steps:',
      ...a.steps.map((s) => `  ${s}`),
    ];
    if (!a.can_control) lines.push('You can read this automation but not change it.');
    if (a.runs) lines.push(a.runs.length ? `Runs: ${a.runs.length}` : 'No runs yet.');
    if (a.run === null) lines.push('That run is not a run of this automation.');
    if (a.plan_json) lines.push('Plan:', JSON.stringify(a.plan_json, null, 2));
    return { structured: a, text: lines.join('\n') };
  },
});

export const describeCapabilities = defineTool({
  name: 'describe_capabilities',
  title: 'Describe automation capabilities',
  description:
    "What a FlowPlan may contain, with each namespace's capabilities and their schemas. Past ~90 KB the last namespaces lose schemas (schemas_dropped): ask for them by namespaces.",
  scope: 'automations:read',
  annotations: READ_ONLY,
  input: z.object({
    namespaces: specChecked(
      {
        type: 'array',
        items: { type: 'string' },
      },
      { expects: 'an array of namespace names such as ["documents", "github"]' },
    ),
    include_schemas: specChecked({
      type: 'boolean',
      description: 'Default true.',
    }),
  }),
  output: z.object({
    plan_version: z.literal(1),
    max_nodes: z.number().int(),
    connectors: z.array(
      z.object({
        provider: z.string(),
        name: z.string(),
        personal: z.boolean(),
        namespace: z.string(),
        connected: z.boolean(),
      }),
    ),
    node_shapes: json,
    transform_ops: json,
    bindings: json,
    trigger_input: json,
    write_approval: json,
    plan_schema: json,
    trigger_events: z.record(z.string(), z.array(z.string())),
    namespaces: z.array(
      z.object({
        namespace: z.string(),
        connected: z.boolean(),
        events: z.array(z.string()).optional(),
        capabilities: z.array(
          z.object({
            key: z.string(),
            kind: z.enum(['read', 'write']),
            describe: z.string(),
            large: z.boolean().optional(),
            async: z.boolean().optional(),
            input: json.optional(),
            output: json.optional(),
          }),
        ),
      }),
    ),
    truncated: z.boolean(),
    schemas_dropped: z.array(z.string()).optional(),
  }),
  async run({ actor, services }, args) {
    const result = await services.automations.describe(actor, args);
    return { structured: result, text: JSON.stringify(result) };
  },
});

const draftOutput = z.object({
  kind: z.enum(['plan', 'failed']),
  flow_version_id: z.string().optional(),
  flow_id: z.string().optional(),
  version: z.number().int().optional(),
  automation_id: z.string().optional(),
  ask: z.string().optional(),
  steps: z.array(z.string()).optional(),
  writes: z.array(z.string()).optional(),
  namespaces: z.array(z.string()).optional(),
  connectors: z.array(z.string()).optional(),
  personal_connectors: z.array(z.string()).optional(),
  write_approval: z.enum(['required', 'automatic']).optional(),
  errors: z.array(planError).optional(),
});

export const draftAutomation = defineTool({
  name: 'draft_automation',
  title: 'Draft automation',
  description:
    'Check a FlowPlan: store it as a draft to publish with edit_automation, or list every error (kind "failed"). Writes need an approval node upstream unless write_approval is "automatic".',
  scope: 'automations:write',
  annotations: WRITE,
  input: z.object({
    plan_json: specChecked(
      { type: 'object', description: 'FlowPlan, planVersion 1.' },
      // Any value that is not a valid plan is answered as one: kind "failed" with its errors.
      { required: true, anyValue: true },
    ),
    ask: specChecked(
      {
        type: 'string',
        description: 'The request, in one sentence.',
      },
      { required: true },
    ),
    write_approval: specChecked({
      type: 'string',
      enum: ['required', 'automatic'],
      description: 'Default required.',
    }),
    automation_id: z.string().optional().describe('Draft its next version.'),
  }),
  output: draftOutput,
  async run({ actor, services }, args) {
    const draft = await services.automations.draft(actor, args);
    const text = [
      `Stored draft version ${draft.version} (flow_version_id: ${draft.flow_version_id}, flow_id: ${draft.flow_id}).`,
      'Steps:',
      ...draft.steps.map((s) => `  ${s}`),
      `Writes: ${draft.writes.length ? `${draft.writes.join(', ')} (approval ${draft.write_approval})` : 'none'}.`,
      `Publish it with edit_automation action "publish", this flow_version_id and a trigger${draft.automation_id ? ` and automation_id ${draft.automation_id}` : ' and a name'}.`,
    ].join('\n');
    return { structured: draft, text };
  },
});

export const editAutomation = defineTool({
  name: 'edit_automation',
  title: 'Publish, run or pause automation',
  description:
    'publish a draft with a trigger (new automation needs name), set_enabled to pause or resume, or run now (dry_run simulates writes). Needs its creator, or an admin if workspace-wide.',
  scope: 'automations:write',
  annotations: WRITE,
  input: z.object({
    action: specChecked({ type: 'string', enum: ['publish', 'run', 'set_enabled'] }, { required: true }),
    automation_id: specChecked({
      type: 'string',
      description: 'Required except to publish a new one.',
    }),
    flow_version_id: specChecked({
      type: 'string',
      description: 'publish: the draft (or live version: trigger only).',
    }),
    trigger: specChecked({
      type: 'object',
      description: 'publish: see trigger_input.',
    }),
    name: specChecked({ type: 'string' }),
    description: specChecked({ type: 'string' }),
    tags: specChecked(
      { type: 'array', items: { type: 'string' } },
      { expects: 'a list of non-empty strings of at most 50 characters' },
    ),
    scope: specChecked({
      type: 'string',
      enum: ['personal', 'workspace'],
      description: 'Default personal; workspace is admins only.',
    }),
    notify: specChecked({
      type: 'string',
      enum: ['off', 'problems', 'everyRun'],
      description: 'Default problems.',
    }),
    cooldown_s: specChecked(
      {
        type: 'integer',
        minimum: 0,
        description: 'Seconds between event runs.',
      },
      { expects: 'a whole number of seconds from 0 to 2592000' },
    ),
    enabled: specChecked({
      type: 'boolean',
      description: 'Required for set_enabled.',
    }),
    dry_run: specChecked({ type: 'boolean' }),
  }),
  output: z.object({
    action: z.enum(['publish', 'run', 'set_enabled']).optional(),
    automation_id: z.string().optional(),
    name: z.string().optional(),
    version: z.number().int().optional(),
    enabled: z.boolean().optional(),
    session_id: z.string().optional(),
    url: z.string().optional(),
    next_fire_at: timestamp.optional(),
    dry_run: z.boolean().optional(),
    run_id: z.string().optional(),
    kind: z.literal('failed').optional(),
    errors: z.array(planError).optional(),
  }),
  async run({ actor, services }, args) {
    switch (args.action) {
      case 'publish': {
        const r = await services.automations.publish(actor, args);
        const state = r.enabled
          ? `enabled${r.next_fire_at ? `; next run ${r.next_fire_at}` : ''}`
          : 'paused; enable it with set_enabled when ready';
        return {
          structured: r,
          text: `Published ${r.name} (automation_id: ${r.automation_id}) at version ${r.version}; it is ${state}. Its session is ${r.session_id}: ${r.url}`,
        };
      }
      case 'set_enabled': {
        const r = await services.automations.setEnabled(actor, args);
        const state = r.enabled
          ? `enabled${r.next_fire_at ? `; next run ${r.next_fire_at}` : ''}`
          : 'paused: its triggers start nothing until it is enabled again';
        return { structured: r, text: `${r.name} is now ${state}.` };
      }
      case 'run': {
        const r = await services.automations.run(actor, args);
        return {
          structured: r,
          text: `${r.dry_run ? 'Dry run' : 'Run'} ${r.run_id} of ${r.automation_id} is queued${r.dry_run ? '; every write is simulated' : ''}. Read it with read_automation and run_id ${r.run_id}.`,
        };
      }
      default:
        throw new DomainError('invalid_argument', 'action must be publish, run or set_enabled');
    }
  },
});

export const automationTools = [
  listAutomations,
  readAutomation,
  describeCapabilities,
  draftAutomation,
  editAutomation,
];
