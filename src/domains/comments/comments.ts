import type { Transaction } from 'kysely';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole } from '../policies/artifacts.ts';
import type { Anchors } from '../documents/anchors.ts';
import type { Database } from '../../storage/schema.ts';
import { recordMentions } from './record-mentions.ts';
import { mentionables } from './picker.ts';
import { watchThreads, type WatchListener } from './watch.ts';

/** Replies shown per thread; older ones are left out and `more_replies` says so. */
export const REPLY_CAP = 20;
const MAX_BODY = 20_000;

export interface Reply {
  comment_id: string;
  author_label: string;
  body: string;
  deleted: boolean;
  created_at: number;
}

export interface Thread {
  thread_id: string;
  status: 'open' | 'resolved';
  anchor_excerpt?: string;
  author_label: string;
  body: string;
  created_at: number;
  replies: Reply[];
  more_replies: boolean;
  agent_requests: string[];
  /** Asked for by the app's live editor: where a document's passage stands, as Yjs relative positions. */
  anchor_position?: { rel_start: string; rel_end: string };
}

function anchorField(excerpt: string | null): { anchor_excerpt?: string } {
  return excerpt === null ? {} : { anchor_excerpt: excerpt };
}

function requireBody(body: unknown): string {
  if (typeof body !== 'string' || body.trim() === '')
    throw invalid('body_markdown must be a non-empty string');
  if (body.length > MAX_BODY) throw invalid(`body_markdown must be at most ${MAX_BODY} characters`);
  return body;
}

export function commentsService(deps: Deps, anchors: Anchors) {
  const { db } = deps;

  async function labels(ids: (string | null)[]): Promise<Map<string, string>> {
    const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
    if (wanted.length === 0) return new Map();
    const rows = await db.selectFrom('people').select(['id', 'name']).where('id', 'in', wanted).execute();
    return new Map(rows.map((r) => [r.id, r.name]));
  }

  async function read(
    actor: Actor,
    input: { document_id?: unknown; include_resolved?: unknown },
    view: { positions?: boolean } = {},
  ) {
    const { artifact, role } = await artifactFor(db, actor, input.document_id);
    const includeResolved = input.include_resolved === true;
    let query = db.selectFrom('threads').selectAll().where('artifact_id', '=', artifact.id);
    if (!includeResolved) query = query.where('status', '=', 'open');
    const threads = await query.orderBy('id', 'asc').execute();
    const ids = threads.map((t) => t.id);
    const where = await anchors.current(artifact, threads);
    for (const t of threads) {
      const moved = where.get(t.id)?.moved;
      if (moved) {
        await db
          .updateTable('threads')
          .set({ anchor_start: moved.start, anchor_rel_start: moved.relStart, anchor_rel_end: moved.relEnd })
          .where('id', '=', t.id)
          .execute();
      }
    }
    const replies = ids.length
      ? await db
          .selectFrom('comments')
          .selectAll()
          .where('thread_id', 'in', ids)
          .orderBy('id', 'asc')
          .execute()
      : [];
    const requests = ids.length
      ? await db
          .selectFrom('agent_requests')
          .select(['thread_id', 'agent'])
          .where('thread_id', 'in', ids)
          .execute()
      : [];
    const names = await labels([...threads.map((t) => t.author_id), ...replies.map((r) => r.author_id)]);
    const byThread = new Map<string, typeof replies>();
    for (const r of replies) byThread.set(r.thread_id, [...(byThread.get(r.thread_id) ?? []), r]);
    const result: Thread[] = threads.map((t) => {
      const all = byThread.get(t.id) ?? [];
      const shown = all.slice(-REPLY_CAP);
      const span = view.positions ? where.get(t.id)?.span : undefined;
      return {
        thread_id: t.id,
        status: t.status === 'resolved' ? 'resolved' : 'open',
        ...anchorField(where.get(t.id)?.excerpt ?? null),
        author_label: names.get(t.author_id) ?? 'Someone',
        body: t.body,
        created_at: t.created_at,
        replies: shown.map((r) => ({
          comment_id: r.id,
          // An agent's reply is labelled with the agent's name; it has no person behind it.
          author_label: r.agent ?? names.get(r.author_id ?? '') ?? 'Someone',
          body: r.deleted ? '' : r.body,
          deleted: r.deleted === 1,
          created_at: r.created_at,
        })),
        more_replies: all.length > shown.length,
        agent_requests: [...new Set(requests.filter((q) => q.thread_id === t.id).map((q) => q.agent))],
        ...(span ? { anchor_position: { rel_start: span.relStart, rel_end: span.relEnd } } : {}),
      };
    });
    return { document_id: artifact.id, role, include_resolved: includeResolved, threads: result };
  }

  /** The events of a new comment, in its transaction: created, and one per agent it mentions. */
  async function commentEvents(
    trx: Transaction<Database>,
    actor: Actor,
    artifactId: string,
    threadId: string,
    body: string,
    agents: readonly string[],
    options: WriteOptions,
  ) {
    const event = { workspaceId: actor.workspaceId, actorId: actor.personId, artifactId };
    const data = { document_id: artifactId, thread_id: threadId, body };
    await deps.emit(trx, { type: 'comment.created', ...event, data }, options.origin);
    for (const agent of agents) {
      await deps.emit(trx, { type: 'comment.mentioned', ...event, data: { ...data, agent } }, options.origin);
    }
  }

  async function add(
    actor: Actor,
    input: { document_id?: unknown; body_markdown?: unknown; thread_id?: unknown; anchor_excerpt?: unknown },
    options: WriteOptions = {},
  ) {
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
        const mentions = await recordMentions(trx, actor, access.artifact, threadId, commentId, body);
        await commentEvents(trx, actor, access.artifact.id, threadId, body, mentions.agents, options);
        await options.within?.(trx, { thread_id: threadId, comment_id: commentId });
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
      const mentions = await recordMentions(trx, actor, access.artifact, id, null, body);
      await commentEvents(trx, actor, access.artifact.id, id, body, mentions.agents, options);
      await options.within?.(trx, { thread_id: id, comment_id: id });
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

  async function resolve(
    actor: Actor,
    input: { document_id?: unknown; thread_id?: unknown; resolved?: unknown },
  ) {
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

  return {
    read,
    add,
    resolve,
    mentionables: (actor: Actor) => mentionables(db, actor),
    watch: (actor: Actor, documentId: unknown, listener: WatchListener) =>
      watchThreads(deps, actor, documentId, listener),
  };
}

export type CommentsService = ReturnType<typeof commentsService>;
