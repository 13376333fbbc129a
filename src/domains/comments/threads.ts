import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';
import type { Anchors } from '../documents/anchors.ts';
import type { Db } from '../../storage/schema.ts';

/** Replies shown per thread; older ones are left out and `more_replies` says so. */
export const REPLY_CAP = 20;

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

async function labels(db: Db, ids: (string | null)[]): Promise<Map<string, string>> {
  const wanted = [...new Set(ids.filter((id): id is string => id !== null))];
  if (wanted.length === 0) return new Map();
  const rows = await db.selectFrom('people').select(['id', 'name']).where('id', 'in', wanted).execute();
  return new Map(rows.map((r) => [r.id, r.name]));
}

/** A document's threads (open ones, or all), with their latest replies and where their anchors stand now. */
export async function readThreads(
  { db }: Deps,
  anchors: Anchors,
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
    ? await db.selectFrom('comments').selectAll().where('thread_id', 'in', ids).orderBy('id', 'asc').execute()
    : [];
  const requests = ids.length
    ? await db
        .selectFrom('agent_requests')
        .select(['thread_id', 'agent'])
        .where('thread_id', 'in', ids)
        .execute()
    : [];
  const names = await labels(db, [...threads.map((t) => t.author_id), ...replies.map((r) => r.author_id)]);
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
