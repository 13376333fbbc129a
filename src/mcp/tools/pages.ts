import { z } from 'zod';
import { defineTool, DESTRUCTIVE_WRITE, READ_ONLY, specChecked, WRITE } from '../tool.ts';
import { placement } from './placement.ts';

const pageId = z.string();
const warnings = z
  .array(z.string())
  .describe(
    '`script_stripped` when the HTML has script elements, inline event handlers or javascript: URLs.',
  );

/**
 * The longest page source a call may write. Every write parses the source (twice, to find
 * scripts as browsers with and without scripting see them), at about a second per million
 * characters of dense markup, so a source past this is refused before anything is stored.
 */
const HTML_MAX = 1_000_000;

const title = specChecked({ type: 'string', minLength: 1, maxLength: 500 }, { required: true });
/** The whole HTML source (its length limits say what a description would). */
const html = () => specChecked({ type: 'string', minLength: 1, maxLength: HTML_MAX }, { required: true });

const STRIPPED_NOTE =
  ' Its scripts, inline event handlers and javascript: URLs are stored as written but removed when the page is viewed.';

export const createPage = defineTool({
  name: 'create_page',
  title: 'Create HTML page',
  description:
    'Create an HTML page, stored verbatim, in a conversation (posts a card) or a scope, not both. A retry makes a second page.',
  scope: 'documents:write',
  annotations: WRITE,
  input: z.object({
    title,
    html: html(),
    ...placement,
  }),
  output: z.object({
    page_id: z.string(),
    title: z.string(),
    version: z.number().int(),
    byte_size: z.number().int(),
    warnings,
  }),
  async run({ actor, services }, args) {
    const page = await services.pages.create(actor, args);
    const stripped = page.warnings.includes('script_stripped') ? STRIPPED_NOTE : '';
    return {
      structured: page,
      text: `Created page ${page.title} (page_id: ${page.page_id}, version ${page.version}).${stripped}`,
    };
  },
});

export const readPage = defineTool({
  name: 'read_page',
  title: 'Read HTML page',
  description: "An HTML page's source and version (write_page's expected_version).",
  scope: 'documents:read',
  annotations: READ_ONLY,
  input: z.object({ page_id: pageId }),
  output: z.object({
    page_id: z.string(),
    title: z.string(),
    html: z.string(),
    version: z.number().int(),
    byte_size: z.number().int(),
    role: z.enum(['owner', 'editor', 'commenter', 'viewer']),
    archived: z.boolean(),
  }),
  async run({ actor, services }, args) {
    const page = await services.pages.read(actor, args.page_id);
    return { structured: page, text: `# ${page.title} (version ${page.version})\n\n${page.html}` };
  },
});

export const writePage = defineTool({
  name: 'write_page',
  title: 'Rewrite HTML page',
  description:
    "Replace a page's HTML. expected_version must be current, else version_conflict with a diff and nothing changes.",
  scope: 'documents:write',
  annotations: DESTRUCTIVE_WRITE,
  input: z.object({
    page_id: pageId,
    html: html(),
    expected_version: specChecked({ type: 'integer', minimum: 0 }, { required: true }),
  }),
  output: z.object({
    page_id: z.string(),
    new_version: z.number().int().optional(),
    byte_size: z.number().int().optional(),
    warnings: warnings.optional(),
    error: z.literal('version_conflict').optional(),
    expected_version: z.number().int().optional(),
    current_version: z.number().int().optional(),
    diff_excerpt: z
      .string()
      .optional()
      .describe('What changed since expected_version, line by line, when known.'),
    changed_range: z
      .object({ start_line: z.number().int(), end_line: z.number().int() })
      .optional()
      .describe('The lines of the current source that differ from expected_version, when known.'),
  }),
  async run({ actor, services }, args) {
    const page = await services.pages.write(actor, args);
    const stripped = page.warnings.includes('script_stripped') ? STRIPPED_NOTE : '';
    return {
      structured: page,
      text: `Wrote page ${page.page_id}; it is now at version ${page.new_version} (${page.byte_size} bytes).${stripped}`,
    };
  },
});

export const pageTools = [createPage, readPage, writePage];
