import { newId } from '../../ids.ts';
import { maskSecrets } from '../../observability/secrets.ts';
import type { Db } from '../../storage/schema.ts';

/** What a notification says, to whom, and about what. */
export interface Notice {
  workspaceId: string;
  personId: string;
  kind: 'mention' | 'automation';
  body: string;
  actorId?: string | null;
  artifactId?: string | null;
  threadId?: string | null;
  /** For an automation's notice: the automation, and the run it is about, which the app links to. */
  automationId?: string | null;
  runId?: string | null;
  /** For an approval's notice: the approval, whose card the notification shows. */
  approvalId?: string | null;
}

/** The one writer of `notifications`: inserts one in the caller's transaction (secrets masked) and returns its id. */
export async function notify(on: Db, notice: Notice): Promise<string> {
  const id = newId('ntf');
  await on
    .insertInto('notifications')
    .values({
      id,
      workspace_id: notice.workspaceId,
      person_id: notice.personId,
      kind: notice.kind,
      actor_id: notice.actorId ?? null,
      artifact_id: notice.artifactId ?? null,
      thread_id: notice.threadId ?? null,
      automation_id: notice.automationId ?? null,
      run_id: notice.runId ?? null,
      approval_id: notice.approvalId ?? null,
      body: maskSecrets(notice.body),
      read: 0,
      created_at: Date.now(),
    })
    .execute();
  return id;
}

/** Marks a person's notice of an approval read, in the caller's transaction (they decided it). */
export async function markApprovalNoticeRead(on: Db, approvalId: string, personId: string): Promise<void> {
  await on
    .updateTable('notifications')
    .set({ read: 1 })
    .where('approval_id', '=', approvalId)
    .where('person_id', '=', personId)
    .where('read', '=', 0)
    .execute();
}
