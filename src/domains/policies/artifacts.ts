import type { Selectable } from 'kysely';
import { DomainError, notFound } from '../../errors.ts';
import { compiled } from '../../storage/compiled.ts';
import type { ArtifactTable, ConversationTable, Db, PodTable } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { highestRole, isRole, roleRank, type Role } from './roles.ts';

/**
 * The one place that answers "may this person do X to this object". Anything the caller
 * cannot reach fails exactly like an id that does not exist.
 */
export type Artifact = Selectable<ArtifactTable>;
export type Conversation = Selectable<ConversationTable>;
export type Pod = Selectable<PodTable>;

/**
 * The columns stored before `content`: everything a check of rights, type or status reads. A
 * query for them alone never reads a row's text (SQLite stops before its overflow pages).
 */
const HEAD_COLUMNS = [
  'id',
  'workspace_id',
  'type',
  'title',
  'owner_id',
  'scope',
  'pod_id',
  'conversation_id',
  'chat_id',
  'status',
  'version',
] as const satisfies readonly (keyof Artifact)[];
export type ArtifactHead = Pick<Artifact, (typeof HEAD_COLUMNS)[number]>;

export interface ArtifactAccess<A extends ArtifactHead = Artifact> {
  artifact: A;
  role: Role;
}

/**
 * The role an artifact's audience gets (its pod's members when scoped to a pod, everyone in the
 * workspace when scoped to it): editor unless its sharing says commenter or viewer.
 */
export async function scopeRole(db: Db, artifactId: string): Promise<Role> {
  const row = await db
    .selectFrom('artifact_scope_roles')
    .select('role')
    .where('artifact_id', '=', artifactId)
    .executeTakeFirst();
  return audienceRole(row?.role);
}

function audienceRole(stored: string | undefined): Role {
  return stored === 'commenter' || stored === 'viewer' ? stored : 'editor';
}

/**
 * The highest role any source gives: owner, explicit role, the artifact's audience (its pod, or
 * everyone in the workspace, with the role its sharing gives them), conversation participation.
 */
export async function effectiveRole(db: Db, personId: string, artifact: ArtifactHead): Promise<Role | null> {
  if (artifact.owner_id === personId) return 'owner';
  const audience = artifact.scope === 'org' || artifact.pod_id ? await scopeRole(db, artifact.id) : null;
  const sources: (Role | null)[] = [artifact.scope === 'org' ? audience : null];
  const explicit = await db
    .selectFrom('artifact_roles')
    .select('role')
    .where('artifact_id', '=', artifact.id)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  if (explicit && isRole(explicit.role)) sources.push(explicit.role);
  if (roleRank(highestRole(sources)) >= roleRank('editor')) return highestRole(sources);
  if (artifact.pod_id && (await isPodMember(db, artifact.pod_id, personId))) sources.push(audience);
  if (artifact.conversation_id && (await isParticipant(db, artifact.conversation_id, personId))) {
    sources.push('editor');
  }
  return highestRole(sources);
}

export async function isPodMember(db: Db, podId: string, personId: string): Promise<boolean> {
  const row = await db
    .selectFrom('pod_members')
    .select('pod_id')
    .where('pod_id', '=', podId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function isParticipant(db: Db, conversationId: string, personId: string): Promise<boolean> {
  const row = await db
    .selectFrom('conversation_participants')
    .select('conversation_id')
    .where('conversation_id', '=', conversationId)
    .where('person_id', '=', personId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Loads an artifact the actor holds any role on, or fails as not found. */
export async function artifactFor(db: Db, actor: Actor, artifactId: unknown): Promise<ArtifactAccess> {
  const id = artifactIdOf(artifactId);
  return withRole(db, actor, (await wholeArtifact(db, id, actor.workspaceId)).rows[0]);
}

/** As `artifactFor`, without the artifact's text: for checks and writes that never read it. */
export async function artifactHeadFor(
  db: Db,
  actor: Actor,
  artifactId: unknown,
): Promise<ArtifactAccess<ArtifactHead>> {
  const id = artifactIdOf(artifactId);
  return withRole(db, actor, (await artifactHead(db, id, actor.workspaceId)).rows[0]);
}

function artifactIdOf(artifactId: unknown): string {
  if (typeof artifactId !== 'string' || artifactId === '') throw notFound();
  return artifactId;
}

/** The artifact with that id in the actor's workspace; any other id is not found. */
const inWorkspace = (db: Db, artifactId: string, workspaceId: string) =>
  db.selectFrom('artifacts').where('id', '=', artifactId).where('workspace_id', '=', workspaceId);
const wholeArtifact = compiled((db, artifactId: string, workspaceId: string) =>
  inWorkspace(db, artifactId, workspaceId).selectAll(),
);
const artifactHead = compiled((db, artifactId: string, workspaceId: string) =>
  inWorkspace(db, artifactId, workspaceId).select(HEAD_COLUMNS),
);

async function withRole<A extends ArtifactHead>(
  db: Db,
  actor: Actor,
  artifact: A | undefined,
): Promise<ArtifactAccess<A>> {
  if (!artifact) throw notFound();
  const role = await effectiveRole(db, actor.personId, artifact);
  if (!role) throw notFound();
  return { artifact, role };
}

/** Refuses writes (`editor`) or comments (`commenter`) the role does not allow, and archived artifacts. */
export function requireRole(access: ArtifactAccess<ArtifactHead>, needed: 'commenter' | 'editor'): void {
  if (roleRank(access.role) < roleRank(needed)) {
    if (access.role === 'viewer') throw new DomainError('read_only', 'This document is read-only for you');
    throw new DomainError('comment_only', 'You can comment on this document but not edit it');
  }
  if (access.artifact.status === 'archived') throw new DomainError('archived', 'This document is archived');
}

/** A conversation the actor participates in, or not found. */
export async function conversationFor(db: Db, actor: Actor, conversationId: unknown): Promise<Conversation> {
  if (typeof conversationId !== 'string' || conversationId === '') throw notFound();
  const conversation = await db
    .selectFrom('conversations')
    .selectAll()
    .where('id', '=', conversationId)
    .where('workspace_id', '=', actor.workspaceId)
    .executeTakeFirst();
  if (!conversation || !(await isParticipant(db, conversation.id, actor.personId))) throw notFound();
  return conversation;
}

/** A pod the actor is a member of, or not found. */
export async function podFor(db: Db, actor: Actor, podId: unknown): Promise<Pod> {
  if (typeof podId !== 'string' || podId === '') throw notFound();
  const pod = await db
    .selectFrom('pods')
    .selectAll()
    .where('id', '=', podId)
    .where('workspace_id', '=', actor.workspaceId)
    .executeTakeFirst();
  if (!pod || !(await isPodMember(db, pod.id, actor.personId))) throw notFound();
  return pod;
}

/** Effective roles of one person on many artifacts, in four queries whatever their number. */
export async function rolesFor(
  db: Db,
  personId: string,
  artifacts: Artifact[],
): Promise<Map<string, Role | null>> {
  const ids = artifacts.map((a) => a.id);
  const out = new Map<string, Role | null>();
  if (ids.length === 0) return out;
  const [explicit, pods, rooms, audiences] = await Promise.all([
    db
      .selectFrom('artifact_roles')
      .select(['artifact_id', 'role'])
      .where('person_id', '=', personId)
      .where('artifact_id', 'in', ids)
      .execute(),
    db.selectFrom('pod_members').select('pod_id').where('person_id', '=', personId).execute(),
    db
      .selectFrom('conversation_participants')
      .select('conversation_id')
      .where('person_id', '=', personId)
      .execute(),
    db
      .selectFrom('artifact_scope_roles')
      .select(['artifact_id', 'role'])
      .where('artifact_id', 'in', ids)
      .execute(),
  ]);
  const roleOf = new Map(explicit.map((r) => [r.artifact_id, r.role]));
  const audienceOf = new Map(audiences.map((r) => [r.artifact_id, r.role]));
  const podSet = new Set(pods.map((p) => p.pod_id));
  const roomSet = new Set(rooms.map((r) => r.conversation_id));
  for (const a of artifacts) {
    if (a.owner_id === personId) {
      out.set(a.id, 'owner');
      continue;
    }
    const explicitRole = roleOf.get(a.id);
    const audience = audienceRole(audienceOf.get(a.id));
    out.set(
      a.id,
      highestRole([
        a.scope === 'org' ? audience : null,
        isRole(explicitRole) ? explicitRole : null,
        a.pod_id && podSet.has(a.pod_id) ? audience : null,
        a.conversation_id && roomSet.has(a.conversation_id) ? 'editor' : null,
      ]),
    );
  }
  return out;
}
