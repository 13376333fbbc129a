import { log as logger } from '../../observability/log.ts';
import type { Transaction } from 'kysely';
import { newId } from '../../ids.ts';
import { compiled, compiledRow } from '../../storage/compiled.ts';
import { packText } from '../../storage/packed.ts';
import type { Database } from '../../storage/schema.ts';
import type { EventOrigin } from '../automations/events.ts';
import type { Deps } from '../deps.ts';
import type { DocLog } from './doc-log.ts';
import { marksOf, type LiveDoc, type StoredMark, type Unsaved, type VersionRow } from './live-doc.ts';
import { DELTA_CHAIN, digestDelta, digestEntries, projection, storedDigest } from './model.ts';

/** After this many stored changes, the log is folded into a new snapshot. */
export const FOLD_AFTER = 50;

export interface PersistOptions {
  reason: 'agent_edit' | 'edit';
  authorId: string | null;
  instruction: string | null;
  /**
   * An agent write's version row (staged before it landed), completed with the version the
   * write produced and that version's digest as it is to be stored (whole, or the change from
   * the last one stored); stored in the same transaction as the write.
   */
  agentRow?: { id: string; complete(version: number, digest: string): VersionRow };
  /** Runs inside the write's transaction with the version it produced (see WriteOptions). */
  within?: (trx: Transaction<Database>, version: number) => Promise<void>;
  /** Who edited, for the `document.edited` event recorded with the write (none: no event). */
  edited?: { actorId: string; by: 'person' | 'agent'; mode?: string; origin?: EventOrigin | undefined };
}

/**
 * Stores a live document as it now is and moves its version on by one, recording a version
 * row: a person's `edit`, or the agent write's own row (`agentRow`). Rows of agent writes staged
 * on this copy are stored first. Returns the new version.
 */
export function persister(deps: Deps, log: DocLog, stored: (live: LiveDoc, marks: StoredMark[]) => void) {
  const { db } = deps;

  async function persist(live: LiveDoc, opts: PersistOptions): Promise<number> {
    const staged = live.staged.slice();
    let taken: Unsaved[] = [];
    // The digest stored with this version: its entries, and whether it went as a change.
    let entries: readonly string[] | undefined;
    let delta: string | null = null;
    let result: { version: number; seq: number | null };
    try {
      result = await db.transaction().execute(async (trx) => {
        const now = Date.now();
        // Stores of one document take turns (the lock holds until the transaction ends).
        const { version: before, workspace_id } = await log.lock(trx, live.id);
        const version = before + 1;
        await log.takeIn(trx, live);
        // What is stored is the document at one moment: its text, its digest, its row and the
        // changes not stored yet.
        // PostgreSQL text cannot hold U+0000; what a live document held from before it was refused reads as U+FFFD.
        const markdown = projection(live.doc).replaceAll('\u0000', '\uFFFD');
        entries = digestEntries(live.doc);
        delta =
          live.digestEntries && live.digestVersion !== undefined && live.digestChain < DELTA_CHAIN
            ? digestDelta(live.digestVersion, live.digestEntries, entries)
            : null;
        const digest = delta ?? storedDigest(live.doc);
        const agentRow = opts.agentRow?.complete(version, digest);
        taken = live.unsaved.splice(0);
        // The text and the version move together, in one write of the row.
        await storeText(trx, live.id, version, now, markdown);
        for (const row of staged) {
          if (row.id === agentRow?.id) continue;
          await trx
            .insertInto('checkpoints')
            .values(row)
            .onConflict((oc) => oc.column('id').doNothing())
            .execute();
        }
        if (agentRow) {
          await storeAgentRow(trx, agentRow);
        } else if (opts.reason === 'edit') {
          await trx
            .insertInto('checkpoints')
            .values({
              id: newId('ver'),
              artifact_id: live.id,
              doc_version: version,
              reason: 'edit',
              label: null,
              pinned: 0,
              author_id: opts.authorId,
              instruction: opts.instruction,
              content: packText(markdown),
              kept_json: null,
              blocks_json: digest,
              created_at: now,
            })
            .execute();
        }
        const seq = await log.append(trx, live.id, taken);
        if (opts.edited) {
          const { actorId, by, mode, origin } = opts.edited;
          await deps.emit(
            trx,
            {
              type: 'document.edited',
              workspaceId: workspace_id,
              actorId,
              artifactId: live.id,
              data: { document_id: live.id, version, ...(mode ? { mode } : {}), by },
            },
            origin,
          );
        }
        await opts.within?.(trx, version);
        return { version, seq };
      });
    } catch (error) {
      // Nothing was stored: the changes are still to be stored, by the next store.
      live.unsaved.unshift(...taken);
      throw error;
    }
    if (result.seq !== null) {
      // Every entry before it was taken in under the lock.
      live.lastSeq = Math.max(live.lastSeq, result.seq);
      live.logged++;
    }
    const done = new Set(staged.map((row) => row.id));
    if (opts.agentRow) done.add(opts.agentRow.id);
    live.staged = live.staged.filter((row) => !done.has(row.id));
    // Every store holds its version's digest: a person's row, or the write's own.
    live.digestVersion = result.version;
    live.digestEntries = entries;
    live.digestChain = delta ? live.digestChain + 1 : 0;
    stored(live, marksOf(taken));
    if (live.logged >= FOLD_AFTER) {
      // The version is stored; a fold that fails leaves a longer log, tried again next time.
      try {
        stored(live, marksOf(await log.fold(live)));
      } catch (error) {
        logger.error({ err: error, document: live.id }, 'could not fold the update log');
      }
    }
    return result.version;
  }

  return { persist };
}

/** A document's text and version, moved together (compiled once: every store writes it). */
const storeText = compiled((db, id: string, version: number, at: number, content: string) =>
  db.updateTable('artifacts').set({ version, updated_at: at, content }).where('id', '=', id),
);

/** Every column of a version row: what a write's own row sets (a column it leaves out is null). */
const CHECKPOINT_COLUMNS = [
  'id',
  'artifact_id',
  'doc_version',
  'reason',
  'label',
  'pinned',
  'author_id',
  'instruction',
  'content',
  'kept_json',
  'blocks_json',
  'result_version',
  'result_blocks_json',
  'changes_json',
  'created_at',
] as const;

/**
 * A write's own version row, with what the write produced. The row may already be stored without
 * the result, by a store during the write: then the result is added to it.
 */
const storeAgentRow = compiledRow(CHECKPOINT_COLUMNS, (db, row: VersionRow) =>
  db
    .insertInto('checkpoints')
    .values(row)
    .onConflict((oc) =>
      oc.column('id').doUpdateSet((eb) => ({
        result_version: eb.ref('excluded.result_version'),
        result_blocks_json: eb.ref('excluded.result_blocks_json'),
        kept_json: eb.ref('excluded.kept_json'),
        changes_json: eb.ref('excluded.changes_json'),
      })),
    ),
);
