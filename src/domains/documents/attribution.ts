import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';
import { parseChanges } from './changes.ts';
import { requireDocument } from './edit-target.ts';

/** Blocks an agent wrote stay marked this long, unless a person edits them first. */
export const MARKED_FOR_MS = 24 * 3_600_000;
/** At most this many recent writes are looked at. */
const WRITES_LOOKED_AT = 200;

/**
 * The blocks agents wrote to a document in the last day, each with its text as written and who
 * wrote it for whom: the editor marks a block while its text is still that (a person's edit
 * ends the mark). A later write's mark replaces an earlier one's.
 */
export function agentBlocks(deps: Deps, clock: () => number = Date.now) {
  const { db } = deps;
  return async function blocks(actor: Actor, input: { document_id?: unknown }) {
    const { artifact } = await artifactFor(db, actor, input.document_id);
    requireDocument(artifact);
    const rows = await db
      .selectFrom('checkpoints')
      .select(['changes_json', 'created_at'])
      .where('artifact_id', '=', artifact.id)
      .where('reason', '=', 'agent_edit')
      .where('created_at', '>=', clock() - MARKED_FOR_MS)
      .where('changes_json', 'is not', null)
      .orderBy('id', 'desc')
      .limit(WRITES_LOOKED_AT)
      .execute();
    const byId = new Map<string, { block_id: string; text: string; by_label: string; at: number }>();
    for (const row of rows.reverse()) {
      const record = parseChanges(row.changes_json);
      if (!record) continue;
      const by = `${record.agent ?? 'Agent'} for ${record.for ?? 'a person no longer here'}`;
      for (const added of record.added) {
        if (added.text.trim() === '') continue;
        byId.set(added.id, { block_id: added.id, text: added.text, by_label: by, at: row.created_at });
      }
    }
    return { document_id: artifact.id, blocks: [...byId.values()] };
  };
}
