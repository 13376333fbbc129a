// The tables of sign-in, tokens, OAuth and connectors, and the small keyed tables (idempotency,
// settings, collab tickets).
// Times are milliseconds since the epoch; flags are 0/1 integers; JSON is stored as text.

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

/** A workspace's own model settings (Settings → Assistant model); the key sealed. */
export interface WorkspaceModelTable {
  workspace_id: string;
  url: string;
  model: string;
  sealed_key: string | null;
  updated_by: string | null;
  updated_at: number;
}
