import { z } from 'zod';
import { triggerText } from '../../domains/automations/automations.ts';
import type { Trigger } from '../../flowplan/triggers.ts';
import { defineTool, READ_ONLY, specChecked } from '../tool.ts';
import { draftAutomation, editAutomation } from './automation-changes.ts';
import {
  degraded,
  json,
  runRecord,
  runWithNodes,
  scope,
  timestamp,
  trigger,
  when,
} from './automation-shapes.ts';

/** The automation tools: reading them here; drafting, publishing and running in `automation-changes.ts`. */

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
    run: runWithNodes.nullable().optional(),
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

export const automationTools = [
  listAutomations,
  readAutomation,
  describeCapabilities,
  draftAutomation,
  editAutomation,
];
