import type { Transaction } from 'kysely';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole, type Artifact } from '../policies/artifacts.ts';
import type { Anchors } from '../documents/anchors.ts';
import type { Database } from '../../storage/schema.ts';
import { recordMentions } from './record-mentions.ts';

const MAX_BODY = 20_000;

export interface CommentInput {
  document_id?: unknown;
  body_markdown?: unknown;
  thread_id?: unknown;
  anchor_excerpt?: unknown;
}

export interface ResolveInput {
  document_id?: unknown;
  thread_id?: unknown;
  resolved?: unknown;
}

function requireBody(body: unknown): string {
  if (typeof body !== 'string' || body.trim() === '')
    throw invalid('body_markdown must be a non-empty string');
  if (body.length > MAX_BODY) throw invalid(`body_markdown must be at most ${MAX_BODY} characters`);
  return body;
}

/**
 * What follows a new comment in its transaction: its mentions, its events (created, and one per
 * agent it mentions) and the caller's own step. A new thread is its own first comment.
 */
async function commented(
  deps: Deps,
  trx: Transaction<Database>,
  actor: Actor,
  artifact: Artifact,
  threadId: string,
  commentId: string | null,
  body: string,
  options: WriteOptions,
) {
  const mentions = await recordMentions(trx, actor, artifact, threadId, commentId, body);
  const event = { workspaceId: actor.workspaceId, actorId: actor.personId, artifactId: artifact.id };
  const data = { document_id: artifact.id, thread_id: threadId, body };
  await deps.emit(trx, { type: 'comment.created', ...event, data }, options.origin);
  for (const agent of mentions.agents) {
    await deps.emit(trx, { type: 'comment.mentioned', ...event, data: { ...data, agent } }, options.origin);
  }
  await options.within?.(trx, { thread_id: threadId, comment_id: commentId ?? threadId });
  return mentions;
}

export async function addComment(
  deps: Deps,
  anchors: Anchors,
  actor: Actor,
  input: CommentInput,
  options: WriteOptions = {},
) {
  const { db } = deps;
  const body = requireBody(input.body_markdown);
  if (input.thread_id !== undefined && input.thread_id !== null && typeof input.thread_id !== 'string') {
    throw invalid('thread_id must be a string');
  }
  if (
    input.anchor_excerpt !== undefined &&
    input.anchor_excerpt !== null &&
    typeof input.anchor_excerpt !== 'string'
  ) {
    throw invalid('anchor_excerpt must be a string');
  }
  const threadId = typeof input.thread_id === 'string' && input.thread_id !== '' ? input.thread_id : null;
  const excerpt =
    typeof input.anchor_excerpt === 'string' && input.anchor_excerpt !== '' ? input.anchor_excerpt : null;

  // The anchor is found in the live text first; the transaction then checks the role again.
  const before = await artifactFor(db, actor, input.document_id);
  requireRole(before, 'commenter');
  const anchor = threadId || excerpt === null ? null : await anchors.locate(before.artifact, excerpt);
  const outcome = await db.transaction().execute(async (trx) => {
    const access = await artifactFor(trx, actor, before.artifact.id);
    requireRole(access, 'commenter');
    const now = Date.now();
    if (threadId) {
      const thread = await trx
        .selectFrom('threads')
        .select(['id', 'artifact_id'])
        .where('id', '=', threadId)
        .executeTakeFirst();
      if (!thread || thread.artifact_id !== access.artifact.id) {
        throw new DomainError('thread_not_found', `Thread ${threadId} is not a thread on this artifact`);
      }
      const commentId = newId('cmt');
      await trx
        .insertInto('comments')
        .values({
          id: commentId,
          thread_id: threadId,
          author_id: actor.personId,
          body,
          deleted: 0,
          created_at: now,
        })
        .execute();
      const mentions = await commented(deps, trx, actor, access.artifact, threadId, commentId, body, options);
      return {
        artifact: access.artifact,
        reply: true as const,
        thread_id: threadId,
        comment_id: commentId,
        mentions,
      };
    }
    const id = newId('thr');
    await trx
      .insertInto('threads')
      .values({
        id,
        artifact_id: access.artifact.id,
        author_id: actor.personId,
        body,
        anchor_excerpt: anchor === null ? null : excerpt,
        anchor_start: anchor?.start ?? null,
        anchor_rel_start: anchor?.relStart ?? null,
        anchor_rel_end: anchor?.relEnd ?? null,
        status: 'open',
        resolved_by: null,
        resolved_at: null,
        created_at: now,
      })
      .execute();
    const mentions = await commented(deps, trx, actor, access.artifact, id, null, body, options);
    return {
      artifact: access.artifact,
      reply: false as const,
      thread_id: id,
      anchored: anchor !== null,
      mentions,
    };
  });

  deps.threads.publish({
    artifactId: outcome.artifact.id,
    threadId: outcome.thread_id,
    change: outcome.reply ? 'replied' : 'created',
  });
  const common = {
    document_id: outcome.artifact.id,
    thread_id: outcome.thread_id,
    notified: outcome.mentions.notified,
    agents_requested: outcome.mentions.agents,
  };
  if (outcome.reply) return { ...common, reply: true as const, comment_id: outcome.comment_id };
  return {
    ...common,
    reply: false as const,
    anchored: outcome.anchored,
    ...(excerpt !== null && !outcome.anchored ? { anchor_excerpt_ignored: excerpt } : {}),
  };
}

export async function resolveThread(deps: Deps, actor: Actor, input: ResolveInput) {
  const { db } = deps;
  if (typeof input.resolved !== 'boolean') throw invalid('resolved must be a boolean');
  const resolved = input.resolved;
  const outcome = await db.transaction().execute(async (trx) => {
    const access = await artifactFor(trx, actor, input.document_id);
    requireRole(access, 'commenter');
    const threadId = typeof input.thread_id === 'string' ? input.thread_id : '';
    const thread = await trx
      .selectFrom('threads')
      .select(['id', 'artifact_id', 'status'])
      .where('id', '=', threadId)
      .executeTakeFirst();
    if (!thread || thread.artifact_id !== access.artifact.id) {
      throw new DomainError(
        'thread_not_found',
        `Thread ${threadId || '(none given)'} is not a thread on this artifact`,
      );
    }
    const status: 'resolved' | 'open' = resolved ? 'resolved' : 'open';
    if (thread.status !== status) {
      await trx
        .updateTable('threads')
        .set({
          status,
          resolved_by: resolved ? actor.personId : null,
          resolved_at: resolved ? Date.now() : null,
        })
        .where('id', '=', thread.id)
        .execute();
    }
    return {
      document_id: access.artifact.id,
      thread_id: thread.id,
      status,
      changed: thread.status !== status,
    };
  });
  if (outcome.changed) {
    deps.threads.publish({
      artifactId: outcome.document_id,
      threadId: outcome.thread_id,
      change: outcome.status === 'resolved' ? 'resolved' : 'reopened',
    });
  }
  return outcome;
}
