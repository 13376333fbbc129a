import { z } from 'zod';
import { triggerText } from '../../domains/automations/automations.ts';
import type { Trigger } from '../../flowplan/triggers.ts';

/** The pieces of automation results that the reading and the changing tools share. */

export const json = z.record(z.string(), z.unknown());
export const trigger = json.describe(
  'A trigger object; describe_capabilities gives its shape (trigger_input).',
);
export const timestamp = z.string().describe('An ISO-8601 instant (UTC).');
export const degraded = z
  .enum([
    'connector_disconnected',
    'personal_connector_unavailable',
    'subflow_unavailable',
    'model_unavailable',
    'repeated_failures',
  ])
  .describe('Why the automation cannot run as published right now.');
export const scope = z.enum(['personal', 'workspace']);
export const planError = z.object({
  rule: z.string(),
  path: z.array(z.union([z.string(), z.number()])),
  node_id: z.string().optional(),
  message: z.string(),
});

export const runRecord = z.object({
  run_id: z.string(),
  status: z.string(),
  dry_run: z.boolean(),
  cause: z.string(),
  error: z.string().optional(),
  queued_at: timestamp.optional(),
  started_at: timestamp.optional(),
  finished_at: timestamp.optional(),
});

/** One run with its nodes and output, as read_automation gives it for run_id. */
export const runWithNodes = z.object({
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
});

export function when(t: Trigger, enabled: boolean, next: string | undefined): string {
  if (!enabled) return 'paused';
  return next ? `enabled, next run ${next}` : `enabled, runs ${triggerText(t)}`;
}
