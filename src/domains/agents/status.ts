import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';

export type RequestStatus = 'pending' | 'answering' | 'answered' | 'failed';

/**
 * What the app shows on a thread while an agent works on it: every agent request on an artifact
 * (or one of its threads), for anyone who can open the artifact. `pending` is queued (the
 * workspace's agents are all busy, or no worker has taken it yet), `answering` is under way.
 */
export function agentsService(deps: Deps) {
  const { db } = deps;

  async function requests(actor: Actor, input: { document_id?: unknown; thread_id?: unknown }) {
    const { artifact } = await artifactFor(db, actor, input.document_id);
    let query = db
      .selectFrom('agent_requests')
      .innerJoin('threads', 'threads.id', 'agent_requests.thread_id')
      .leftJoin('people', 'people.id', 'agent_requests.requested_by')
      .select([
        'agent_requests.id',
        'agent_requests.thread_id',
        'agent_requests.comment_id',
        'agent_requests.agent',
        'agent_requests.status',
        'agent_requests.requested_by',
        'agent_requests.created_at',
        'agent_requests.started_at',
        'agent_requests.finished_at',
        'agent_requests.reply_comment_id',
        'agent_requests.flow_version_id',
        'people.name',
      ])
      .where('threads.artifact_id', '=', artifact.id);
    if (typeof input.thread_id === 'string')
      query = query.where('agent_requests.thread_id', '=', input.thread_id);
    const rows = await query.orderBy('agent_requests.id').execute();
    return {
      document_id: artifact.id,
      requests: rows.map((r) => ({
        request_id: r.id,
        thread_id: r.thread_id,
        ...(r.comment_id ? { comment_id: r.comment_id } : {}),
        agent: r.agent,
        status: r.status as RequestStatus,
        requested_by: r.name ?? 'Someone',
        created_at: r.created_at,
        ...(r.started_at !== null ? { started_at: r.started_at } : {}),
        ...(r.finished_at !== null ? { finished_at: r.finished_at } : {}),
        ...(r.reply_comment_id ? { reply_comment_id: r.reply_comment_id } : {}),
        // A draft is its author's until published: only they are told which one it is.
        ...(r.flow_version_id && r.requested_by === actor.personId
          ? { flow_version_id: r.flow_version_id }
          : {}),
      })),
    };
  }

  return { requests };
}

export type AgentsService = ReturnType<typeof agentsService>;
