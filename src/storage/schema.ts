import type { Kysely, Transaction } from 'kysely';
import type {
  WorkspaceTable,
  PersonTable,
  AgentTable,
  PodTable,
  PodMemberTable,
  ConversationTable,
  ConversationParticipantTable,
  MessageTable,
  AgentRequestTable,
  NotificationTable,
  ActivityTable,
  DescribeRequestTable,
} from './tables/workspace.ts';
import type {
  ArtifactTable,
  ArtifactRoleTable,
  ArtifactScopeRoleTable,
  CheckpointTable,
  ThreadTable,
  CommentTable,
  DocStateTable,
  DocUpdateTable,
  DocLeaseTable,
} from './tables/documents.ts';
import type {
  TokenTable,
  AccountTable,
  BrowserSessionTable,
  SignInAttemptTable,
  OAuthRecordTable,
  ConnectorTable,
  IdempotencyKeyTable,
  SettingTable,
  CollabTicketUseTable,
  WorkspaceModelTable,
} from './tables/access.ts';
import type {
  FlowTable,
  FlowVersionTable,
  AutomationTable,
  RunTable,
  RunNodeTable,
  JobTable,
  EventOutboxTable,
  RunEffectTable,
  ApprovalTable,
} from './tables/runs.ts';

// The database's shape for Kysely. Each table's row is declared in tables/, by area, and
// re-exported here so that callers import every row type from one place.
export type * from './tables/workspace.ts';
export type * from './tables/documents.ts';
export type * from './tables/access.ts';
export type * from './tables/runs.ts';

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
  workspace_models: WorkspaceModelTable;
  describe_requests: DescribeRequestTable;
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
