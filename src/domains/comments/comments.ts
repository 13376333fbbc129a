import type { Deps, WriteOptions } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import type { Anchors } from '../documents/anchors.ts';
import { mentionables } from './picker.ts';
import { readThreads } from './threads.ts';
import { watchThreads, type WatchListener } from './watch.ts';
import { addComment, resolveThread, type CommentInput, type ResolveInput } from './write.ts';

export { REPLY_CAP, type Reply, type Thread } from './threads.ts';

/** Comment threads on documents: reading them, adding threads and replies, resolving, watching. */
export function commentsService(deps: Deps, anchors: Anchors) {
  return {
    read: (
      actor: Actor,
      input: { document_id?: unknown; include_resolved?: unknown },
      view: { positions?: boolean } = {},
    ) => readThreads(deps, anchors, actor, input, view),
    add: (actor: Actor, input: CommentInput, options?: WriteOptions) =>
      addComment(deps, anchors, actor, input, options),
    resolve: (actor: Actor, input: ResolveInput) => resolveThread(deps, actor, input),
    mentionables: (actor: Actor) => mentionables(deps.db, actor),
    watch: (actor: Actor, documentId: unknown, listener: WatchListener) =>
      watchThreads(deps, actor, documentId, listener),
  };
}

export type CommentsService = ReturnType<typeof commentsService>;
