import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole, type Artifact } from '../policies/artifacts.ts';
import { personName } from '../workspace/artifacts.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import { findExcerpt, nearestPassages, shorten } from './excerpt.ts';
import type { Lease } from './lease.ts';
import {
  blockArray,
  blocksChanged,
  blockText,
  isDeleted,
  liveBlocks,
  lastNonEmptyText,
  blocksCovering,
  newBlock,
  positionOf,
  shortId,
  projection,
  storedDigest,
  type BlockDigest,
  type VersionDigest,
  type BlockMap,
} from './model.ts';
import type { DocumentStore, KeptBlock, LiveDoc, VersionRow } from './store.ts';
import { capPrefix, CONTENT_CAP, normalizeNewlines, splitBlocks } from './text.ts';
import { packText } from '../../storage/packed.ts';

export const MODES = ['append', 'replace_section', 'replace_all', 'fill_empty'] as const;
export type Mode = (typeof MODES)[number];

/** How people connected to a document see an agent writing to it (for the person it acts for). */
const AGENT_NAME = 'Agent';

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
      // Only the blocks the excerpt covers are read out.
      const covered = blocksCovering(live.doc, start, end).map((map) => ({
        map,
        text: blockText(map).toString(),
      }));
      return { blocks: covered, after: covered.at(-1)!.map };
    }
  }
}

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
  prune(artifactId: string): Promise<void>;
}

/** Still in the document and not removed: a person may have deleted it while we waited. */
function present(live: LiveDoc, map: BlockMap): boolean {
  // A block taken out of the array has no parent any more.
  return !isDeleted(map) && map.parent === blockArray(live.doc) && map._item !== null && !map._item.deleted;
}

export function editor({ deps, store, hooks, acquire, digestAt, holdsDigest, prune }: EditDeps) {
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
      // Within the lease and its transaction of record, the role is checked again.
      requireRole(await artifactFor(db, actor, id), 'editor');
      await store.refresh(live);
      await store.flush(id);
      const target = resolveTarget(live, checked);
      // People connected see the agent writing, and where.
      const writer = { name: AGENT_NAME, for: await personName(db, actor.personId) };
      const show = (blocks: string[]) => store.writing(live, { ...writer, blocks });
      show(target.blocks.map((b) => b.map.get('id') as string));
      const version = await currentVersion(id);
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
        content: packText(projection(live.doc)),
        kept_json: null,
        blocks_json: digestKnown ? null : storedDigest(live.doc),
        created_at: Date.now(),
      };
      await hooks.beforeLanding?.(id);

      // The row is stored with the write, or with whatever stores part of it first.
      live.staged.push(row);
      // Blocks people changed since the version the caller read are theirs to keep, too.
      const outcome = await apply(
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
        edited: { actorId: actor.personId, by: 'agent', mode: checked.mode, origin: options.origin },
        agentRow: {
          id: row.id,
          complete(result) {
            // Edits people made during the write, up to the moment it is stored, are reported.
            kept = [...outcome.kept, ...watch.kept];
            return {
              ...row,
              result_version: result,
              result_blocks_json: storedDigest(live.doc),
              kept_json: kept.length > 0 ? JSON.stringify(keptBlocks(kept)) : null,
            };
          },
        },
      });
      // Pruning looks at old rows only now and then; between times there is nothing to prune.
      if (newVersion % 25 === 0) await prune(id);
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
    show: (blocks: string[]) => void,
  ) {
    const kept: KeptBlock[] = [];
    if (checked.mode === 'replace_section' && target.blocks.every((b) => !present(live, b.map))) {
      return { gone: true as const, kept, written: '', stop: undefined };
    }
    let content = capPrefix(checked.content, CONTENT_CAP);
    let stop: 'cap' | 'anchor_gone' | undefined = content.length < checked.content.length ? 'cap' : undefined;
    const origin = store.agentOrigin;
    // The appended text starts on a line of its own, unless it continues a line a capped write
    // had to cut.
    const last = checked.mode === 'append' && content !== '' ? lastNonEmptyText(live.doc) : null;

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
      if (last) {
        const map = last.parent as BlockMap | null;
        if (map?.get('continues') === true) map.delete('continues');
        else if (!last.toString().endsWith('\n')) last.insert(last.length, '\n');
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
      const blocks = blockArray(live.doc);
      const at =
        anchor === undefined ? blocks.length : anchor === null ? 0 : positionOf(live.doc, anchor) + 1;
      live.doc.transact(() => blocks.insert(at < 0 ? blocks.length : at, maps), origin);
      show(maps.map((m) => m.get('id') as string));
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

function keptBlocks(kept: KeptBlock[]) {
  return { count: kept.length, excerpts: kept.map((k) => k.excerpt) };
}
