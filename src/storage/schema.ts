import type { Generated, Kysely, Transaction } from 'kysely';

/** Times are milliseconds since the epoch; flags are 0/1 integers; JSON is stored as text. */
export interface WorkspaceTable {
  id: string;
  name: string;
  created_at: number;
}

export interface PersonTable {
  id: string;
  workspace_id: string;
  email: string;
  name: string;
  handle: string;
  admin: number;
  created_at: number;
}

export interface AgentTable {
  workspace_id: string;
  handle: string;
}

export interface PodTable {
  id: string;
  workspace_id: string;
  name: string;
  created_at: number;
}

export interface PodMemberTable {
  pod_id: string;
  person_id: string;
}

export interface ConversationTable {
  id: string;
  workspace_id: string;
  title: string;
  /** `room` (people talk here), `artifact` (an artifact's own chat), `session` (an automation's). */
  kind: string;
  archived: number;
  created_at: number;
}

export interface ConversationParticipantTable {
  conversation_id: string;
  person_id: string;
}

export interface MessageTable {
  id: string;
  conversation_id: string;
  author_id: string | null;
  /** `text` or `card`. */
  kind: string;
  body: string;
  card_json: string | null;
  created_at: number;
}

export interface ArtifactTable {
  id: string;
  workspace_id: string;
  type: string;
  title: string;
  owner_id: string;
  scope: string;
  pod_id: string | null;
  conversation_id: string | null;
  chat_id: string | null;
  status: string;
  version: number;
  /** HTML source of a page, markdown of a document, null when nothing is stored yet. */
  content: string | null;
  /** Columns and rows of a table, as JSON. */
  table_json: string | null;
  created_at: number;
  updated_at: number;
}

export interface ArtifactRoleTable {
  artifact_id: string;
  person_id: string;
  role: string;
}

/** The role an artifact's pod or workspace audience gets; no row means editor. */
export interface ArtifactScopeRoleTable {
  artifact_id: string;
  role: string;
}

export interface CheckpointTable {
  id: string;
  artifact_id: string;
  doc_version: number;
  reason: string;
  label: string | null;
  pinned: number;
  author_id: string | null;
  instruction: string | null;
  content: string | null;
  kept_json: string | null;
  /** Block ids and text hashes at `doc_version`, to count blocks changed since. */
  blocks_json: string | null;
  result_version: number | null;
  result_blocks_json: string | null;
  /** What an agent write or an undo changed, block by block (see documents/changes.ts). */
  changes_json?: string | null;
  created_at: number;
}

export interface ThreadTable {
  id: string;
  artifact_id: string;
  author_id: string;
  body: string;
  anchor_excerpt: string | null;
  anchor_start: number | null;
  anchor_rel_start: string | null;
  anchor_rel_end: string | null;
  status: string;
  resolved_by: string | null;
  resolved_at: number | null;
  created_at: number;
}

export interface CommentTable {
  id: string;
  thread_id: string;
  /** The person who wrote it; null for an agent's reply. */
  author_id: string | null;
  /** The agent whose reply this is (its handle, shown as author_label). */
  agent: string | null;
  /** The agent request this reply answers; unique, so a request is answered once. */
  request_id: string | null;
  body: string;
  deleted: number;
  created_at: number;
}

export interface AgentRequestTable {
  id: string;
  thread_id: string;
  comment_id: string | null;
  agent: string;
  requested_by: string;
  /** `pending` (queued), `answering`, `answered` or `failed`. */
  status: string;
  created_at: number;
  workspace_id: string | null;
  artifact_id: string | null;
  available_at: number;
  locked_by: string | null;
  locked_until: number | null;
  /** Times a worker took it; each claim that never finished is a worker that died. */
  claims: number;
  started_at: number | null;
  finished_at: number | null;
  reply_comment_id: string | null;
  /** The Builder's draft, once stored. */
  flow_version_id: string | null;
  error: string | null;
  /** The scopes of the credential that wrote the mention, space separated (null: stored before they were kept). */
  scopes: string | null;
}

export interface NotificationTable {
  id: string;
  workspace_id: string;
  person_id: string;
  kind: string;
  actor_id: string | null;
  artifact_id: string | null;
  thread_id: string | null;
  body: string;
  read: number;
  created_at: number;
  /** The automation (and run) an automation's notification is about (014). */
  automation_id: string | null;
  run_id: string | null;
  /** The approval an approval's notice is about (018). */
  approval_id: string | null;
}

export interface ActivityTable {
  id: string;
  workspace_id: string;
  person_id: string;
  tool: string;
  targets_json: string;
  outcome: string;
  error_code: string | null;
  duration_ms: number;
  created_at: number;
  /** The agent that made the call for the person (the assistant's reads), if one did. */
  agent: string | null;
  /** What the call came through (018): `token`, `oauth`, `session` or `local`, and the token's or app's id. */
  via_kind: string | null;
  via_id: string | null;
}

export interface TokenTable {
  id: string;
  workspace_id: string;
  person_id: string;
  hash: string;
  scopes: string;
  expires_at: number | null;
  created_at: number;
  /** The name given when it was made in Settings (018), and when it was last used. */
  name: string | null;
  last_used_at: number | null;
}

/** One per e-mail address (lower-cased): the password a person signs in with, in every workspace. */
export interface AccountTable {
  email: string;
  /** `scrypt$N$r$p$salt$hash`, or null until a password is set. */
  password_hash: string | null;
  password_changed_at: number | null;
  created_at: number;
}

export interface BrowserSessionTable {
  id: string;
  /** SHA-256 of the cookie's secret. */
  hash: string;
  email: string;
  /** The person (of the workspace chosen) the browser acts as. */
  person_id: string;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
}

export interface SignInAttemptTable {
  key: string;
  failures: number;
  last_at: number;
  wait_until: number;
}

export interface OAuthRecordTable {
  model: string;
  id: string;
  grant_id: string | null;
  uid: string | null;
  account_id: string | null;
  client_id: string | null;
  expires_at: number | null;
  consumed_at: number | null;
  created_at: number;
  label: string | null;
  payload: string;
  /** A rotated refresh token: the token response it was exchanged for (JSON), replayed to a retry. */
  answer: string | null;
}

export interface ConnectorTable {
  id: string;
  workspace_id: string;
  provider: string;
  connected: number;
  personal: number;
  owner_id: string | null;
  /** Before 009 the webhook secret in the open; sealed into `sealed` on start, null since. */
  secret: string | null;
  created_at: number;
  /** The open settings as JSON (domains/connectors/settings.ts). */
  config: string | null;
  /** The secret settings (tokens, passwords, the webhook secret) as JSON, sealed (secrets.ts). */
  sealed: string | null;
  updated_at: number | null;
}

export interface DocStateTable {
  artifact_id: string;
  state: string;
  updated_at: number;
}

export interface DocUpdateTable {
  seq: Generated<number>;
  artifact_id: string;
  update: string;
  created_at: number;
}

export interface DocLeaseTable {
  artifact_id: string;
  holder: string;
  expires_at: number;
}

export interface IdempotencyKeyTable {
  person_id: string;
  key: string;
  artifact_id: string;
  content_hash: string;
  created_at: number;
}

export interface SettingTable {
  key: string;
  value: string;
}

/** Live-socket tickets used once already: a ticket opens one connection. */
export interface CollabTicketUseTable {
  /** The ticket's signature (base64url): every ticket issued has its own. */
  ticket: string;
  /** The ticket's own expiry; the row is pruned a while after it. */
  expires_at: number;
}

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

export interface Database {
  runs: RunTable;
  run_nodes: RunNodeTable;
  jobs: JobTable;
  event_outbox: EventOutboxTable;
  run_effects: RunEffectTable;
  approvals: ApprovalTable;
  flows: FlowTable;
  flow_versions: FlowVersionTable;
  automations: AutomationTable;
  workspaces: WorkspaceTable;
  people: PersonTable;
  agents: AgentTable;
  pods: PodTable;
  pod_members: PodMemberTable;
  conversations: ConversationTable;
  conversation_participants: ConversationParticipantTable;
  messages: MessageTable;
  artifacts: ArtifactTable;
  artifact_roles: ArtifactRoleTable;
  artifact_scope_roles: ArtifactScopeRoleTable;
  checkpoints: CheckpointTable;
  threads: ThreadTable;
  comments: CommentTable;
  agent_requests: AgentRequestTable;
  notifications: NotificationTable;
  activity: ActivityTable;
  tokens: TokenTable;
  accounts: AccountTable;
  browser_sessions: BrowserSessionTable;
  sign_in_attempts: SignInAttemptTable;
  oauth_records: OAuthRecordTable;
  connectors: ConnectorTable;
  doc_states: DocStateTable;
  doc_updates: DocUpdateTable;
  doc_leases: DocLeaseTable;
  idempotency_keys: IdempotencyKeyTable;
  settings: SettingTable;
  collab_ticket_uses: CollabTicketUseTable;
}

/** The database, or a transaction on it: what every read and write is given. */
export type Db = Kysely<Database> | Transaction<Database>;
