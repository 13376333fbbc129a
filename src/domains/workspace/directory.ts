import { DomainError } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import { isAdmin } from '../policies/automations.ts';
import type { Actor } from './actor.ts';

/** What workspace admins see in Settings: the workspace's people and its installed agents. */
export function directoryService(deps: Deps) {
  const { db } = deps;

  async function requireAdmin(actor: Actor): Promise<void> {
    if (!(await isAdmin(db, actor)))
      throw new DomainError('forbidden', 'Only workspace admins can see this part of Settings');
  }

  /** The workspace's people, by name. */
  async function people(actor: Actor) {
    await requireAdmin(actor);
    const rows = await db
      .selectFrom('people')
      .select(['id', 'name', 'email', 'handle', 'admin'])
      .where('workspace_id', '=', actor.workspaceId)
      .orderBy('name')
      .limit(1000)
      .execute();
    return rows.map((r) => ({
      person_id: r.id,
      name: r.name,
      email: r.email,
      handle: r.handle,
      admin: r.admin === 1,
    }));
  }

  /** The agents people can mention: the assistant, always there, then the installed ones. */
  async function agents(actor: Actor) {
    await requireAdmin(actor);
    const rows = await db
      .selectFrom('agents')
      .select(['handle'])
      .where('workspace_id', '=', actor.workspaceId)
      .orderBy('handle')
      .execute();
    return [
      {
        handle: 'Assistant',
        installed: false,
        does: 'Answers questions about the document it is mentioned on.',
      },
      ...rows
        .filter((r) => r.handle !== 'Assistant')
        .map((r) => ({
          handle: r.handle,
          installed: true,
          does:
            r.handle === 'Builder'
              ? 'Drafts an automation from a request, for a person to review and publish.'
              : 'Answers mentions as an installed agent.',
        })),
    ];
  }

  return { people, agents, requireAdmin, isAdmin: (actor: Actor) => isAdmin(db, actor) };
}
