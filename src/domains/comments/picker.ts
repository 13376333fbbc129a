import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { ASSISTANT } from './mentions.ts';

/** How many people the mention picker is offered (it filters them as one types). */
const PEOPLE_CAP = 500;

export interface Mentionables {
  people: { handle: string; name: string }[];
  /** `Assistant` first, then the workspace's installed agents. */
  agents: string[];
}

/**
 * The handles the app's mention picker offers: the workspace's people and its installed agents
 * (the assistant first). Retired handles still work when typed but are not offered.
 */
export async function mentionables(db: Db, actor: Actor): Promise<Mentionables> {
  const [people, agents] = await Promise.all([
    db
      .selectFrom('people')
      .select(['handle', 'name'])
      .where('workspace_id', '=', actor.workspaceId)
      .orderBy('name', 'asc')
      .limit(PEOPLE_CAP)
      .execute(),
    db
      .selectFrom('agents')
      .select('handle')
      .where('workspace_id', '=', actor.workspaceId)
      .orderBy('handle', 'asc')
      .execute(),
  ]);
  const installed = agents.map((a) => a.handle).filter((h) => h.toLowerCase() !== ASSISTANT.toLowerCase());
  return { people: people.filter((p) => p.handle !== ''), agents: [ASSISTANT, ...installed] };
}
