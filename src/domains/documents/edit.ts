import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole, type Artifact } from '../workspace/access.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import { findExcerpt, nearestPassages, shorten } from './excerpt.ts';
import type { Lease } from './lease.ts';
import {
  blockArray,
  blockText,
  digestBlocks,
  digestJson,
  isDeleted,
  liveBlocks,
  newBlock,
  positionOf,
  shortId,
  projection,
  type BlockDigest,
  type BlockMap,
} from './model.ts';
import type { DocumentStore, KeptBlock, LiveDoc } from './store.ts';
import { capPrefix, CONTENT_CAP, normalizeNewlines, splitBlocks } from './text.ts';
import { packText } from '../../storage/packed.ts';

export const MODES = ['append', 'replace_section', 'replace_all', 'fill_empty'] as const;
export type Mode = (typeof MODES)[number];

/** New blocks land in steps of this many, so people see a long write arrive and can react. */
const BLOCKS_PER_STEP = 32;

export interface EditInput {
  document_id?: unknown;
  mode?: unknown;
  content_markdown?: unknown;
  section_excerpt?: unknown;
  expected_version?: unknown;
  dry_run?: unknown;
}

interface Checked {
  mode: Mode;
  content: string;
  excerpt: string | undefined;
  expected: number | undefined;
  dryRun: boolean;
}

function checkInput(input: EditInput): Checked {
  const mode = input.mode;
  if (typeof mode !== 'string' || !(MODES as readonly string[]).includes(mode)) {
    throw invalid('mode must be append, replace_section, replace_all or fill_empty');
  }
  if (typeof input.content_markdown !== 'string') throw invalid('content_markdown must be a string');
  let excerpt: string | undefined;
  if (mode === 'replace_section') {
    if (typeof input.section_excerpt !== 'string' || input.section_excerpt.trim() === '') {
      throw invalid('section_excerpt is required for replace_section');
    }
    excerpt = normalizeNewlines(input.section_excerpt);
  }
  const expected = input.expected_version;
  if (expected === undefined) {
    if (mode === 'replace_all') throw invalid('expected_version is required for replace_all');
  } else if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 0) {
    throw invalid('expected_version must be a non-negative integer');
  }
  if (input.dry_run !== undefined && typeof input.dry_run !== 'boolean')
    throw invalid('dry_run must be a boolean');
  return {
    mode: mode as Mode,
    content: normalizeNewlines(input.content_markdown),
    excerpt,
    expected: expected as number | undefined,
    dryRun: input.dry_run === true,
  };
}

/** Only documents are edited here; pages and tables are named with what to use instead. */
export function requireDocument(artifact: Artifact): void {
  if (artifact.type === 'document') return;
  if (artifact.type === 'html_app') {
    throw new DomainError(
      'wrong_type',
      'That artifact is an HTML page, not a document. Use write_page to change it.',
      {
        prefixed: false,
      },
    );
  }
  throw new DomainError(
    'wrong_type',
    'That artifact is a table, and tables cannot be edited with these tools.',
    {
      prefixed: false,
    },
  );
}

interface Target {
  /** Blocks the write replaces (in order), with their text when the write resolved them. */
  blocks: { map: BlockMap; text: string }[];
  /** The block the new text follows; null to start at the top, undefined to go at the end. */
  after: BlockMap | null | undefined;
}

/** Where a write goes, or the refusal the spec gives for it. */
/** Every live block, as a write that replaces them all sees them. */
function everyBlock(live: LiveDoc): Target {
  const blocks = liveBlocks(live.doc);
  return { blocks: blocks.map((b) => ({ map: b.map, text: b.text })), after: blocks.at(-1)?.map ?? null };
}

function resolveTarget(live: LiveDoc, checked: Checked): Target {
  switch (checked.mode) {
    case 'append':
      return { blocks: [], after: undefined };
    case 'replace_all':
      return everyBlock(live);
    case 'fill_empty': {
      if (projection(live.doc).trim() !== '') {
        throw new DomainError(
          'not_empty',
          'not_empty: the document already has content, so fill_empty wrote nothing',
          {
            data: { error: 'not_empty' },
          },
        );
      }
      return everyBlock(live);
    }
    case 'replace_section': {
      const text = projection(live.doc);
      const spans = findExcerpt(text, checked.excerpt!);
      if (spans.length === 0) {
        throw new DomainError(
          'excerpt_not_found',
          'excerpt_not_found: section_excerpt does not match the document; the nearest passages are listed in candidates',
          {
            data: {
              error: 'excerpt_not_found',
              candidates: nearestPassages(
                liveBlocks(live.doc).map((b) => b.text),
                checked.excerpt!,
              ),
            },
          },
        );
      }
      if (spans.length > 1) {
        throw new DomainError(
          'excerpt_ambiguous',
          `excerpt_ambiguous: section_excerpt matches ${spans.length} places; quote more of the section`,
          {
            data: {
              error: 'excerpt_ambiguous',
              locations: spans.map((s) => ({
                excerpt: shorten(text.slice(Math.max(0, s.start - 40), Math.min(text.length, s.end + 40))),
              })),
            },
          },
        );
      }
      const { start, end } = spans[0]!;
      // Walk the blocks by length; only the ones the excerpt covers are read out.
      const covered: { map: BlockMap; text: string }[] = [];
      let at = 0;
      for (const map of blockArray(live.doc)) {
        if (isDeleted(map)) continue;
        const blockEnd = at + blockText(map).length;
        if (blockEnd > start && at < end) covered.push({ map, text: blockText(map).toString() });
        if (blockEnd >= end) break;
        at = blockEnd;
      }
      return { blocks: covered, after: covered.at(-1)!.map };
    }
  }
}

export interface EditDeps {
  deps: Deps;
  store: DocumentStore;
  acquire(artifactId: string, holder: string): Promise<Lease>;
  changedSince(artifactId: string, version: number, now: BlockDigest): Promise<number | undefined>;
  digestAt(artifactId: string, version: number): Promise<BlockDigest | undefined>;
  prune(artifactId: string): Promise<void>;
}

/** Still in the document and not removed: a person may have deleted it while we waited. */
function present(live: LiveDoc, map: BlockMap): boolean {
  // A block taken out of the array has no parent any more.
  return !isDeleted(map) && map.parent === blockArray(live.doc) && map._item !== null && !map._item.deleted;
}

export function editor({ deps, store, acquire, changedSince, digestAt, prune }: EditDeps) {
  const { db } = deps;

  async function edit(actor: Actor, input: EditInput, options: WriteOptions = {}) {
    const checked = checkInput(input);
    const access = await artifactFor(db, actor, input.document_id);
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
      checkVersion(
        checked,
        current,
        drift ? await changedSince(id, checked.expected!, digestBlocks(live.doc)) : undefined,
      );
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
    const live = await store.open(id);
    const watch = store.beginWrite(live);
    try {
      // Within the lease and its transaction of record, the role is checked again.
      requireRole(await artifactFor(db, actor, id), 'editor');
      await store.refresh(live);
      await store.flush(id);
      const target = resolveTarget(live, checked);
      const version = await currentVersion(id);
      const digest = digestBlocks(live.doc);
      const digestText = digestJson(live.doc);
      const drift = checked.expected !== undefined && checked.expected !== version;
      const changed = drift ? await changedSince(id, checked.expected!, digest) : undefined;
      checkVersion(checked, version, changed);

      // Every agent write is checkpointed before it lands.
      const checkpointId = newId('ver');
      await db
        .insertInto('checkpoints')
        .values({
          id: checkpointId,
          artifact_id: id,
          doc_version: version,
          reason: 'agent_edit',
          label: null,
          pinned: 0,
          author_id: actor.personId,
          instruction: `edit_document ${checked.mode}`,
          content: packText(projection(live.doc)),
          kept_json: null,
          blocks_json: digestText,
          created_at: Date.now(),
        })
        .execute();

      // Blocks people changed since the version the caller read are theirs to keep, too.
      const since = drift ? await digestAt(id, checked.expected!) : undefined;
      const outcome = await apply(
        live,
        checked,
        target,
        watch.removed,
        since ? changedBlocks(since, digest) : undefined,
      );
      if (outcome.gone) {
        await db.deleteFrom('checkpoints').where('id', '=', checkpointId).execute();
        throw new DomainError(
          'selection_gone',
          'selection_gone: the section you meant to replace was removed before the write landed; nothing was written',
          { data: { error: 'selection_gone' } },
        );
      }
      const newVersion = await store.persist(live, {
        ...(options.within
          ? {
              within: (trx, version) =>
                options.within!(trx, {
                  document_id: id,
                  new_version: version,
                  written_chars: outcome.written.length,
                }),
            }
          : {}),
        reason: 'agent_edit',
        authorId: actor.personId,
        instruction: null,
      });
      const kept: KeptBlock[] = [...outcome.kept, ...watch.kept];
      await db
        .updateTable('checkpoints')
        .set({
          result_version: newVersion,
          result_blocks_json: digestJson(live.doc),
          ...(kept.length > 0 ? { kept_json: JSON.stringify(keptBlocks(kept)) } : {}),
        })
        .where('id', '=', checkpointId)
        .execute();
      // Pruning looks at old rows only now and then; between times there is nothing to prune.
      if (newVersion % 25 === 0) await prune(id);
      deps.emit({
        type: 'document.edited',
        workspaceId: actor.workspaceId,
        actorId: actor.personId,
        data: { document_id: id, version: newVersion, mode: checked.mode, by: 'agent' },
      });
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

  /**
   * Lands the write: new blocks after the target, in steps; the blocks replaced are marked
   * deleted, except those a person changed since the write resolved them (or since the version
   * the caller read, `changedIds`), which are kept.
   */
  async function apply(
    live: LiveDoc,
    checked: Checked,
    target: Target,
    removed: Set<BlockMap>,
    changedIds: Set<string> | undefined,
  ) {
    const kept: KeptBlock[] = [];
    if (checked.mode === 'replace_section' && target.blocks.every((b) => !present(live, b.map))) {
      return { gone: true as const, kept, written: '', stop: undefined };
    }
    let content = capPrefix(checked.content, CONTENT_CAP);
    let stop: 'cap' | 'anchor_gone' | undefined = content.length < checked.content.length ? 'cap' : undefined;
    const origin = store.agentOrigin;

    live.doc.transact(() => {
      for (const { map, text } of target.blocks) {
        if (!present(live, map)) continue;
        if (blockText(map).toString() !== text || changedIds?.has(shortId(map))) {
          kept.push({ id: map.get('id') as string, excerpt: blockText(map).toString().trim().slice(0, 200) });
          continue;
        }
        map.set('deleted', true);
        removed.add(map);
      }
      if (checked.mode === 'append' && content !== '') {
        // The appended text starts on a line of its own, unless it continues a line a capped
        // write had to cut.
        const last = lastNonEmptyBlock(live);
        const map = last?.parent as BlockMap | null | undefined;
        if (map?.get('continues') === true) map.delete('continues');
        else if (last && !last.toString().endsWith('\n')) last.insert(last.length, '\n');
      }
    }, origin);

    const pieces = splitBlocks(content);
    let anchor: BlockMap | null | undefined = target.after;
    let written = '';
    for (let i = 0; i < pieces.length; i += BLOCKS_PER_STEP) {
      if (i > 0) {
        await new Promise((resolve) => setImmediate(resolve));
        // A person removed what this write was adding to: stop, and say not to add it again.
        if (anchor && !present(live, anchor) && !removed.has(anchor)) {
          stop = 'anchor_gone';
          break;
        }
      }
      const step = pieces.slice(i, i + BLOCKS_PER_STEP);
      const maps = step.map(newBlock);
      live.doc.transact(() => {
        const blocks = blockArray(live.doc);
        const at =
          anchor === undefined ? blocks.length : anchor === null ? 0 : positionOf(live.doc, anchor) + 1;
        blocks.insert(at < 0 ? blocks.length : at, maps);
      }, origin);
      anchor = maps.at(-1)!;
      written += step.join('');
    }
    // A write cut inside a line marks its last block, so the append that follows continues the line.
    if (stop === 'cap' && !written.endsWith('\n') && anchor) {
      const last = anchor;
      live.doc.transact(() => last.set('continues', true), origin);
    }
    if (stop === 'anchor_gone') content = written;
    return { gone: false as const, kept, written: stop === 'anchor_gone' ? written : content, stop };
  }

  return { edit };
}

/** Ids of blocks added or changed between two digests. */
function changedBlocks(then: BlockDigest, now: BlockDigest): Set<string> {
  const before = new Map(then);
  return new Set(now.filter(([id, hash]) => before.get(id) !== hash).map(([id]) => id));
}

/** What to call next after a write stopped at the cap, so the rest lands right after what was written. */
function capNextStep(mode: Mode, written: string, rest: string): string {
  const begins = JSON.stringify(rest.slice(0, 60));
  if (mode !== 'replace_section') {
    return `Call edit_document with mode "append" and content_markdown set to the rest of your content: the ${rest.length} characters from character ${written.length} on, which begin ${begins}.`;
  }
  // replace_section replaces whole blocks, so the last block written is quoted and written again with the rest.
  const lastBlock = splitBlocks(written).at(-1) ?? '';
  return `The section now ends with the block ${JSON.stringify(lastBlock)}. To add the rest after it, call edit_document with mode "replace_section", section_excerpt set to that block, and content_markdown set to that block followed directly by the rest of your content: the ${rest.length} characters from character ${written.length} on, which begin ${begins}.`;
}

/** The text of the last live block with any text: where the document ends. */
function lastNonEmptyBlock(live: LiveDoc) {
  let last = null;
  for (const map of blockArray(live.doc)) {
    if (!isDeleted(map) && blockText(map).length > 0) last = blockText(map);
  }
  return last;
}

function keptBlocks(kept: KeptBlock[]) {
  return { count: kept.length, excerpts: kept.map((k) => k.excerpt) };
}
