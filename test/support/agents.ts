import assert from 'node:assert/strict';
import type { ToolCaller } from './harness.ts';
import { ok } from './results.ts';

type Json = Record<string, unknown>;

export interface ReplyView {
  comment_id: string;
  author_label: string;
  body: string;
}

export interface ThreadView {
  thread_id: string;
  author_label: string;
  body: string;
  replies: ReplyView[];
}

/** The text of every message of a chat completions request, joined (tool results included). */
export function messageText(request: Json): string {
  const messages = (request.messages ?? []) as { content?: unknown }[];
  return messages
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as { text?: string }[]).map((p) => p.text ?? '').join('')
          : '',
    )
    .join('\n');
}

/** Starts a thread (or replies in one) through add_comment and returns its result. */
export async function comment(caller: ToolCaller, documentId: string, body: string, threadId?: string) {
  return ok(
    await caller.call('add_comment', {
      document_id: documentId,
      body_markdown: body,
      ...(threadId ? { thread_id: threadId } : {}),
    }),
  ) as { thread_id: string; agents_requested: string[]; comment_id?: string };
}

/** One thread as read_comments shows it to the caller. */
export async function threadOf(
  caller: ToolCaller,
  documentId: string,
  threadId: string,
): Promise<ThreadView> {
  const read = ok(await caller.call('read_comments', { document_id: documentId, include_resolved: true }));
  const thread = (read.threads as ThreadView[]).find((t) => t.thread_id === threadId);
  assert.ok(thread, `thread ${threadId} is on ${documentId}`);
  return thread;
}

/** The replies in a thread written by the given agent. */
export const repliesBy = (thread: ThreadView, agent: string) =>
  thread.replies.filter((r) => r.author_label === agent);
