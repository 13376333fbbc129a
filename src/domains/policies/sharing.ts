import { notFound } from '../../errors.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, type ArtifactAccess } from './artifacts.ts';
import { isAdmin } from './automations.ts';

/** Whether this person may change who can open the artifact: its owner, or a workspace admin. */
export async function mayShare(db: Db, actor: Actor, access: ArtifactAccess): Promise<boolean> {
  return access.role === 'owner' || (await isAdmin(db, actor));
}

/**
 * The artifact whose sharing the person may see and change (one they can open, as its owner or
 * a workspace admin), or not found: to anyone else its sharing reads like an artifact that does
 * not exist.
 */
export async function sharedArtifactFor(db: Db, actor: Actor, artifactId: unknown): Promise<ArtifactAccess> {
  const access = await artifactFor(db, actor, artifactId);
  if (!(await mayShare(db, actor, access))) throw notFound();
  return access;
}
