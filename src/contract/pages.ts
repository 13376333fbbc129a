import { z } from 'zod';
import { endpoint } from './endpoint.ts';

/** A page as its viewer shows it: the frame's signed link to the pages origin and its sandbox. */
export const readPage = endpoint({
  method: 'GET',
  path: '/pages/:id',
  output: z.object({
    page_id: z.string(),
    title: z.string(),
    version: z.number(),
    byte_size: z.number(),
    role: z.enum(['owner', 'editor', 'commenter', 'viewer']),
    archived: z.boolean(),
    /** Whether the caller may change who can open it (`Share`). */
    may_share: z.boolean(),
    frame: z.object({ src: z.string(), sandbox: z.string() }),
  }),
});

/** Writes an earlier version's HTML as the next version (a person's write, under the version check). */
export const restorePage = endpoint({
  method: 'POST',
  path: '/pages/:id/restore',
  body: z.object({ version_id: z.custom<string>(), expected_version: z.custom<number>() }),
  output: z.object({ page_id: z.string(), new_version: z.number() }),
});
