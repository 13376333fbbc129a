import type { Generated } from 'kysely';

// The tables of automations: flows and their versions, runs and their nodes, jobs, the event
// outbox, effects and approvals.
// Times are milliseconds since the epoch; flags are 0/1 integers; JSON is stored as text.

export interface FlowTable {
  id: string;
  workspace_id: string;
  created_by: string;
  /** Set once a version of it is published: the automation that owns it. */
  automation_id: string | null;
  created_at: number;
}

export interface FlowVersionTable {
  id: string;
  flow_id: string;
  workspace_id: string;
  version: number;
  created_by: string;
  ask: string;
  write_approval: string;
  created_at: number;
  /** Steps, writes, namespaces and connectors, computed when the draft was stored. */
  summary_json: string;
  plan_json: string;
  /** `person` (made by `created_by` themselves) or `agent` (for them); null before it was recorded. */
  made_by: string | null;
  /** The agent of Tandem that drafted it (`Builder`); null when none did. */
  agent: string | null;
  /** The trigger the draft proposes (a template's), as JSON; null when it proposes none. */
  trigger_json: string | null;
}

export interface AutomationTable {
  id: string;
  workspace_id: string;
  flow_id: string;
  name: string;
  description: string;
  tags_json: string;
  /** `personal` or `workspace`. */
  scope: string;
  created_by: string;
  acting_id: string;
  live_version_id: string;
  trigger_kind: string;
  trigger_json: string;
  notify: string;
  cooldown_s: number;
  enabled: number;
  session_id: string;
  next_fire_at: number | null;
  last_fired_at: number | null;
  consecutive_failures: number;
  created_at: number;
  updated_at: number;
  dropped_events: Generated<number>;
  last_event_at: number | null;
}

export interface RunTable {
  id: string;
  workspace_id: string;
  /** Null for a dry run of a draft that was never published (024): its flow_version_id is the draft. */
  automation_id: string | null;
  flow_version_id: string;
  parent_run_id: string | null;
  parent_node_key: string | null;
  /** `schedule`, `event`, `manual`, `dry_run`, `subflow`, `retry` or `replay`. */
  cause: string;
  dry_run: number;
  /** `queued`, `running`, `waiting`, `succeeded`, `failed` or `cancelled`. */
  status: string;
  acting_id: string;
  requested_by: string | null;
  error: string | null;
  queued_at: number;
  started_at: number | null;
  finished_at: number | null;
  updated_at: number;
  trigger_json: string;
  output_json: string | null;
  /** How many event hops led to this run (events from runs stop at MAX_EVENT_DEPTH). */
  event_depth: number;
  /** 0 for a run started on its own; a subflow child is one deeper than its parent. */
  subflow_depth: number;
  /** The run at the top of a subflow tree (null for that run itself). */
  root_run_id: string | null;
  /** The run a retry or replay repeats (`cause` says which). */
  rerun_of: string | null;
}

export interface RunNodeTable {
  run_id: string;
  node_key: string;
  node_id: string;
  /** `pending`, `running`, `waiting`, `succeeded`, `failed`, `skipped` or `simulated`. */
  status: string;
  attempt: number;
  error: string | null;
  wait_until: number | null;
  started_at: number | null;
  finished_at: number | null;
  output_json: string | null;
  /** Why it failed, as a value (`rejected`, `outcome_unknown`, `limit`, `timeout`). */
  error_code: string | null;
  /** The step's bindings as resolved when it last started (capped; see `storedInput`). */
  input_json: string | null;
}

export interface JobTable {
  run_id: string;
  available_at: number;
  locked_by: string | null;
  locked_until: number | null;
  created_at: number;
  /** Times a worker took this job and never let it go (it died): a crash counter. */
  claims: number;
}

export interface EventOutboxTable {
  id: string;
  workspace_id: string;
  /** `workspace` for the workspace's own events, else the connector (`github`, …). */
  provider: string;
  event: string;
  action: string | null;
  repo: string | null;
  /** The artifact a workspace event is about: it reaches only automations whose person can open it. */
  artifact_id: string | null;
  actor_id: string | null;
  /** The automation whose run caused the event (it never triggers itself). */
  source_automation_id: string | null;
  depth: number;
  delivery_key: string | null;
  /** A signed body's SHA-256 (`workspace:provider:hex`): the same body is one delivery, whatever its id. */
  body_key: string | null;
  created_at: number;
  delivered_at: number | null;
  data_json: string;
}

export interface RunEffectTable {
  key: string;
  run_id: string;
  /** `done`, or `started` for a call to an outside service whose outcome is not known yet. */
  state: string;
  created_at: number;
  result_json: string | null;
}

export interface ApprovalTable {
  id: string;
  workspace_id: string;
  run_id: string;
  node_key: string;
  node_id: string;
  automation_id: string;
  session_id: string;
  message_id: string;
  message: string;
  approvers_json: string;
  /** `pending`, `approved`, `rejected` or `timed_out`. */
  status: string;
  decided_by: string | null;
  decided_at: number | null;
  note: string | null;
  expires_at: number;
  created_at: number;
}
