import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../storage/schema.ts';
import type { Dialect } from '../storage/db.ts';

/** What happened in the workspace, for whoever listens (automation triggers, live views). */
export interface DomainEvent {
  type: 'document.created' | 'document.edited' | 'comment.created' | 'comment.mentioned' | 'page.written';
  workspaceId: string;
  actorId: string;
  data: Record<string, unknown>;
}

export type EventListener = (event: DomainEvent) => void;

export interface Deps {
  db: Kysely<Database>;
  dialect: Dialect;
  /** Called after the write that caused the event committed. */
  emit: EventListener;
}

/**
 * Lets a caller add its own rows to a write's transaction (the run engine records the write's
 * effect there, so a repeated write is recognised); `result` is what the write returns.
 */
export interface WriteOptions {
  within?: (trx: Transaction<Database>, result: Record<string, unknown>) => Promise<void>;
}
