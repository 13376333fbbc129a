import { DomainError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactHeadFor, requireRole } from '../policies/artifacts.ts';
import { personName } from '../workspace/artifacts.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import { recordChanges } from './changes.ts';
import { land } from './edit-land.ts';
import {
  capNextStep,
  checkInput,
  requireDocument,
  resolveTarget,
  type Checked,
  type EditInput,
} from './edit-target.ts';
import type { Lease } from './lease.ts';
import { blocksChanged, storedDigest, type BlockDigest, type VersionDigest } from './model.ts';
import type { DocumentStore, KeptBlock, VersionRow } from './store.ts';
import { packedMarkdown } from './live-doc.ts';

export { MODES, requireDocument, type EditInput, type Mode } from './edit-target.ts';

/**
 * An agent's write to a document, in its phases: the input checked and its target resolved
 * (edit-target.ts), the lease taken and the write checkpointed (here), its text landed in the
 * live document (edit-land.ts), and the write stored with its version row and its record of
 * what it changed (changes.ts).
 */

/** How people connected to a document see an agent writing to it (for the person it acts for). */
const AGENT_NAME = 'Agent';

export interface EditHooks {
  /**
   * Runs once a write has resolved its target and taken the text it checkpoints, before any of
   * it lands; the write waits for it (tests make a person's edit arrive at that moment).
   */
  beforeLanding?: (documentId: string) => Promise<void> | void;
}

export interface EditDeps {
  deps: Deps;
  store: DocumentStore;
  hooks: EditHooks;
  acquire(artifactId: string, holder: string): Promise<Lease>;
  digestAt(artifactId: string, version: number): Promise<VersionDigest | undefined>;
  /** Whether a version row holds the block digest of a version. */
  holdsDigest(artifactId: string, version: number): Promise<boolean>;
}

export function editor({ deps, store, hooks, acquire, digestAt, holdsDigest }: EditDeps) {
  const { db } = deps;

  async function edit(actor: Actor, input: EditInput, options: WriteOptions = {}) {
    const checked = checkInput(input);
    const access = await artifactHeadFor(db, actor, input.document_id);
    requireDocument(access.artifact);
    requireRole(access, 'editor');
    const id = access.artifact.id;

    if (checked.dryRun) {
      const live = await store.open(id);
      await store.refresh(live);
      await store.flush(id);
      const current = await currentVersion(id);
      const target = resolveTarget(live, checked);
      const drift = checked.expected !== undefined && checked.expected !== current;
      const then = drift ? await digestAt(id, checked.expected!) : undefined;
      checkVersion(checked, current, then && blocksChanged(then.blocks, then.current(live.doc)));
      return {
        dry_run: true as const,
        document_id: id,
        mode: checked.mode,
        resolved: true,
        block_ids: target.blocks.map((b) => b.map.get('id') as string),
        current_version: current,
        version_drift: checked.expected !== undefined && checked.expected !== current,
      };
    }

    const lease = await acquire(id, newId('lease'));
    let live: Awaited<ReturnType<typeof store.open>>;
    try {
      live = await store.open(id);
    } catch (error) {
      // A document that fails to load must not keep its lease (later writes would wait on it).
      await lease.release();
      throw error;
    }
    const watch = store.beginWrite(live);
    try {
      // What other processes and people stored comes in first; then, within the lease, the role
      // is checked again, and the version the write starts from read with it.
      await store.refresh(live);
      await store.flush(id);
      const recheck = await artifactHeadFor(db, actor, id);
      requireRole(recheck, 'editor');
      const target = resolveTarget(live, checked);
      // People connected see the agent writing, and where.
      const writer = { name: AGENT_NAME, for: await personName(db, actor.personId) };
      const show = (blocks: string[]) => store.writing(live, { ...writer, blocks });
      show(target.blocks.map((b) => b.map.get('id') as string));
      const version = recheck.artifact.version;
      const drift = checked.expected !== undefined && checked.expected !== version;
      // The blocks as they were at the version the caller read, when a version row still holds them.
      const then = drift ? await digestAt(id, checked.expected!) : undefined;
      const now = then?.current(live.doc);
      const changed = then && now && blocksChanged(then.blocks, now);
      checkVersion(checked, version, changed);

      // Every agent write is checkpointed before it lands: its row holds the text before it, and
      // the block digest before it unless a version row already holds that version's digest.
      const digestKnown = live.digestVersion === version || (await holdsDigest(id, version));
      const row: VersionRow = {
        id: newId('ver'),
        artifact_id: id,
        doc_version: version,
        reason: 'agent_edit',
        label: null,
        pinned: 0,
        author_id: actor.personId,
        instruction: `edit_document ${checked.mode}`,
        content: packedMarkdown(live),
        kept_json: null,
        blocks_json: digestKnown ? null : storedDigest(live.doc),
        created_at: Date.now(),
      };
      await hooks.beforeLanding?.(id);

      // The row is stored with the write, or with whatever stores part of it first.
      live.staged.push(row);
      // Blocks people changed since the version the caller read are theirs to keep, too.
      const outcome = await land(
        store,
        live,
        checked,
        target,
        watch.removed,
        then && now ? changedBlocks(then.blocks, now) : undefined,
        show,
      );
      if (outcome.gone) {
        live.staged = live.staged.filter((r) => r !== row);
        throw new DomainError(
          'selection_gone',
          'selection_gone: the section you meant to replace was removed before the write landed; nothing was written',
          { data: { error: 'selection_gone' } },
        );
      }
      let kept: KeptBlock[] = [];
      const newVersion = await store.persist(live, {
        // The lease leaves with the write it guarded, in one transaction.
        within: async (trx, version) => {
          await lease.dropIn(trx);
          await options.within?.(trx, {
            document_id: id,
            new_version: version,
            written_chars: outcome.written.length,
          });
        },
        reason: 'agent_edit',
        authorId: actor.personId,
        instruction: null,
        edited: { actorId: actor.personId, by: 'agent', mode: checked.mode, origin: options.origin },
        agentRow: {
          id: row.id,
          complete(result, digest) {
            // Edits people made during the write, up to the moment it is stored, are reported.
            kept = [...outcome.kept, ...watch.kept];
            return {
              ...row,
              result_version: result,
              result_blocks_json: digest,
              kept_json: kept.length > 0 ? JSON.stringify(keptBlocks(kept)) : null,
              // What it changed, read as it is stored: blocks people brought back are not in it.
              changes_json: JSON.stringify({
                ...recordChanges(live.doc, outcome.added, watch.removed, outcome.changed),
                agent: writer.name,
                for: writer.for,
              }),
            };
          },
        },
      });
      lease.stored();
      const rest = checked.content.slice(outcome.written.length);
      return {
        document_id: id,
        mode: checked.mode,
        new_version: newVersion,
        written_chars: outcome.written.length,
        stopped_early: outcome.stop !== undefined,
        ...(outcome.stop ? { stop_reason: outcome.stop } : {}),
        ...(outcome.stop === 'cap' ? { next_step: capNextStep(checked.mode, outcome.written, rest) } : {}),
        ...(outcome.stop === 'anchor_gone'
          ? {
              next_step:
                'Someone removed the section while it was being written; do not add it again. Read the document to see what stands now.',
            }
          : {}),
        ...(checked.expected !== undefined ? { version_drift: drift } : {}),
        ...(changed !== undefined ? { blocks_changed_since: changed } : {}),
        ...(kept.length > 0 ? { kept_blocks: keptBlocks(kept) } : {}),
      };
    } finally {
      store.endWrite(live);
      await lease.release();
    }
  }

  async function currentVersion(id: string): Promise<number> {
    const row = await db
      .selectFrom('artifacts')
      .select('version')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return row.version;
  }

  function checkVersion(checked: Checked, current: number, changed: number | undefined): void {
    if (checked.mode !== 'replace_all' || checked.expected === current) return;
    throw new DomainError(
      'version_conflict',
      `version_conflict: the document moved from version ${checked.expected} to ${current} since your read. Read it again and retry with expected_version ${current}.`,
      {
        data: {
          error: 'version_conflict',
          expected_version: checked.expected,
          current_version: current,
          ...(changed !== undefined ? { blocks_changed_since: changed } : {}),
        },
      },
    );
  }

  return { edit };
}

/** Ids of blocks added or changed between two digests. */
function changedBlocks(then: BlockDigest, now: BlockDigest): Set<string> {
  const before = new Map(then);
  return new Set(now.filter(([id, hash]) => before.get(id) !== hash).map(([id]) => id));
}

function keptBlocks(kept: KeptBlock[]) {
  return { count: kept.length, excerpts: kept.map((k) => k.excerpt) };
}
