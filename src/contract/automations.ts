import { z } from 'zod';
import type { Trigger } from '../flowplan/triggers.ts';
import { endpoint, type QueryParam } from './endpoint.ts';

/** An instant as the automation APIs give it: ISO-8601 in UTC. */
const instant = z.string();
/** A value the domain checks and words its own refusal for; typed here for the caller. */
const checked = <T>() => z.custom<T>();

export const degradedReason = z.enum([
  'connector_disconnected',
  'personal_connector_unavailable',
  'subflow_unavailable',
  'model_unavailable',
  'repeated_failures',
]);
const scope = z.enum(['personal', 'workspace']);
const writeApproval = z.enum(['required', 'automatic']);
const notify = z.enum(['off', 'problems', 'everyRun']);
const triggerValue = z.custom<Trigger>((v) => typeof v === 'object' && v !== null && 'kind' in v);

export const automationRow = z.object({
  automation_id: z.string(),
  name: z.string(),
  enabled: z.boolean(),
  degraded_reason: degradedReason.optional(),
  trigger: triggerValue,
  /** When it runs, in words, with its zone. */
  trigger_text: z.string(),
  scope,
  can_control: z.boolean(),
  version: z.number().optional(),
  step_count: z.number().optional(),
  session_id: z.string().optional(),
  next_fire_at: instant.optional(),
  last_fired_at: instant.optional(),
  consecutive_failures: z.number(),
  created_at: instant,
  /** The latest run, whatever started it. */
  last_run: z.object({ run_id: z.string(), status: z.string(), queued_at: instant }).optional(),
});
export type AutomationRow = z.infer<typeof automationRow>;

export const runSummary = z.object({
  run_id: z.string(),
  status: z.string(),
  dry_run: z.boolean(),
  cause: z.string(),
  error: z.string().optional(),
  queued_at: instant,
  started_at: instant.optional(),
  finished_at: instant.optional(),
});
export type RunSummary = z.infer<typeof runSummary>;

export const schedulePreview = z.object({
  text: z.string(),
  timezone: z.string().optional(),
  next: z.array(z.object({ at: instant, local: z.string(), offset: z.string() })),
  dst: z.string(),
  next_clock_change: z.object({ at: instant, from: z.string(), to: z.string() }).optional(),
});
export type SchedulePreview = z.infer<typeof schedulePreview>;

export const automationDetail = z.object({
  automation_id: z.string(),
  name: z.string(),
  description: z.string(),
  tags: z.array(z.string()),
  ask: z.string(),
  steps: z.array(z.string()),
  writes: z.array(z.string()),
  namespaces: z.array(z.string()),
  connectors: z.array(z.string()),
  trigger: triggerValue,
  scope,
  enabled: z.boolean(),
  degraded_reason: degradedReason.optional(),
  can_control: z.boolean(),
  created_by: z.string(),
  version: z.number(),
  flow_version_id: z.string(),
  write_approval: writeApproval,
  notify,
  cooldown_s: z.number(),
  session_id: z.string(),
  next_fire_at: instant.optional(),
  last_fired_at: instant.optional(),
  consecutive_failures: z.number(),
  created_at: instant,
  plan_json: z.unknown().optional(),
  runs: z.array(runSummary),
  runs_truncated: z.boolean(),
  schedule: schedulePreview,
});
export type AutomationDetail = z.infer<typeof automationDetail>;

export const runNode = z.object({
  node_id: z.string(),
  status: z.string(),
  attempt: z.number(),
  error: z.string().optional(),
  error_code: z.string().optional(),
  started_at: instant.optional(),
  finished_at: instant.optional(),
  /** What the step was given: its bindings resolved when it started (secrets masked). */
  input: z.unknown().optional(),
  output: z.unknown().optional(),
  kind: z.string().optional(),
  title: z.string().optional(),
  /** An agent step's instructions as the plan binds them. */
  instructions: z.unknown().optional(),
});
export type RunNode = z.infer<typeof runNode>;

export const runInspection = runSummary.extend({
  nodes: z.array(runNode),
  output: z.unknown().optional(),
  trigger_payload: z.unknown(),
  flow_version_id: z.string(),
  version: z.number(),
  /** The run this one retries or replays (its cause says which). */
  rerun_of: z.string().optional(),
  /** The plan of the version that runs: every step, those not started too. */
  plan: z.object({ nodes: z.array(z.unknown()), edges: z.array(z.unknown()) }).optional(),
});
export type RunInspection = z.infer<typeof runInspection>;

export const planDiff = z.object({
  added: z.array(z.object({ node_id: z.string(), kind: z.string() })),
  removed: z.array(z.object({ node_id: z.string(), kind: z.string() })),
  changed: z.array(z.object({ node_id: z.string(), kind: z.string(), fields: z.array(z.string()) })),
  edges_added: z.array(z.string()),
  edges_removed: z.array(z.string()),
  fields: z.array(z.string()),
});
export type PlanDiff = z.infer<typeof planDiff>;

export const planVersion = z.object({
  flow_version_id: z.string(),
  version: z.number(),
  live: z.boolean(),
  author: z.string(),
  /** Whether the author made it or an agent did for them; absent for versions from before it was recorded. */
  made_by: z.enum(['person', 'agent']).optional(),
  created_at: instant,
  ask: z.string(),
  write_approval: writeApproval,
  steps: z.array(z.string()),
  plan_json: z.unknown(),
  changes: planDiff.optional(),
});
export type PlanVersion = z.infer<typeof planVersion>;

export const listAutomations = endpoint({
  method: 'GET',
  path: '/automations',
  output: z.object({ automations: z.array(automationRow), truncated: z.boolean() }),
});

/** The longest trigger a preview takes, as JSON (a trigger is a few short fields). */
export const TRIGGER_PREVIEW_CHARS = 2000;

/** A query parameter holding a value as JSON, parsed; the domain checks what it is. */
const jsonParam = (max: number): QueryParam<unknown> => ({
  schema: z
    .string()
    .max(max)
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'not JSON' });
        return z.NEVER;
      }
    }),
  rule: `JSON of at most ${max.toLocaleString('en-US')} characters`,
});

/**
 * What a trigger would mean before it is published: in words, with its next firings in its zone.
 * It is checked as publish checks it, so a bad one is refused with publish's own sentence.
 */
export const triggerPreview = endpoint({
  method: 'GET',
  path: '/automations/trigger-preview',
  query: { trigger: jsonParam(TRIGGER_PREVIEW_CHARS) },
  output: schedulePreview,
});

export const readAutomation = endpoint({
  method: 'GET',
  path: '/automations/:id',
  output: automationDetail,
});

export const readRun = endpoint({
  method: 'GET',
  path: '/automations/:id/runs/:run_id',
  output: runInspection,
});

export const planVersions = endpoint({
  method: 'GET',
  path: '/automations/:id/versions',
  output: z.object({
    automation_id: z.string(),
    live_version_id: z.string(),
    truncated: z.boolean(),
    versions: z.array(planVersion),
  }),
});

export const setEnabled = endpoint({
  method: 'POST',
  path: '/automations/:id/enabled',
  body: z.object({ enabled: checked<boolean>() }),
  output: z.object({ automation_id: z.string(), enabled: z.boolean(), next_fire_at: instant.optional() }),
});

export const startRun = endpoint({
  method: 'POST',
  path: '/automations/:id/runs',
  body: z.object({ dry_run: checked<boolean>() }),
  output: z.object({ automation_id: z.string(), run_id: z.string(), dry_run: z.boolean() }),
});

export const draftVersion = endpoint({
  method: 'POST',
  path: '/automations/:id/drafts',
  body: z.object({
    plan_json: z.unknown(),
    ask: checked<string>(),
    write_approval: checked<z.infer<typeof writeApproval>>().optional(),
  }),
  output: z.object({
    flow_version_id: z.string(),
    version: z.number(),
    steps: z.array(z.string()),
    writes: z.array(z.string()),
  }),
});

export const publishVersion = endpoint({
  method: 'POST',
  path: '/automations/:id/publish',
  body: z.object({
    flow_version_id: checked<string>(),
    trigger: checked<Trigger>(),
    name: checked<string>().optional(),
    description: checked<string>().optional(),
    notify: checked<z.infer<typeof notify>>().optional(),
    cooldown_s: checked<number>().optional(),
    enabled: checked<boolean>().optional(),
  }),
  output: z.object({
    automation_id: z.string(),
    name: z.string(),
    version: z.number(),
    enabled: z.boolean(),
    next_fire_at: instant.optional(),
  }),
});

const rerunChoice = z.object({
  available: z.boolean(),
  reason: z.string().optional(),
  version: z.number(),
  live_version: z.number(),
  steps: z.array(z.string()),
  writes_again: z.array(
    z.object({ node_id: z.string(), capability: z.string().optional(), subflow: z.string().optional() }),
  ),
});
export type RerunChoice = z.infer<typeof rerunChoice>;

/** What a retry (from the failed step) and a replay (same input, live version) of a run would do. */
export const rerunPreview = endpoint({
  method: 'GET',
  path: '/automations/:id/runs/:run_id/rerun',
  output: z.object({ run_id: z.string(), dry_run: z.boolean(), retry: rerunChoice, replay: rerunChoice }),
});
export type RerunPreview = z.infer<typeof rerunPreview.output>;

export const startRerun = endpoint({
  method: 'POST',
  path: '/automations/:id/runs/:run_id/rerun',
  body: z.object({ mode: checked<'retry' | 'replay'>() }),
  output: z.object({
    action: z.enum(['retry', 'replay']),
    run_id: z.string(),
    rerun_of: z.string(),
    version: z.number(),
    session_id: z.string(),
  }),
});
