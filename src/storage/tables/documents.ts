import type { Generated } from 'kysely';

// The tables of artifacts (documents and pages): their roles, checkpoints, threads, comments and
// live state.
// Times are milliseconds since the epoch; flags are 0/1 integers; JSON is stored as text.

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
