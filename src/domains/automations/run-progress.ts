import { DomainError } from '../../errors.ts';
import type { Capability } from '../../capabilities/capability.ts';
import type { Actor } from '../workspace/actor.ts';
import type { WriteAfterApproval } from './approval-writes.ts';
import { approvalsOfRun } from './approval-cards.ts';
import type { AutomationsContext } from './context.ts';
import { iso, runDetail, TERMINAL_RUN } from './runs.ts';

/** An approval a run waits on, as its requester is told of it away from the app. */
export interface AwaitedApproval {
  approval_id: string;
  message: string;
  /** Who may decide it, in words. */
  approvers: string;
  /** The writes approving lets happen, as the approval card shows them. */
  writes: WriteAfterApproval[];
  /** Where a person decides: the approval's card on its session page. */
  url: string;
}

export interface RunProgress {
  automation_id: string;
  session_id: string;
  /** The automation's page. */
  url: string;
  /** The run as read_automation shows it with run_id: status, timing, nodes and output. */
  run: NonNullable<Awaited<ReturnType<typeof runDetail>>>;
  /** When the run last changed (its status, a step, a wake-up). */
  updated_at: string;
  ended: boolean;
  /** Pending approvals of the run, oldest first; empty unless it waits on one. */
  waiting_on: AwaitedApproval[];
}

const runNotFound = () => new DomainError('not_found', 'Run not found');

/**
 * Where a run stands, for the person who started it and no one else (what an MCP client that
 * started it follows as a task). Any other id, or a run someone else started, reads as not found.
 */
export async function runProgress(
  ctx: AutomationsContext,
  actor: Actor,
  runId: unknown,
  capabilityOf: (key: string) => Capability | undefined,
): Promise<RunProgress> {
  if (typeof runId !== 'string' || runId === '') throw runNotFound();
  const row = await ctx.db
    .selectFrom('runs')
    .innerJoin('automations', 'automations.id', 'runs.automation_id')
    .select(['automations.id as automation_id', 'runs.status', 'runs.updated_at', 'automations.session_id'])
    .where('runs.id', '=', runId)
    .where('runs.workspace_id', '=', actor.workspaceId)
    .where('runs.requested_by', '=', actor.personId)
    .executeTakeFirst();
  if (!row) throw runNotFound();
  const run = await runDetail(ctx.db, row.automation_id, runId);
  if (!run) throw runNotFound();
  const waiting =
    row.status === 'waiting'
      ? (await approvalsOfRun(ctx.db, actor, runId, capabilityOf)).filter((a) => a.status === 'pending')
      : [];
  return {
    automation_id: row.automation_id,
    session_id: row.session_id,
    url: ctx.urlOf(row.automation_id),
    run,
    updated_at: iso(row.updated_at) as string,
    ended: TERMINAL_RUN.has(row.status),
    waiting_on: waiting.map((a) => ({
      approval_id: a.approval_id,
      message: a.message,
      approvers: a.approvers,
      writes: a.writes ?? [],
      url: ctx.approvalUrlOf(a.session_id, a.approval_id),
    })),
  };
}
