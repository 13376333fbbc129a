import { log } from '../../observability/log.ts';
import { invalid } from '../../errors.ts';
import type { Db } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';
import { artifactFor, isPodMember, scopeRole, type Artifact } from '../policies/artifacts.ts';
import type { Role } from '../policies/roles.ts';
import { mayShare, sharedArtifactFor } from '../policies/sharing.ts';
import type { Actor } from './actor.ts';
import { isAudienceRole, type ArtifactScope, type AudienceRole } from './artifacts.ts';

/** At most this many people are added to one artifact by name. */
export const PEOPLE_MAX = 200;

export interface Sharing {
  scope: ArtifactScope;
  pod_id?: string;
  scope_role: AudienceRole;
  people: { user_id: string; name: string; role: AudienceRole }[];
}

export interface SharingInput {
  scope?: unknown;
  pod_id?: unknown;
  scope_role?: unknown;
  people?: unknown;
}

/** Told, once a change committed, that who may open an artifact changed (`fromPeer`: another instance's). */
export type SharingListener = (artifactId: string, fromPeer: boolean) => void;

/**
 * Who can open an artifact: its audience (only the people added, a pod the owner belongs to, or
 * everyone in the workspace, with the role that audience gets) and the people added by name,
 * each with a role. Only its owner and workspace admins see or change it; to anyone else it is
 * not found. A change applies at once: listeners (the live socket) are told when it committed.
 */
export function sharingService(deps: Deps) {
  const { db } = deps;
  const listeners = new Set<SharingListener>();

  async function describe(trx: Db, artifact: Artifact): Promise<Sharing> {
    const people = await trx
      .selectFrom('artifact_roles')
      .innerJoin('people', 'people.id', 'artifact_roles.person_id')
      .select(['people.id', 'people.name', 'artifact_roles.role'])
      .where('artifact_roles.artifact_id', '=', artifact.id)
      .orderBy('people.name')
      .execute();
    const scope = artifact.scope as ArtifactScope;
    return {
      scope,
      ...(scope === 'pod' && artifact.pod_id ? { pod_id: artifact.pod_id } : {}),
      scope_role: (await scopeRole(trx, artifact.id)) as AudienceRole,
      people: people
        .filter((p) => isAudienceRole(p.role))
        .map((p) => ({ user_id: p.id, name: p.name, role: p.role as AudienceRole })),
    };
  }

  /** What the person may do with an artifact they can open: their role, and whether they may share it. */
  async function rights(actor: Actor, artifactId: unknown): Promise<{ role: Role; may_share: boolean }> {
    const access = await artifactFor(db, actor, artifactId);
    return { role: access.role, may_share: await mayShare(db, actor, access) };
  }

  async function get(actor: Actor, artifactId: unknown): Promise<Sharing> {
    const { artifact } = await sharedArtifactFor(db, actor, artifactId);
    return describe(db, artifact);
  }

  /** What the Share dialog offers: the workspace's name, the owner's pods, the workspace's people. */
  async function choices(actor: Actor, artifactId: unknown) {
    const { artifact } = await sharedArtifactFor(db, actor, artifactId);
    const [workspace, pods, people] = await Promise.all([
      db.selectFrom('workspaces').select('name').where('id', '=', artifact.workspace_id).executeTakeFirst(),
      db
        .selectFrom('pods')
        .innerJoin('pod_members', 'pod_members.pod_id', 'pods.id')
        .select(['pods.id', 'pods.name'])
        .where('pod_members.person_id', '=', artifact.owner_id)
        .where('pods.workspace_id', '=', artifact.workspace_id)
        .orderBy('pods.name')
        .execute(),
      db
        .selectFrom('people')
        .select(['id', 'name'])
        .where('workspace_id', '=', artifact.workspace_id)
        .where('id', '!=', artifact.owner_id)
        .orderBy('name')
        .limit(1000)
        .execute(),
    ]);
    return {
      workspace_name: workspace?.name ?? 'the workspace',
      pods: pods.map((p) => ({ pod_id: p.id, name: p.name })),
      people: people.map((p) => ({ user_id: p.id, name: p.name })),
    };
  }

  /** Whom a new artifact of this person's can be opened by: their workspace, their pods. */
  async function audiences(actor: Actor) {
    const [workspace, pods] = await Promise.all([
      db.selectFrom('workspaces').select('name').where('id', '=', actor.workspaceId).executeTakeFirst(),
      db
        .selectFrom('pods')
        .innerJoin('pod_members', 'pod_members.pod_id', 'pods.id')
        .select(['pods.id', 'pods.name'])
        .where('pod_members.person_id', '=', actor.personId)
        .where('pods.workspace_id', '=', actor.workspaceId)
        .orderBy('pods.name')
        .execute(),
    ]);
    return {
      workspace_name: workspace?.name ?? 'the workspace',
      pods: pods.map((p) => ({ pod_id: p.id, name: p.name })),
    };
  }

  function checkPeople(raw: unknown, ownerId: string): { user_id: string; role: AudienceRole }[] {
    if (raw === undefined || raw === null) return [];
    if (!Array.isArray(raw)) throw invalid('people must be a list of {user_id, role}');
    if (raw.length > PEOPLE_MAX) throw invalid(`people may name at most ${PEOPLE_MAX} people`);
    const seen = new Set<string>();
    return raw.map((entry: unknown) => {
      const { user_id: userId, role } = (entry ?? {}) as { user_id?: unknown; role?: unknown };
      if (typeof userId !== 'string' || userId === '') throw invalid('each person needs a user_id');
      if (!isAudienceRole(role)) throw invalid('each person’s role must be editor, commenter or viewer');
      if (userId === ownerId) throw invalid('the owner can always open it; leave them out of people');
      if (seen.has(userId)) throw invalid('a person is named twice in people; name each once');
      seen.add(userId);
      return { user_id: userId, role };
    });
  }

  /** Replaces who can open the artifact, checked and written in one transaction. */
  async function put(actor: Actor, artifactId: unknown, input: SharingInput): Promise<Sharing> {
    const result = await db.transaction().execute(async (trx) => {
      const { artifact } = await sharedArtifactFor(trx, actor, artifactId);
      const scope = input.scope;
      if (scope !== 'user' && scope !== 'pod' && scope !== 'org')
        throw invalid('scope must be user, pod or org');
      const role = input.scope_role ?? 'editor';
      if (!isAudienceRole(role)) throw invalid('scope_role must be editor, commenter or viewer');
      let podId: string | null = null;
      if (scope === 'pod') {
        if (typeof input.pod_id !== 'string' || input.pod_id === '') {
          throw invalid('pod_id is required for scope pod');
        }
        const pod = await trx
          .selectFrom('pods')
          .select('id')
          .where('id', '=', input.pod_id)
          .where('workspace_id', '=', artifact.workspace_id)
          .executeTakeFirst();
        if (!pod || !(await isPodMember(trx, pod.id, artifact.owner_id))) {
          throw invalid('pod_id must be a pod the owner belongs to');
        }
        podId = pod.id;
      } else if (input.pod_id !== undefined && input.pod_id !== null) {
        throw invalid(`pod_id goes with scope pod, not with scope ${scope}`);
      }
      const people = checkPeople(input.people, artifact.owner_id);
      if (people.length > 0) {
        const known = await trx
          .selectFrom('people')
          .select('id')
          .where('workspace_id', '=', artifact.workspace_id)
          .where(
            'id',
            'in',
            people.map((p) => p.user_id),
          )
          .execute();
        if (known.length !== people.length)
          throw invalid('people names someone who is not in this workspace');
      }
      await trx
        .updateTable('artifacts')
        .set({ scope, pod_id: podId })
        .where('id', '=', artifact.id)
        .execute();
      await trx.deleteFrom('artifact_scope_roles').where('artifact_id', '=', artifact.id).execute();
      if (role !== 'editor' && scope !== 'user') {
        await trx.insertInto('artifact_scope_roles').values({ artifact_id: artifact.id, role }).execute();
      }
      await trx.deleteFrom('artifact_roles').where('artifact_id', '=', artifact.id).execute();
      if (people.length > 0) {
        await trx
          .insertInto('artifact_roles')
          .values(people.map((p) => ({ artifact_id: artifact.id, person_id: p.user_id, role: p.role })))
          .execute();
      }
      return describe(trx, { ...artifact, scope, pod_id: podId });
    });
    changed(String(artifactId), false);
    return result;
  }

  /** Tells every listener that who may open the artifact changed. */
  function changed(artifactId: string, fromPeer: boolean): void {
    for (const listener of listeners) {
      try {
        listener(artifactId, fromPeer);
      } catch (error) {
        log.error({ err: error }, 'a sharing listener failed');
      }
    }
  }

  function onChange(listener: SharingListener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }

  return { rights, get, choices, audiences, put, changed, onChange };
}

export type SharingService = ReturnType<typeof sharingService>;
