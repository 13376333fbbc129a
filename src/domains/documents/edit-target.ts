import { DomainError, invalid } from '../../errors.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactHeadFor, requireRole, type ArtifactHead } from '../policies/artifacts.ts';
import { findExcerpt, nearestPassages, shorten } from './excerpt.ts';
import { blockText, blocksCovering, liveBlocks, projection, type BlockMap } from './model.ts';
import type { LiveDoc } from './store.ts';
import { normalizeNewlines, splitBlocks } from './text.ts';

/**
 * The first phase of an agent write: its input checked, and where it goes in the document
 * (or the refusal the spec gives for it).
 */

export const MODES = ['append', 'replace_section', 'replace_all', 'fill_empty'] as const;
export type Mode = (typeof MODES)[number];

export interface EditInput {
  document_id?: unknown;
  mode?: unknown;
  content_markdown?: unknown;
  section_excerpt?: unknown;
  expected_version?: unknown;
  dry_run?: unknown;
}

export interface Checked {
  mode: Mode;
  content: string;
  excerpt: string | undefined;
  expected: number | undefined;
  dryRun: boolean;
}

export function checkInput(input: EditInput): Checked {
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

/** The id of a document this person may edit (its editor role or better), or the refusal. */
export async function editableDocument(db: Db, actor: Actor, documentId: unknown): Promise<string> {
  const access = await artifactHeadFor(db, actor, documentId);
  requireDocument(access.artifact);
  requireRole(access, 'editor');
  return access.artifact.id;
}

/** Only documents are edited here; pages and tables are named with what to use instead. */
export function requireDocument(artifact: ArtifactHead): void {
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

export interface Target {
  /** Blocks the write replaces (in order), with their text when the write resolved them. */
  blocks: { map: BlockMap; text: string }[];
  /** The block the new text follows; null to start at the top, undefined to go at the end. */
  after: BlockMap | null | undefined;
}

/** Every live block, as a write that replaces them all sees them. */
function everyBlock(live: LiveDoc): Target {
  const blocks = liveBlocks(live.doc);
  return { blocks: blocks.map((b) => ({ map: b.map, text: b.text })), after: blocks.at(-1)?.map ?? null };
}

export function resolveTarget(live: LiveDoc, checked: Checked): Target {
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

/** What to call next after a write stopped at the cap, so the rest lands right after what was written. */
export function capNextStep(mode: Mode, written: string, rest: string): string {
  const begins = JSON.stringify(rest.slice(0, 60));
  if (mode !== 'replace_section') {
    return `Call edit_document with mode "append" and content_markdown set to the rest of your content: the ${rest.length} characters from character ${written.length} on, which begin ${begins}.`;
  }
  // replace_section replaces whole blocks, so the last block written is quoted and written again with the rest.
  const lastBlock = splitBlocks(written).at(-1) ?? '';
  return `The section now ends with the block ${JSON.stringify(lastBlock)}. To add the rest after it, call edit_document with mode "replace_section", section_excerpt set to that block, and content_markdown set to that block followed directly by the rest of your content: the ${rest.length} characters from character ${written.length} on, which begin ${begins}.`;
}
