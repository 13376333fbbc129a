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

/**
 * Reports whether HTML, as a browser would parse it, has script elements, inline event
 * handlers or `javascript:` URLs. These are kept in the stored source but never run when viewed.
 */
export function hasActiveContent(html: string): boolean {
  const document = parse(html, { scriptingEnabled: false });
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
      }
      if (node.tagName === 'template' && 'content' in node) stack.push(node.content as Node);
    }
    if ('childNodes' in node) stack.push(...(node.childNodes as Node[]));
  }
  return false;
}
