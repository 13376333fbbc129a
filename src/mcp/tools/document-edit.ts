import { z } from 'zod';
import { CONTENT_CAP } from '../../domains/documents/text.ts';
import { defineTool, DESTRUCTIVE_WRITE, specChecked } from '../tool.ts';

/** What edit_document kept of people's concurrent edits; version rows carry it too. */
export const keptBlocks = z
  .object({ count: z.number().int(), excerpts: z.array(z.string()) })
  .describe('Edits people made during the write, kept next to the written text.');

/**
 * Writing to a live document: its modes, the version check, a dry run, and the refusals a
 * write can meet (a moved version, an excerpt not found or found twice), each in its result.
 */
export const editDocument = defineTool({
  name: 'edit_document',
  title: 'Edit document',
  description:
    "Write to a live document by mode; replace_section rewrites the blocks covering section_excerpt. People's concurrent edits are kept (kept_blocks).",
  scope: 'documents:write',
  annotations: DESTRUCTIVE_WRITE,
  input: z.object({
    document_id: z.string(),
    mode: specChecked(
      {
        type: 'string',
        enum: ['append', 'replace_section', 'replace_all', 'fill_empty'],
      },
      { required: true },
    ),
    content_markdown: specChecked({ type: 'string' }, { required: true }),
    // Matching folds the white space of the whole excerpt, about a second per 4 million characters;
    // a passage longer than a write may put back is refused before that.
    section_excerpt: specChecked({
      type: 'string',
      maxLength: CONTENT_CAP,
      description: 'Exact passage, white space ignored.',
    }),
    expected_version: specChecked({
      type: 'integer',
      minimum: 0,
      description: 'Required for replace_all.',
    }),
    dry_run: z.boolean().optional(),
  }),
  output: z.object({
    document_id: z.string().optional(),
    mode: z.enum(['append', 'replace_section', 'replace_all', 'fill_empty']).optional(),
    new_version: z.number().int().optional(),
    written_chars: z.number().int().optional(),
    stopped_early: z.boolean().optional(),
    stop_reason: z.enum(['cap', 'anchor_gone']).optional(),
    next_step: z.string().optional(),
    version_drift: z.boolean().optional(),
    blocks_changed_since: z.number().int().optional(),
    kept_blocks: keptBlocks.optional(),
    dry_run: z.boolean().optional(),
    resolved: z.boolean().optional(),
    block_ids: z.array(z.string()).optional(),
    current_version: z.number().int().optional(),
    error: z
      .enum([
        'version_conflict',
        'excerpt_not_found',
        'excerpt_ambiguous',
        'not_empty',
        'selection_gone',
        'write_conflict',
      ])
      .optional(),
    expected_version: z.number().int().optional(),
    candidates: z.array(z.object({ excerpt: z.string(), similarity: z.number() })).optional(),
    locations: z.array(z.object({ excerpt: z.string() })).optional(),
    retry_after_seconds: z.number().int().optional(),
  }),
  async run({ actor, services }, args) {
    const result = await services.documents.edit(actor, args);
    if ('dry_run' in result) {
      const n = (result.block_ids ?? []).length;
      return {
        structured: result,
        text: `Dry run (${result.mode}): nothing written. The write would replace ${n} block${n === 1 ? '' : 's'}; the document is at version ${result.current_version}${result.version_drift ? ', newer than expected_version' : ''}.`,
      };
    }
    let text = `Wrote ${result.written_chars} characters (${result.mode}); the document is now at version ${result.new_version}.`;
    if (result.stop_reason === 'cap')
      text += ` Stopped early at the 60,000-character cap. ${result.next_step}`;
    if (result.stop_reason === 'anchor_gone') text += ` Stopped early: ${result.next_step}`;
    if (result.kept_blocks) {
      const n = result.kept_blocks.count;
      text += ` Kept ${n} block${n === 1 ? '' : 's'} that people edited during the write, next to the new text.`;
    }
    if (result.version_drift) {
      text += ` The document had moved on since expected_version${result.blocks_changed_since !== undefined ? ` (${result.blocks_changed_since} blocks changed)` : ''}.`;
    }
    return { structured: result, text };
  },
});
