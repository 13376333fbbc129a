// The tables of people, agents, pods and conversations, and of what reaches people: agent
// requests, notifications, activity.
// Times are milliseconds since the epoch; flags are 0/1 integers; JSON is stored as text.

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

/** `Describe it`: @Builder drafting from a person's sentence, and how it ended (025). */
export interface DescribeRequestTable {
  id: string;
  workspace_id: string;
  person_id: string;
  status: 'drafting' | 'drafted' | 'failed';
  flow_version_id: string | null;
  error: string | null;
  created_at: number;
  ended_at: number | null;
}
