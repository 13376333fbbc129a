import type { DOMPurify } from 'dompurify';
import { markdownRenderer } from './view/rendered-markdown.ts';

let purifier: Promise<DOMPurify> | undefined;

/** DOMPurify on a jsdom window, built once on first use (jsdom is slow to load). */
function getPurifier(): Promise<DOMPurify> {
  purifier ??= (async () => {
    const [{ JSDOM }, { default: createDOMPurify }] = await Promise.all([
      import('jsdom'),
      import('dompurify'),
    ]);
    const { window } = new JSDOM('<!doctype html>');
    return createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]);
  })();
  return purifier;
}

/**
 * The HTML a viewer receives: scripts, inline event handlers and `javascript:` URLs removed,
 * along with elements that could re-target or escape the page (base, meta refresh, plugins).
 * The stored source is never changed.
 */
export async function sanitizePage(html: string): Promise<string> {
  const purify = await getPurifier();
  const clean = purify.sanitize(html, {
    WHOLE_DOCUMENT: true,
    FORBID_TAGS: ['base', 'meta', 'object', 'embed', 'applet', 'frame', 'frameset', 'portal'],
    FORBID_ATTR: ['srcdoc', 'formaction'],
    ALLOW_DATA_ATTR: true,
  });
  return `<!doctype html>\n${clean}`;
}

let renderer: Promise<(text: string, base: string) => string> | undefined;

/**
 * A document's markdown as the read view renders it (the one renderer of people's markdown, on a
 * DOMPurify instance of its own), for an HTML export.
 */
export async function renderMarkdown(markdown: string, base: string): Promise<string> {
  renderer ??= (async () => {
    const [{ JSDOM }, { default: createDOMPurify }] = await Promise.all([
      import('jsdom'),
      import('dompurify'),
    ]);
    const { window } = new JSDOM('<!doctype html>');
    return markdownRenderer(createDOMPurify(window as unknown as Parameters<typeof createDOMPurify>[0]));
  })();
  return (await renderer)(markdown, base);
}
