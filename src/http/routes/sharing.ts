import { z } from 'zod';
import * as contract from '../../contract/sharing.ts';
import { defineRoute } from '../route.ts';
import { renderMarkdown } from '../sanitize.ts';

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/**
 * A document's HTML export: a whole HTML file whose body is its markdown as the read view renders
 * it, between `<body>\n` and `\n</body>`.
 */
export async function documentHtml(title: string, markdown: string, base: string): Promise<string> {
  const body = await renderMarkdown(markdown, base);
  return `<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>${escapeHtml(title)}</title>\n</head>\n<body>\n${body}\n</body>\n</html>\n`;
}

/** A file name from a title: letters, digits, spaces, dots, dashes and underscores. */
const fileName = (title: string, ext: string) =>
  `${
    title
      .replace(/[^\p{L}\p{N} ._-]+/gu, '')
      .trim()
      .slice(0, 100) || 'export'
  }.${ext}`;

/** Who can open an artifact (the Share dialog), and taking a document or page out as a file. */
export const sharingRoutes = [
  defineRoute({
    ...contract.readSharing,
    description: 'who can open a document or page: its audience and role, and the people added',
    scopes: ['documents:read'],
    handler: ({ services, actor, params }) => services.sharing.get(actor, params.id),
  }),
  defineRoute({
    ...contract.writeSharing,
    description: 'change who can open a document or page; open live connections follow at once',
    scopes: ['documents:write'],
    bodyHint:
      'Send JSON: {"scope": "user" | "pod" | "org", "pod_id"?: "...", "scope_role"?: "editor" | "commenter" | "viewer", "people"?: [{"user_id": "...", "role": "..."}]}',
    handler: ({ services, actor, params, body }) => services.sharing.put(actor, params.id, body),
  }),
  defineRoute({
    ...contract.sharingChoices,
    description: 'the audiences and people the Share dialog offers',
    scopes: ['documents:read'],
    handler: ({ services, actor, params }) => services.sharing.choices(actor, params.id),
  }),
  defineRoute({
    ...contract.audiences,
    description: 'whom a new document can be opened by: the caller’s workspace and pods',
    scopes: ['documents:read'],
    handler: ({ services, actor }) => services.sharing.audiences(actor),
  }),
  defineRoute({
    ...contract.exportArtifact,
    output: z.instanceof(Response),
    description: 'a document (markdown or html) or page (html) at its current version, as a download',
    scopes: ['documents:read'],
    handler: async ({ services, actor, params, query, c }) => {
      const done = await services.documents.export(actor, {
        document_id: params.id,
        format: query.format ?? 'markdown',
      });
      const html = done.format === 'html';
      const text =
        html && done.type === 'document'
          ? await documentHtml(done.title, done.text, new URL(c.req.url).origin + '/')
          : done.text;
      return new Response(text, {
        headers: {
          'content-type': html ? 'text/html; charset=utf-8' : 'text/markdown; charset=utf-8',
          'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(fileName(done.title, html ? 'html' : 'md'))}`,
          'x-content-type-options': 'nosniff',
          // Opened rather than saved, the file still runs nothing and reaches nothing.
          'content-security-policy': "sandbox; default-src 'none'",
          'cache-control': 'no-store',
          'x-tandem-version': String(done.version),
        },
      });
    },
  }),
];
