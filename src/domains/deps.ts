import type { Kysely } from 'kysely';
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
