import { parse, type DefaultTreeAdapterMap } from 'parse5';

type Node = DefaultTreeAdapterMap['node'];

/** Attributes whose value is navigated to or loaded, where a `javascript:` URL would run. */
const URL_ATTRIBUTES = new Set([
  'href',
  'src',
  'action',
  'formaction',
  'xlink:href',
  'data',
  'background',
  'poster',
  'codebase',
  'cite',
  'longdesc',
  'lowsrc',
  'dynsrc',
  'srcdoc',
  'to',
  'from',
  'values',
]);

/** Browsers drop ASCII whitespace and control characters anywhere in a scheme before matching it. */
export function isJavascriptUrl(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  const squashed = value.replace(/[\u0000-\u0020\u007f-\u009f]/g, '').toLowerCase();
  return squashed.startsWith('javascript:') || squashed.startsWith('vbscript:');
}

/** Elements that load a URL as a document of their own, where a `data:` HTML or SVG document runs. */
const EMBEDDING = new Set(['iframe', 'frame', 'object', 'embed']);

function isActiveDataUrl(value: string): boolean {
  // eslint-disable-next-line no-control-regex
  const squashed = value.replace(/[\u0000-\u0020]/g, '').toLowerCase();
  return /^data:(text\/html|application\/xhtml\+xml|image\/svg\+xml|text\/xml|application\/xml)/.test(
    squashed,
  );
}

/**
 * Reports whether HTML, as a browser would parse it, has script elements, inline event
 * handlers or `javascript:` URLs. These are kept in the stored source but never run when viewed.
 *
 * Browsers do not all parse alike: `noscript` content is markup or text depending on whether
 * scripting is on, and newer browsers parse the content of `select` as ordinary markup. The
 * source is read each way, so a breakout that only one reading reveals is still reported.
 */
export function hasActiveContent(html: string): boolean {
  if (scan(html, false) || scan(html, true)) return true;
  const selectAsMarkup = html.replace(/<(\/?)select\b/gi, '<$1div');
  return selectAsMarkup !== html && scan(selectAsMarkup, false);
}

function scan(html: string, scriptingEnabled: boolean): boolean {
  const document = parse(html, { scriptingEnabled });
  const stack: Node[] = [document];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if ('tagName' in node) {
      if (node.tagName === 'script') return true;
      for (const attr of node.attrs) {
        const name = (attr.prefix ? `${attr.prefix}:${attr.name}` : attr.name).toLowerCase();
        if (name.startsWith('on')) return true;
        if ((URL_ATTRIBUTES.has(name) || name.endsWith(':href')) && isJavascriptUrl(attr.value)) return true;
        if (name === 'srcdoc' && hasActiveContent(attr.value)) return true;
        if (
          EMBEDDING.has(node.tagName) &&
          (name === 'src' || name === 'data') &&
          isActiveDataUrl(attr.value)
        ) {
          return true;
        }
      }
      if (node.tagName === 'template' && 'content' in node) stack.push(node.content as Node);
    }
    // One by one: spreading a node's children into push's arguments overflows the stack past ~100,000.
    if ('childNodes' in node) for (const child of node.childNodes as Node[]) stack.push(child);
  }
  return false;
}
