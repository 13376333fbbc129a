import { z } from 'zod';
import { defineCapability, defineNamespace, domain } from './capability.ts';

const pageId = z.string().min(1).describe('A page id.');

/** HTML pages, read and written as the automation's acting person. */
export const pages = defineNamespace({
  namespace: 'pages',
  name: 'Pages',
  capabilities: [
    defineCapability({
      name: 'read_page',
      kind: 'read',
      describe: 'Read an HTML page’s source and version.',
      input: z.strictObject({ page_id: pageId }),
      output: z.object({ page_id: z.string(), title: z.string(), html: z.string(), version: z.number() }),
      large: true,
      async run(input, ctx) {
        const page = await domain(() => ctx.services.pages.read(ctx.actor, input.page_id));
        return { page_id: page.page_id, title: page.title, html: page.html, version: page.version };
      },
    }),
    defineCapability({
      name: 'write_page',
      kind: 'write',
      describe: 'Replace a page’s HTML; expected_version (from pages.read_page) must be the current version.',
      input: z.strictObject({
        page_id: pageId,
        html: z.string().min(1),
        expected_version: z.number().int().min(0),
      }),
      output: z.object({ page_id: z.string(), new_version: z.number(), byte_size: z.number() }),
      async run(input, ctx) {
        const output = (r: Record<string, unknown>) => ({
          page_id: r.page_id,
          new_version: r.new_version,
          byte_size: r.byte_size,
        });
        const page = await domain(() =>
          ctx.services.pages.write(ctx.actor, input, {
            within: (trx, r) => ctx.within(trx, output(r)),
            origin: ctx.origin,
          }),
        );
        return output(page);
      },
    }),
  ],
});
