import type { Selectable } from 'kysely';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { ApprovalTable, AutomationTable, RunTable, Db } from '../../storage/schema.ts';
import { markApprovalNoticeRead, notify } from '../activity/notify.ts';
import type { Deps } from '../deps.ts';
import {
  approvalFor,
  approverIds,
  DEFAULT_APPROVERS,
  requireDecide,
  type Approvers,
} from '../policies/approvals.ts';
import type { Actor } from '../workspace/actor.ts';
import { optionalString } from './args.ts';
import { wake } from '../../queue/jobs.ts';
import { postToSession, updateCard } from './session.ts';

/*
 * An approval's life, in one place: a run's approval step asks for it (`requestApproval`), one of
 * its approvers decides it once (`decideApproval`), or its time runs out (`timeOutApproval`); the
 * step then ends as `approvalStepEnd` says. Who may decide is the policies module's rule
 * (`src/domains/policies/approvals.ts`); the engine alone writes the step itself.
 */

/** How an approval step ends, as the engine stores it on the step. */
export type ApprovalStepEnd =
  | { status: 'succeeded'; output: { approved: true; by: string | null; at: string; note?: string } }
  | { status: 'failed'; error: string; code?: 'rejected' }
  | { status: 'skipped' };

export interface ApprovalRequest {
  run: Pick<Selectable<RunTable>, 'id' | 'workspace_id'>;
  automation: Pick<Selectable<AutomationTable>, 'id' | 'name' | 'session_id' | 'created_by'>;
  /** The step's key in the run (`map[3].node` inside map items) and its plan node. */
  nodeKey: string;
  nodeId: string;
  message: string;
  approvers: Approvers | undefined;
  expiresAt: number;
}

/**
 * Asks for a step's approval, in the caller's transaction: a card in the automation's session, the
 * approval behind it, and a notification to each person who may decide. A step asks once: asking
 * again (a restarted step) finds the approval already there.
 */
export async function requestApproval(trx: Db, request: ApprovalRequest): Promise<void> {
  const { run, automation, message } = request;
  const existing = await trx
    .selectFrom('approvals')
    .select('id')
    .where('run_id', '=', run.id)
    .where('node_key', '=', request.nodeKey)
    .executeTakeFirst();
  if (existing) return;
  const approvalId = newId('apr');
  const card = {
    type: 'approval',
    approval_id: approvalId,
    run_id: run.id,
    node_id: request.nodeId,
    status: 'pending',
    message,
  };
  const messageId = await postToSession(
    trx,
    automation.session_id,
    null,
    `Approval needed: ${message}`,
    card,
  );
  const approvers = request.approvers ?? DEFAULT_APPROVERS;
  await trx
    .insertInto('approvals')
    .values({
      id: approvalId,
      workspace_id: run.workspace_id,
      run_id: run.id,
      node_key: request.nodeKey,
      node_id: request.nodeId,
      automation_id: automation.id,
      session_id: automation.session_id,
      message_id: messageId,
      message,
      approvers_json: JSON.stringify(approvers),
      status: 'pending',
      decided_by: null,
      decided_at: null,
      note: null,
      expires_at: request.expiresAt,
      created_at: Date.now(),
    })
    .execute();
  // Whoever may decide hears of it, wherever they are.
  for (const personId of await approverIds(trx, run.workspace_id, approvers, automation.created_by)) {
    await notify(trx, {
      workspaceId: run.workspace_id,
      personId,
      kind: 'automation',
      automationId: automation.id,
      runId: run.id,
      approvalId,
      body: `“${automation.name}” is waiting for your approval: ${message}`,
    });
  }
}

/**
 * A person's decision on an approval step; only the step's approvers may decide it, and only
 * once. It wakes the run, whose engine then ends the waiting step (call `queued` after this).
 */
export async function decideApproval(
  db: Deps['db'],
  actor: Actor,
  approvalId: unknown,
  input: { decision?: unknown; note?: unknown },
) {
  if (input.decision !== 'approve' && input.decision !== 'reject') {
    throw invalid('decision must be approve or reject');
  }
  const note = optionalString(input.note, 'note', 2000);
  const result = await db.transaction().execute(async (trx) => {
    const { approval, approvers, createdBy, me } = await approvalFor(trx, actor, approvalId);
    requireDecide(approvers, createdBy, me);
    if (approval.status !== 'pending') {
      throw new DomainError(
        'already_decided',
        `This approval is already ${approval.status.replace('_', ' ')}`,
      );
    }
    const now = Date.now();
    const status = input.decision === 'approve' ? 'approved' : 'rejected';
    // One decision per approval: of two at once, only the first moves it from pending.
    const moved = await trx
      .updateTable('approvals')
      .set({ status, decided_by: actor.personId, decided_at: now, note: note ?? null })
      .where('id', '=', approval.id)
      .where('status', '=', 'pending')
      .executeTakeFirst();
    if (Number(moved.numUpdatedRows) !== 1) {
      throw new DomainError('already_decided', 'This approval was decided a moment ago');
    }
    await updateCard(trx, approval.message_id, {
      status,
      decided_by: me.name,
      ...(note ? { note } : {}),
    });
    const at = new Date(now).toISOString();
    // The run's engine ends the waiting step when it next looks at it (it alone writes run_nodes).
    await postToSession(
      trx,
      approval.session_id,
      actor.personId,
      `${me.name} ${status} “${approval.message}”${note ? `: ${note}` : ''}.`,
    );
    await wake(trx, approval.run_id);
    // Deciding is opening its notice: the decider's notice of it reads as read.
    await markApprovalNoticeRead(trx, approval.id, actor.personId);
    return {
      approval_id: approval.id,
      run_id: approval.run_id,
      status,
      decided_by: me.email,
      decided_at: at,
    };
  });
  return { ...result, ...(note ? { note } : {}) };
}

export type StepApproval = Pick<Selectable<ApprovalTable>, 'id' | 'status' | 'message' | 'message_id'>;

/**
 * The approval a run's step waits on, and how the step ends now that it was decided (no `end`
 * while it waits, or once it timed out or the run ended).
 */
export async function approvalOfStep(
  on: Db,
  runId: string,
  nodeKey: string,
): Promise<{ approval: StepApproval; end?: ApprovalStepEnd } | undefined> {
  const row = await on
    .selectFrom('approvals')
    .leftJoin('people', 'people.id', 'approvals.decided_by')
    .select([
      'approvals.id',
      'approvals.status',
      'approvals.note',
      'approvals.decided_at',
      'approvals.message',
      'approvals.message_id',
      'people.name',
      'people.email',
    ])
    .where('approvals.run_id', '=', runId)
    .where('approvals.node_key', '=', nodeKey)
    .executeTakeFirst();
  if (!row) return undefined;
  const approval = { id: row.id, status: row.status, message: row.message, message_id: row.message_id };
  const note = row.note;
  if (row.status === 'approved') {
    const at = new Date(row.decided_at ?? Date.now()).toISOString();
    return {
      approval,
      end: { status: 'succeeded', output: { approved: true, by: row.email, at, ...(note ? { note } : {}) } },
    };
  }
  if (row.status === 'rejected') {
    return {
      approval,
      end: {
        status: 'failed',
        error: `rejected by ${row.name ?? 'an approver'}${note ? `: ${note}` : ''}`,
        code: 'rejected',
      },
    };
  }
  return { approval };
}

/**
 * Ends a pending approval whose time ran out, in the caller's transaction, and says how its step
 * ends: skipped (with a notice in the session) or failed, as the step's `on_timeout` says. Null
 * when it was decided a moment before.
 */
export async function timeOutApproval(
  trx: Db,
  approval: StepApproval,
  sessionId: string,
  onTimeout: 'fail' | 'skip' | undefined,
  now = Date.now(),
): Promise<ApprovalStepEnd | null> {
  const moved = await trx
    .updateTable('approvals')
    .set({ status: 'timed_out', decided_at: now })
    .where('id', '=', approval.id)
    .where('status', '=', 'pending')
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) !== 1) return null;
  await updateCard(trx, approval.message_id, { status: 'timed_out' });
  if (onTimeout !== 'skip') return { status: 'failed', error: 'the approval timed out' };
  await postToSession(
    trx,
    sessionId,
    null,
    `No decision on “${approval.message}” in time; the steps it guards were skipped.`,
  );
  return { status: 'skipped' };
}

/**
 * A run that ended no longer waits: its pending approvals are cancelled, in the transaction that
 * ends it (their cards stay as they were; the run's end is posted where it applies).
 */
export async function cancelPendingApprovals(trx: Db, runId: string): Promise<void> {
  await trx
    .updateTable('approvals')
    .set({ status: 'cancelled' })
    .where('run_id', '=', runId)
    .where('status', '=', 'pending')
    .execute();
}
