import { z } from 'zod';
import { commentThread } from '../../contract/documents.ts';
import type { Thread } from '../../domains/comments/comments.ts';
import { defineTool, IDEMPOTENT_WRITE, READ_ONLY, specChecked, WRITE } from '../tool.ts';

const documentId = z.string();

const thread = commentThread.extend({
  agent_requests: z.array(z.string()).describe('Agents asked to reply in this thread by a mention.'),
});

function threadText(t: Thread): string {
  const where = t.anchor_excerpt !== undefined ? ` on “${t.anchor_excerpt}”` : ' on the whole artifact';
  const lines = [`Thread ${t.thread_id} (${t.status})${where}`, `${t.author_label}: ${t.body}`];
  if (t.more_replies) lines.push('  (earlier replies not shown)');
  for (const r of t.replies) lines.push(`  ↳ ${r.author_label}: ${r.deleted ? '(deleted)' : r.body}`);
  return lines.join('\n');
}

export const readComments = defineTool({
  name: 'read_comments',
  title: 'Read comment threads',
  description: 'Comment threads on a document or page: open ones, or all with include_resolved.',
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({
    document_id: documentId,
    include_resolved: z.boolean().optional(),
  }),
  output: z.object({
    document_id: z.string(),
    role: z.enum(['owner', 'editor', 'commenter', 'viewer']),
    threads: z.array(thread),
  }),
  async run({ actor, services }, args) {
    const { include_resolved, ...result } = await services.comments.read(actor, args);
    const empty = include_resolved ? 'No comment threads.' : 'No open comment threads.';
    const text = result.threads.length === 0 ? empty : result.threads.map(threadText).join('\n\n');
    return { structured: result, text };
  },
});

export const addComment = defineTool({
  name: 'add_comment',
  title: 'Comment or reply',
  description:
    'Start a thread (anchored to anchor_excerpt if it occurs once) or reply by thread_id. @handle notifies a person; @Assistant or @Builder asks that agent to reply.',
  scope: 'documents:write',
  annotations: WRITE,
  input: z.object({
    document_id: documentId,
    body_markdown: specChecked({ type: 'string', minLength: 1, maxLength: 20000 }, { required: true }),
    thread_id: z.string().optional(),
    anchor_excerpt: z.string().optional(),
  }),
  output: z.object({
    document_id: z.string(),
    thread_id: z.string(),
    reply: z.boolean(),
    comment_id: z.string().optional().describe('Set on a reply.'),
    anchored: z.boolean().optional().describe('Set on a new thread: whether it is anchored to the excerpt.'),
    anchor_excerpt_ignored: z
      .string()
      .optional()
      .describe('The excerpt that could not anchor the new thread.'),
    notified: z.number().int().describe('People notified by a mention.'),
    agents_requested: z.array(z.string()).describe('Agents asked to reply by a mention.'),
  }),
  async run({ actor, services }, args) {
    const result = await services.comments.add(actor, args);
    let text: string;
    if (result.reply) text = `Replied in thread ${result.thread_id} (comment_id: ${result.comment_id}).`;
    else if (result.anchored) text = `Started thread ${result.thread_id}, anchored to the quoted passage.`;
    else if (result.anchor_excerpt_ignored !== undefined) {
      text = `Started thread ${result.thread_id} on the whole artifact: the excerpt does not occur exactly once, so the thread is not anchored.`;
    } else text = `Started thread ${result.thread_id} on the whole artifact.`;
    if (result.notified > 0)
      text += ` Notified ${result.notified} ${result.notified === 1 ? 'person' : 'people'}.`;
    if (result.agents_requested.length > 0)
      text += ` Asked ${result.agents_requested.map((a) => `@${a}`).join(', ')} to reply.`;
    return { structured: result, text };
  },
});

export const resolveComment = defineTool({
  name: 'resolve_comment',
  title: 'Resolve or reopen a thread',
  description: 'Resolve or reopen a comment thread.',
  scope: 'documents:write',
  annotations: IDEMPOTENT_WRITE,
  input: z.object({
    document_id: documentId,
    thread_id: z.string(),
    resolved: specChecked({ type: 'boolean' }, { required: true }),
  }),
  output: z.object({ document_id: z.string(), thread_id: z.string(), status: z.enum(['open', 'resolved']) }),
  async run({ actor, services }, args) {
    const { changed: _changed, ...result } = await services.comments.resolve(actor, args);
    return { structured: result, text: `Thread ${result.thread_id} is now ${result.status}.` };
  },
});

export const commentTools = [readComments, addComment, resolveComment];
