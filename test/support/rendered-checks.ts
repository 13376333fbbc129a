import { STATE_CHANGING_PATHS } from './xss-vectors.ts';

/** Elements that take input or submit it. */
export const CONTROL_ELEMENTS = [
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
  'keygen',
  'isindex',
];

const SUBMITTING = /^(formaction|formmethod|action|form|ping)$/i;
const URL_ATTRIBUTE = /^(href|src|xlink:href|poster|data|background|srcset|cite|longdesc)$/i;

/** The path a URL reaches on the server, its escapes undone and dot segments resolved, lower-cased. */
function reachedPath(url: URL): string {
  let decoded = url.pathname;
  try {
    decoded = decodeURIComponent(url.pathname);
  } catch {
    // Left as it is.
  }
  return new URL(decoded.replaceAll('\\', '/'), url.origin).pathname.toLowerCase();
}

/**
 * What is wrong with rendered text, as a reader's browser has it in `root`: each control, each
 * attribute that submits, and each URL that reaches a state-changing route of `origin`. Empty when
 * nothing is. Written independently of the renderer's own rules (a list of the routes to keep out,
 * where the renderer keeps a list of pages to let in).
 */
export function problemsIn(root: ParentNode, base: string): string[] {
  const origin = new URL(base).origin;
  const found: string[] = [];
  for (const el of root.querySelectorAll('*')) {
    const tag = el.localName;
    if (CONTROL_ELEMENTS.includes(tag)) found.push(`<${tag}>`);
    if (el.hasAttribute('contenteditable')) found.push(`<${tag} contenteditable>`);
    for (const attr of Array.from(el.attributes)) {
      if (SUBMITTING.test(attr.name)) found.push(`${tag}[${attr.name}]`);
      if (!URL_ATTRIBUTE.test(attr.name)) continue;
      const values =
        attr.name === 'srcset'
          ? attr.value.split(',').map((c) => c.trim().split(/\s+/)[0] ?? '')
          : [attr.value];
      for (const value of values) {
        let url: URL;
        try {
          url = new URL(value, base);
        } catch {
          continue;
        }
        if (url.origin !== origin) continue;
        const path = reachedPath(url);
        if (STATE_CHANGING_PATHS.some((p) => path === p.replace(/\/$/, '') || path.startsWith(p)))
          found.push(`${tag}[${attr.name}=${attr.value}]`);
      }
    }
  }
  return found;
}
