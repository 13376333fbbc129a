import { z } from 'zod';
import { DomainError } from '../../errors.ts';
import type { RunProgress } from '../../domains/automations/run-progress.ts';
import { defineTool, specChecked, WRITE } from '../tool.ts';
import { planError, runWithNodes, timestamp } from './automation-shapes.ts';

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
    run: runWithNodes.optional(),
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
  // A run goes on after the call answers: a client that asks for tasks follows it as one.
  startsTask: (r) => (r.action === 'run' ? r.run_id : undefined),
});

/** edit_automation's answer once a run it started has ended: the call's answer with the run record. */
export function runEnded(p: RunProgress) {
  const { run } = p;
  const structured = {
    action: 'run' as const,
    automation_id: p.automation_id,
    dry_run: run.dry_run,
    run_id: run.run_id,
    session_id: p.session_id,
    url: p.url,
    run,
  };
  const kind = run.dry_run ? 'Dry run' : 'Run';
  const text = `${kind} ${run.run_id} of ${p.automation_id} ${run.status}${run.error ? `: ${run.error}` : ''}. Steps: ${
    run.nodes.map((n) => `${n.node_id} ${n.status}`).join(', ') || 'none'
  }.`;
  return { structured, text };
}
