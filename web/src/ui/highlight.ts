import type { PassageAnchor } from './threads.ts';

/** A quote's markdown reduced to the words a reader sees (markers, link targets and the like left out). */
export function plainQuote(markdown: string): string {
  return markdown
    .split('\n')
    .map((line) =>
      line
        .replace(/^\s{0,3}#{1,6}\s+/, '')
        .replace(/^\s*>\s?/, '')
        .replace(/^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?/, ''),
    )
    .join('\n')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/(\*\*|__|~~|`)/g, '')
    .replace(/(^|\W)[*_](\S)/g, '$1$2')
    .replace(/(\S)[*_](?=\W|$)/g, '$1');
}

interface Spot {
  node: Text;
  offset: number;
}

/** The text of a rendered element with runs of white space as one space, and where each character came from. */
function flatten(root: HTMLElement): { text: string; spots: Spot[] } {
  const walker = root.ownerDocument.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  let text = '';
  const spots: Spot[] = [];
  let space = true;
  for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
    const data = node.data;
    for (let i = 0; i < data.length; i++) {
      if (/\s/.test(data[i]!)) {
        if (space) continue;
        space = true;
        text += ' ';
      } else {
        space = false;
        text += data[i];
      }
      spots.push({ node, offset: i });
    }
  }
  return { text, spots };
}

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Where a quote shows in the flattened text: as written, or as read once rendered; exactly once. */
function find(text: string, excerpt: string): [number, number] | null {
  for (const wanted of [squash(excerpt), squash(plainQuote(excerpt))]) {
    if (wanted === '') continue;
    const first = text.indexOf(wanted);
    if (first >= 0 && text.indexOf(wanted, first + 1) < 0) return [first, first + wanted.length];
  }
  return null;
}

/** Takes the highlights out again, leaving the rendered text as it was. */
export function clearPassages(root: HTMLElement): void {
  for (const mark of [...root.querySelectorAll('mark[data-thread]')]) {
    mark.replaceWith(...mark.childNodes);
  }
  root.normalize();
}

/**
 * Highlights each open thread's passage in a rendered read view: the parts of its text in each
 * text node are wrapped in a `mark` named `Comment by <author>`, focusable, carrying the thread.
 */
export function highlightPassages(root: HTMLElement, anchors: readonly PassageAnchor[]): void {
  clearPassages(root);
  const wraps: { node: Text; from: number; to: number; anchor: PassageAnchor }[] = [];
  const { text, spots } = flatten(root);
  for (const anchor of anchors) {
    const at = find(text, anchor.excerpt);
    if (!at) continue;
    for (let i = at[0]; i < at[1]; i++) {
      const spot = spots[i]!;
      const last = wraps[wraps.length - 1];
      if (last && last.anchor === anchor && last.node === spot.node) last.to = spot.offset + 1;
      else wraps.push({ node: spot.node, from: spot.offset, to: spot.offset + 1, anchor });
    }
  }
  const byNode = new Map<Text, typeof wraps>();
  for (const w of wraps) byNode.set(w.node, [...(byNode.get(w.node) ?? []), w]);
  for (const [node, list] of byNode) {
    // Last first, so the offsets of earlier wraps in the same node stay true; passages that
    // overlap keep the part that is not highlighted already.
    for (const w of list.sort((a, b) => b.from - a.from)) {
      w.to = Math.min(w.to, node.length);
      if (w.from >= w.to) continue;
      const middle = node.splitText(w.from);
      middle.splitText(w.to - w.from);
      const mark = root.ownerDocument.createElement('mark');
      mark.className = 'comment-anchor';
      mark.setAttribute('role', 'mark');
      mark.setAttribute('aria-label', `Comment by ${w.anchor.author}: ${w.anchor.excerpt.slice(0, 80)}`);
      mark.setAttribute('data-thread', w.anchor.threadId);
      mark.tabIndex = 0;
      middle.replaceWith(mark);
      mark.append(middle);
    }
  }
}

/** Selects a thread's passage in a read view and brings it into view; false when it is not shown. */
export function selectPassage(root: HTMLElement, threadId: string): boolean {
  const marks = [...root.querySelectorAll<HTMLElement>(`mark[data-thread="${CSS.escape(threadId)}"]`)];
  if (marks.length === 0) return false;
  marks[0]!.scrollIntoView({ block: 'center' });
  marks[0]!.focus();
  const range = root.ownerDocument.createRange();
  range.setStartBefore(marks[0]!);
  range.setEndAfter(marks[marks.length - 1]!);
  const selection = root.ownerDocument.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
  return true;
}
