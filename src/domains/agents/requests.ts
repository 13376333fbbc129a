import { sql, type Selectable, type Updateable } from 'kysely';
import { newId } from '../../ids.ts';
import { maskSecrets } from '../../observability/secrets.ts';
import type { AgentRequestTable, Db } from '../../storage/schema.ts';
import { insertAgentReply } from '../comments/agent-reply.ts';
import type { Deps } from '../deps.ts';

/**
 * Agent requests are a queue in the database, like runs' jobs: a worker claims a request with a
 * compare-and-set on its lease, renews the lease while it answers, and posts the reply in the
 * same transaction that marks the request answered, so any process may answer it, a request
 * whose worker died is taken up again when the lease runs out, and there is exactly one reply.
 */
export type AgentRequest = Selectable<AgentRequestTable>;

/** The worker no longer holds the request: its lease ran out and another worker took it. */
export class RequestLost extends Error {}

const OPEN = ['pending', 'answering'];

export interface ClaimOptions {
  workerId: string;
  leaseMs: number;
  /** Requests of one workspace being answered at once, by all workers together. */
  perWorkspace: number;
  max: number;
}

/** Takes up to `max` due requests, never more per workspace than `perWorkspace` at a time. */
export async function claimRequests(deps: Deps, options: ClaimOptions): Promise<AgentRequest[]> {
  if (options.max <= 0) return [];
  const { db } = deps;
  const now = Date.now();
  const due = await db
    .selectFrom('agent_requests')
    .select(['id', 'workspace_id', 'claims'])
    .where('status', 'in', OPEN)
    .where('available_at', '<=', now)
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
    .orderBy('available_at')
    .orderBy('id')
    .limit(options.max * 4)
    .execute();
  const mine: AgentRequest[] = [];
  const full = new Set<string | null>();
  for (const row of due) {
    if (mine.length >= options.max) break;
    if (full.has(row.workspace_id)) continue;
    const claimed = await db.transaction().execute(async (trx) => {
      // PostgreSQL checks the workspace's count and claims under one lock per workspace; on
      // SQLite the single UPDATE below is atomic on its own.
      if (deps.dialect === 'postgres') {
        await sql`select pg_advisory_xact_lock(hashtext(${`agent_requests:${row.workspace_id ?? ''}`}))`.execute(
          trx,
        );
      }
      const busy = trx
        .selectFrom('agent_requests as busy')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('busy.workspace_id', '=', row.workspace_id)
        .where('busy.status', '=', 'answering')
        .where('busy.locked_until', '>=', now);
      const updated = await trx
        .updateTable('agent_requests')
        .set({
          status: 'answering',
          locked_by: options.workerId,
          locked_until: now + options.leaseMs,
          claims: row.claims + 1,
          started_at: (eb) => eb.fn.coalesce('started_at', eb.val(now)),
        })
        .where('id', '=', row.id)
        .where('claims', '=', row.claims)
        .where('status', 'in', OPEN)
        .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
        .where((eb) => eb(busy, '<', options.perWorkspace))
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return undefined;
      return trx.selectFrom('agent_requests').selectAll().where('id', '=', row.id).executeTakeFirstOrThrow();
    });
    if (claimed) mine.push(claimed);
    else full.add(row.workspace_id);
  }
  return mine;
}

/** Keeps the lease while the answer is being worked out. */
export async function renewLease(db: Db, id: string, workerId: string, leaseMs: number): Promise<void> {
  await db
    .updateTable('agent_requests')
    .set({ locked_until: Date.now() + leaseMs })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'answering')
    .execute();
}

/**
 * Gives a request back to the queue, to be tried again at `at`, with its claim count set to
 * `claims` (a clean stop does not count as a worker dying; an unexpected failure does).
 */
export async function releaseRequest(
  db: Db,
  id: string,
  workerId: string,
  at: number,
  claims: number,
): Promise<void> {
  await db
    .updateTable('agent_requests')
    .set({ status: 'pending', locked_by: null, locked_until: null, available_at: at, claims })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'answering')
    .execute();
}

/**
 * Changes the request only while this worker holds it: a compare-and-set, which also locks the
 * row until `trx` ends, so no other worker takes it meanwhile. Fails with RequestLost otherwise.
 */
async function updateHeld(
  trx: Db,
  id: string,
  workerId: string,
  values: Updateable<AgentRequestTable>,
): Promise<void> {
  const updated = await trx
    .updateTable('agent_requests')
    .set(values)
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .where('status', '=', 'answering')
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) {
    throw new RequestLost(`agent request ${id} is no longer held by ${workerId}`);
  }
}

/** The Builder's draft, recorded in the draft's own transaction: a resumed request reuses it. */
export async function recordDraft(trx: Db, id: string, workerId: string, flowVersionId: string) {
  await updateHeld(trx, id, workerId, { flow_version_id: flowVersionId });
}

export interface Outcome {
  /** `answered` when the agent did what was asked; `failed` when the reply says it could not. */
  status: 'answered' | 'failed';
  body: string;
  /** Why it failed, as a value, for the activity history (`model_unavailable`, `model_failed`, …). */
  errorCode?: string | undefined;
  error?: string | undefined;
}

/**
 * Posts the reply and closes the request in one transaction, if this worker still holds it;
 * records the reply in the mentioning person's activity history. Returns the reply's id. Secrets
 * are masked in the reply and the error (a model endpoint may quote its key back).
 */
export async function finishRequest(
  deps: Deps,
  request: AgentRequest,
  workerId: string,
  outcome: Outcome,
): Promise<string> {
  const now = Date.now();
  const commentId = await deps.db.transaction().execute(async (trx) => {
    const error = outcome.error === undefined ? null : maskSecrets(outcome.error);
    await updateHeld(trx, request.id, workerId, { finished_at: now, error });
    const commentId = await insertAgentReply(trx, {
      threadId: request.thread_id,
      agent: request.agent,
      requestId: request.id,
      body: maskSecrets(outcome.body),
    });
    await trx
      .updateTable('agent_requests')
      .set({ status: outcome.status, locked_by: null, locked_until: null, reply_comment_id: commentId })
      .where('id', '=', request.id)
      .execute();
    if (request.workspace_id) {
      await trx
        .insertInto('activity')
        .values({
          id: newId('act'),
          workspace_id: request.workspace_id,
          person_id: request.requested_by,
          tool: 'agent_reply',
          targets_json: JSON.stringify(
            [request.artifact_id, request.thread_id, request.id, commentId].filter(Boolean),
          ),
          outcome: outcome.status === 'answered' ? 'ok' : 'error',
          error_code: outcome.status === 'answered' ? null : (outcome.errorCode ?? 'failed'),
          duration_ms: Math.max(0, now - (request.started_at ?? now)),
          created_at: now,
          agent: request.agent,
        })
        .execute();
    }
    return commentId;
  });
  if (request.artifact_id) {
    deps.threads.publish({ artifactId: request.artifact_id, threadId: request.thread_id, change: 'replied' });
  }
  return commentId;
}
