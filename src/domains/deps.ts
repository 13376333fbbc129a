import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../storage/schema.ts';
import type { Dialect } from '../storage/db.ts';
import type { EventOrigin } from './automations/events.ts';
import type { SecretBox } from './connectors/secrets.ts';
import type { ThreadFeed } from './comments/feed.ts';

/** What happened in the workspace, for whoever listens (automation triggers, live views). */
export interface DomainEvent {
  type: 'document.created' | 'document.edited' | 'comment.created' | 'comment.mentioned' | 'page.written';
  workspaceId: string;
  actorId: string;
  /** The artifact it is about: only automations whose person can open it hear of it. */
  artifactId: string;
  data: Record<string, unknown>;
}

export interface Deps {
  db: Kysely<Database>;
  dialect: Dialect;
  /**
   * Records an event in the transaction of the write that caused it (the outbox); any engine
   * delivers it once that write commits. `origin` is the run whose write it was, if any.
   */
  emit: (trx: Transaction<Database>, event: DomainEvent, origin?: EventOrigin) => Promise<void>;
  /** Seals and opens the secrets stored with connectors (the deployment's key). */
  secrets: SecretBox;
  /** Thread changes once committed, for the views that have the artifact open (live comments). */
  threads: ThreadFeed;
}

/**
 * Lets a caller add its own rows to a write's transaction (the run engine records the write's
 * effect there, so a repeated write is recognised); `result` is what the write returns.
 */
export interface WriteOptions {
  within?: (trx: Transaction<Database>, result: Record<string, unknown>) => Promise<void>;
  /** The run whose write this is: its events carry it, so they never loop back to it. */
  origin?: EventOrigin | undefined;
}
