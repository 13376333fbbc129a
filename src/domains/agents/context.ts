import { DomainError } from '../../errors.ts';
import type { Thread } from '../comments/comments.ts';
import { asPerson, type AgentTurn } from './turn.ts';

/** Characters of the artifact put in the first message; the rest is read with the tool. */
export const CONTEXT_CHARS = 12_000;
/** Characters of the thread put in the first message; older replies are left out past it. */
export const THREAD_CHARS = 8_000;
/** Characters of one comment shown; longer ones are cut. */
const COMMENT_CHARS = 3_000;

export interface ArtifactWindow {
  document_id: string;
  title: string;
  type: 'document' | 'html_app' | 'table';
  text: string;
  offset: number;
  size_chars: number;
  truncated: boolean;
}

const KIND: Record<ArtifactWindow['type'], string> = {
  document: 'document',
  html_app: 'page (HTML source)',
  table: 'table (as markdown)',
};

export function kindOf(type: ArtifactWindow['type']): string {
  return KIND[type];
}

/**
 * The artifact's threads, read as the person who asked (the same domain call as read_comments):
 * a person who can no longer open the artifact gets `not_found` and the agent reads nothing.
 */
export function readThreads(turn: AgentTurn, includeResolved = true) {
  const args = { document_id: turn.request.artifact_id, include_resolved: includeResolved };
  return asPerson(turn, { tool: 'read_comments', scope: 'documents:read' }, args, () =>
    turn.services.comments.read(turn.actor, args),
  );
}

/** A window of the artifact's text, read as the person (the same domain call as read_document). */
export async function readArtifact(
  turn: AgentTurn,
  offset = 0,
  window = CONTEXT_CHARS,
): Promise<ArtifactWindow> {
  const args = { document_id: turn.request.artifact_id, offset, window };
  try {
    const read = await asPerson(turn, { tool: 'read_document', scope: 'documents:read' }, args, () =>
      turn.services.documents.read(turn.actor, args),
    );
    return {
      document_id: read.document_id,
      title: read.title,
      type: read.type,
      text: read.markdown,
      offset: read.offset,
      size_chars: read.size_chars,
      truncated: read.truncated,
    };
  } catch (error) {
    // A page or table with nothing stored yet reads as not found; the threads were readable.
    if (error instanceof DomainError && error.code === 'not_found' && !error.prefixed) {
      const { title, type } = await artifactHeading(turn);
      return {
        document_id: turn.request.artifact_id,
        title,
        type,
        text: '',
        offset: 0,
        size_chars: 0,
        truncated: false,
      };
    }
    throw error;
  }
}

async function artifactHeading(turn: AgentTurn) {
  const row = await turn.services.deps.db
    .selectFrom('artifacts')
    .select(['title', 'type'])
    .where('id', '=', turn.request.artifact_id)
    .executeTakeFirstOrThrow();
  return { title: row.title, type: row.type as ArtifactWindow['type'] };
}

function cut(text: string, max = COMMENT_CHARS): string {
  return text.length > max ? `${text.slice(0, max)}… (cut)` : text;
}

/**
 * The thread as the agent is shown it: the opening comment, the replies (the oldest left out
 * past THREAD_CHARS), and which comment asked for the agent.
 */
export function threadText(thread: Thread, requestCommentId: string | null): string {
  const heading =
    thread.anchor_excerpt !== undefined
      ? `Thread on the passage “${cut(thread.anchor_excerpt, 500)}”`
      : 'Thread on the whole artifact';
  const mark = (id: string | null) => (id === requestCommentId ? ' ← the comment you are answering' : '');
  const opening = `${thread.author_label}: ${cut(thread.body)}${mark(null)}`;
  const replies = thread.replies.map(
    (r) => `${r.author_label}: ${r.deleted ? '(deleted)' : cut(r.body)}${mark(r.comment_id)}`,
  );
  let budget = THREAD_CHARS - heading.length - opening.length;
  const kept: string[] = [];
  for (let i = replies.length - 1; i >= 0; i--) {
    const line = replies[i]!;
    const asked = thread.replies[i]!.comment_id === requestCommentId;
    if (line.length > budget && !asked) break;
    budget -= line.length;
    kept.unshift(line);
  }
  const dropped = thread.more_replies || kept.length < replies.length;
  return [heading + ':', opening, ...(dropped ? ['(earlier replies left out)'] : []), ...kept].join('\n\n');
}

/** The thread a request was made in, from the artifact's threads as the person reads them. */
export function requestThread(threads: Thread[], threadId: string): Thread {
  const thread = threads.find((t) => t.thread_id === threadId);
  if (!thread)
    throw new DomainError('thread_not_found', `Thread ${threadId} is not a thread on this artifact`);
  return thread;
}

/** The comment that mentioned the agent, with its author's name. */
export async function askingComment(
  turn: AgentTurn,
  thread: Thread,
): Promise<{ author_label: string; body: string }> {
  const id = turn.request.comment_id;
  if (id === null) return { author_label: thread.author_label, body: thread.body };
  const shown = thread.replies.find((r) => r.comment_id === id);
  if (shown) return { author_label: shown.author_label, body: shown.body };
  // Older than the replies a read shows; the person can read the thread, so it is theirs to see.
  const row = await turn.services.deps.db
    .selectFrom('comments')
    .leftJoin('people', 'people.id', 'comments.author_id')
    .select(['comments.body', 'comments.deleted', 'people.name'])
    .where('comments.id', '=', id)
    .where('comments.thread_id', '=', thread.thread_id)
    .executeTakeFirstOrThrow();
  return { author_label: row.name ?? 'Someone', body: row.deleted ? '' : row.body };
}
