import { z } from 'zod';
import { defineTool, DESTRUCTIVE_WRITE, READ_ONLY, specChecked, WRITE } from '../tool.ts';

const pageId = z.string().describe('The page id (artifact id) from create_page, list_documents or a card.');
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

const title = specChecked(
  { type: 'string', minLength: 1, maxLength: 500, description: 'The page title.' },
  { required: true },
);
const html = (what: string) =>
  specChecked(
    {
      type: 'string',
      minLength: 1,
      maxLength: HTML_MAX,
      description: `${what}; non-empty, at most ${HTML_MAX.toLocaleString('en')} characters.`,
    },
    { required: true },
  );

const STRIPPED_NOTE =
  ' Its scripts, inline event handlers and javascript: URLs are stored as written but removed when the page is viewed.';

export const createPage = defineTool({
  name: 'create_page',
  title: 'Create HTML page',
  description:
    'Create an HTML page artifact, stored verbatim. Pass conversation_id to create it in a conversation (a card is posted to the room), or a scope (user by default, pod with pod_id, or org); never both. There is no idempotency key: a retried create makes a second page. Returns the version to pass to write_page.',
  scope: 'documents:write',
  annotations: WRITE,
  input: z.object({
    title,
    html: html('The complete HTML source'),
    conversation_id: z
      .string()
      .optional()
      .describe('Create the page in this conversation and post a card there.'),
    scope: specChecked({
      type: 'string',
      enum: ['user', 'pod', 'org'],
      description:
        'Where the page lives when no conversation_id is given: user (default), pod (with pod_id) or org.',
    }),
    pod_id: z.string().optional().describe('The pod, with scope pod.'),
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
  description:
    'Read an HTML page: its stored source (scripts included) and its version, which write_page needs as expected_version.',
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
    'Replace a page’s HTML wholesale. expected_version (from read_page or create_page) must equal the current version; otherwise nothing changes and the result is version_conflict with the current version and a line-level diff. There is no force flag. The previous source is kept as a checkpoint.',
  scope: 'documents:write',
  annotations: DESTRUCTIVE_WRITE,
  input: z.object({
    page_id: pageId,
    html: html('The complete new HTML'),
    expected_version: specChecked(
      { type: 'integer', minimum: 0, description: 'The version you read, from read_page or create_page.' },
      { required: true },
    ),
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
