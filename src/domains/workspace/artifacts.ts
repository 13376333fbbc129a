import { postMessage } from './messages.ts';
import { newId } from '../../ids.ts';
import { DomainError, invalid } from '../../errors.ts';
import type { Actor } from './actor.ts';
import { conversationFor, podFor, type Artifact } from '../policies/artifacts.ts';
import { compiled } from '../../storage/compiled.ts';
import type { Db } from '../../storage/schema.ts';

export type ArtifactType = 'document' | 'html_app' | 'table';
export type ArtifactScope = 'user' | 'pod' | 'org';

export interface PlacementInput {
  conversation_id?: unknown;
  scope?: unknown;
  pod_id?: unknown;
  /** The role the pod's members or the workspace get (the app asks; tools leave it editor). */
  scope_role?: unknown;
}

export interface Placement {
  scope: ArtifactScope;
  podId: string | null;
  conversationId: string | null;
  /** What the audience of a pod or org scope may do; editor unless said otherwise. */
  scopeRole?: AudienceRole;
}

export const AUDIENCE_ROLES = ['editor', 'commenter', 'viewer'] as const;
export type AudienceRole = (typeof AUDIENCE_ROLES)[number];

export const isAudienceRole = (value: unknown): value is AudienceRole =>
  typeof value === 'string' && (AUDIENCE_ROLES as readonly string[]).includes(value);

/**
 * Where a new artifact goes. Runs inside the create's transaction, so the access gates
 * (participation in the conversation, membership of the pod) hold for the write itself.
 */
export async function resolvePlacement(trx: Db, actor: Actor, input: PlacementInput): Promise<Placement> {
  const hasConversation = input.conversation_id !== undefined && input.conversation_id !== null;
  const hasScope = input.scope !== undefined && input.scope !== null;
  if (hasConversation && hasScope) throw invalid('Pass either conversation_id or scope, not both');
  if (hasConversation) {
    if (input.pod_id !== undefined && input.pod_id !== null) {
      throw invalid('pod_id goes with scope pod, not with conversation_id');
    }
    const conversation = await conversationFor(trx, actor, input.conversation_id);
    if (conversation.archived) {
      throw new DomainError(
        'conversation_archived',
        'That conversation is archived or gone, so nothing was created.',
        {
          prefixed: false,
        },
      );
    }
    return { scope: 'user', podId: null, conversationId: conversation.id };
  }
  const hasPod = input.pod_id !== undefined && input.pod_id !== null;
  const scope = hasScope ? input.scope : hasPod ? 'pod' : 'user';
  if (scope !== 'user' && scope !== 'pod' && scope !== 'org') throw invalid('scope must be user, pod or org');
  const hasRole = input.scope_role !== undefined && input.scope_role !== null;
  if (hasRole && !isAudienceRole(input.scope_role)) {
    throw invalid('scope_role must be editor, commenter or viewer');
  }
  if (hasRole && scope === 'user')
    throw invalid('scope_role goes with scope pod or org, not with scope user');
  const scopeRole = hasRole ? (input.scope_role as AudienceRole) : 'editor';
  if (scope === 'pod') {
    if (!hasPod) throw invalid('pod_id is required for scope pod');
    const pod = await podFor(trx, actor, input.pod_id);
    return { scope, podId: pod.id, conversationId: null, scopeRole };
  }
  if (hasPod) throw invalid(`pod_id goes with scope pod, not with scope ${scope}`);
  return { scope, podId: null, conversationId: null, scopeRole };
}

export interface NewArtifact {
  type: ArtifactType;
  title: string;
  ownerId: string;
  placement: Placement;
  content: string | null;
  tableJson?: string | null;
  version: number;
  status?: 'active' | 'archived';
}

/** Stores a new artifact; one with a scope gets its own chat, one in a conversation lives there. */
export async function insertArtifact(trx: Db, workspaceId: string, input: NewArtifact): Promise<Artifact> {
  const now = Date.now();
  let chatId: string | null = null;
  if (!input.placement.conversationId) {
    chatId = newId('cnv');
    await trx
      .insertInto('conversations')
      .values({
        id: chatId,
        workspace_id: workspaceId,
        title: input.title,
        kind: 'artifact',
        archived: 0,
        created_at: now,
      })
      .execute();
  }
  const artifact: Artifact = {
    id: newId(input.type === 'html_app' ? 'pg' : input.type === 'table' ? 'tbl' : 'doc'),
    workspace_id: workspaceId,
    type: input.type,
    title: input.title,
    owner_id: input.ownerId,
    scope: input.placement.scope,
    pod_id: input.placement.podId,
    conversation_id: input.placement.conversationId,
    chat_id: chatId,
    status: input.status ?? 'active',
    version: input.version,
    content: input.content,
    table_json: input.tableJson ?? null,
    created_at: now,
    updated_at: now,
  };
  await trx.insertInto('artifacts').values(artifact).execute();
  if (input.placement.scopeRole && input.placement.scopeRole !== 'editor') {
    await trx
      .insertInto('artifact_scope_roles')
      .values({ artifact_id: artifact.id, role: input.placement.scopeRole })
      .execute();
  }
  return artifact;
}

const NOUN: Record<string, string> = { html_app: 'page', document: 'document', table: 'table' };

/** Posts the "artifact created" card into the room the artifact was created in. */
export async function postArtifactCard(
  trx: Db,
  actor: Actor,
  artifact: Artifact,
  authorName: string,
): Promise<void> {
  if (!artifact.conversation_id) return;
  const noun = NOUN[artifact.type] ?? 'artifact';
  await postMessage(trx, {
    conversationId: artifact.conversation_id,
    authorId: actor.personId,
    body: `${authorName} created the ${noun} “${artifact.title}”.`,
    card: {
      type: 'artifact',
      action: 'created',
      artifact_id: artifact.id,
      artifact_type: artifact.type,
      title: artifact.title,
    },
  });
}

export async function personName(db: Db, personId: string): Promise<string> {
  const [row] = (await nameOf(db, personId)).rows;
  return row?.name ?? 'Someone';
}

const nameOf = compiled((db, personId: string) =>
  db.selectFrom('people').select('name').where('id', '=', personId),
);

export function requireTitle(title: unknown): string {
  if (typeof title !== 'string' || title.trim() === '') throw invalid('title must be a non-empty string');
  if (title.length > 500) throw invalid('title must be at most 500 characters');
  return title;
}
