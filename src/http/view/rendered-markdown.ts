import type { Config, DOMPurify } from 'dompurify';
import { Marked } from 'marked';
import { isAppPage } from '../../contract/app-pages.ts';

/**
 * How people's markdown (and the HTML in it) is shown outside the sandboxed page viewer: the one
 * configuration for every place that renders it, in the browser or on the server. Besides
 * DOMPurify's own rules (no script, no event handlers, no `javascript:`), the rendered text holds
 * nothing that takes input or submits it, no styles that could dress it up as the app, and no
 * link or source that points at the app's origin other than its pages (so no `/logout`,
 * `/api/…`, `/oauth/…`, `/consent/…`, `/settings/…`, in whatever spelling).
 */

/** Elements that take input or send it: a rendered text has none of them. */
export const CONTROL_TAGS = [
  'form',
  'input',
  'button',
  'select',
  'textarea',
  'option',
  'optgroup',
  'datalist',
  'output',
  'fieldset',
  'legend',
  'label',
  'keygen',
  'isindex',
  'meter',
  'progress',
] as const;

/** Elements that load, frame, restyle or re-target the page. */
const OTHER_TAGS = [
  'style',
  'link',
  'meta',
  'base',
  'iframe',
  'frame',
  'frameset',
  'object',
  'embed',
  'applet',
  'portal',
  'dialog',
];

/** Attributes that submit, re-target, ping or restyle. */
export const FORBIDDEN_ATTRIBUTES = [
  'formaction',
  'formmethod',
  'formtarget',
  'formenctype',
  'formnovalidate',
  'action',
  'method',
  'form',
  'ping',
  'target',
  'style',
  'srcset',
  'srcdoc',
  'contenteditable',
] as const;

/** Attributes holding a URL the browser follows or fetches. */
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'xlink:href',
  'poster',
  'background',
  'cite',
  'data',
  'longdesc',
  'lowsrc',
  'dynsrc',
  'usemap',
]);

export const RENDERED_CONFIG: Config = {
  USE_PROFILES: { html: true },
  FORBID_TAGS: [...CONTROL_TAGS, ...OTHER_TAGS],
  FORBID_ATTR: [...FORBIDDEN_ATTRIBUTES],
  ALLOW_DATA_ATTR: false,
  // Ids and names are prefixed, so no element of a text can stand in for one of the app's.
  SANITIZE_NAMED_PROPS: true,
};

/**
 * Whether a URL in rendered text may stay: anything off the app's origin (DOMPurify has already
 * judged its scheme), and on it only one of the app's pages, resolved as the browser would
 * resolve it from `base` (the page showing the text) and with its escapes undone.
 */
export function allowedInText(value: string, base: string): boolean {
  let url: URL;
  try {
    url = new URL(value, base);
  } catch {
    return false;
  }
  if (url.origin !== new URL(base).origin) return true;
  let path: string;
  try {
    path = decodeURIComponent(url.pathname);
  } catch {
    return false;
  }
  if (/\\|\/\.\.?(\/|$)|\/\//.test(path)) return false;
  return isAppPage(path);
}

/** A GFM task's check box, as a glyph: shown, never something to tick. */
const markdown = new Marked({
  gfm: true,
  async: false,
  renderer: {
    checkbox: ({ checked }) => (checked ? '☑ ' : '☐ '),
  },
});

/**
 * The renderer over one DOMPurify instance (the browser's, or one on a jsdom window): markdown in,
 * sanitised HTML out. `base` is the address of the page the text is shown on.
 */
export function markdownRenderer(purify: DOMPurify): (text: string, base: string) => string {
  let current = '';
  purify.addHook('uponSanitizeAttribute', (_node, data) => {
    if (URL_ATTRIBUTES.has(data.attrName) && !allowedInText(data.attrValue, current)) data.keepAttr = false;
  });
  return (text, base) => {
    current = base;
    const html = markdown.parse(text) as string;
    return purify.sanitize(html, { ...RENDERED_CONFIG, RETURN_TRUSTED_TYPE: false }) as string;
  };
}
