import { notify } from '../activity/notify.ts';
import { sql } from 'kysely';
import { newId } from '../../ids.ts';
import { SCOPES, type Actor } from '../workspace/actor.ts';
import { effectiveRole, type Artifact } from '../policies/artifacts.ts';
import type { Db } from '../../storage/schema.ts';
import { findMentions, resolveMentions } from './mentions.ts';

/**
 * The mentions of a person's new comment, in the comment's transaction. People mentioned get a
 * notification when they can open the artifact (others are not told it exists); each agent
 * mentioned gets one request, which the agent worker answers in the thread. Only people's
 * comments come here: an agent's reply never asks an agent anything. Each request keeps the
 * scopes of the credential that wrote the mention: the agent answering it may do no more.
 */
export async function recordMentions(
  trx: Db,
  actor: Actor,
  artifact: Artifact,
  threadId: string,
  commentId: string | null,
  body: string,
): Promise<{ notified: number; agents: string[] }> {
  const handles = findMentions(body);
  if (handles.length === 0) return { notified: 0, agents: [] };
  const lowered = handles.map((h) => h.toLowerCase());
  const [people, agents] = await Promise.all([
    trx
      .selectFrom('people')
      .select(['id', 'handle'])
      .where('workspace_id', '=', actor.workspaceId)
      .where(sql<string>`lower(handle)`, 'in', lowered)
      .execute(),
    trx.selectFrom('agents').select('handle').where('workspace_id', '=', actor.workspaceId).execute(),
  ]);
  const resolved = resolveMentions(handles, {
    people: new Map(people.map((p) => [p.handle.toLowerCase(), p.id])),
    agents: agents.map((a) => a.handle),
  });
  const now = Date.now();
  const author = await trx
    .selectFrom('people')
    .select('name')
    .where('id', '=', actor.personId)
    .executeTakeFirst();
  let notified = 0;
  for (const personId of resolved.personIds) {
    if (personId === actor.personId || !(await effectiveRole(trx, personId, artifact))) continue;
    notified++;
    await notify(trx, {
      workspaceId: actor.workspaceId,
      personId,
      kind: 'mention',
      actorId: actor.personId,
      artifactId: artifact.id,
      threadId,
      body: `${author?.name ?? 'Someone'} mentioned you on “${artifact.title}”: ${body.slice(0, 280)}`,
    });
  }
  for (const agent of resolved.agents) {
    const requestId = newId('req');
    await trx
      .insertInto('agent_requests')
      .values({
        id: requestId,
        thread_id: threadId,
        comment_id: commentId,
        agent,
        requested_by: actor.personId,
        status: 'pending',
        created_at: now,
        workspace_id: actor.workspaceId,
        artifact_id: artifact.id,
        available_at: now,
        claims: 0,
        scopes: SCOPES.filter((s) => actor.scopes.has(s)).join(' '),
      })
      .execute();
    await trx
      .insertInto('activity')
      .values({
        id: newId('act'),
        workspace_id: actor.workspaceId,
        person_id: actor.personId,
        tool: 'agent_request',
        targets_json: JSON.stringify([artifact.id, threadId, requestId]),
        outcome: 'ok',
        error_code: null,
        duration_ms: 0,
        created_at: now,
        agent,
      })
      .execute();
  }
  return { notified, agents: resolved.agents };
}
