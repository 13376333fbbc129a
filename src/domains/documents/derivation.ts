import { stringOf, type BlockInfo, type Derivation } from './block-index.ts';
import { entryOf } from './digest.ts';

/**
 * The projection and digest entries of a document's blocks. A write changes a few blocks of
 * many: `rederive` keeps the start and end of the last derivation that no change has touched
 * since (the same blocks in the same places, none of them changed: `rev` as then), and makes
 * only the middle again, so a store costs what it changed more than the length of the document.
 */

export function derivation(all: readonly BlockInfo[]): Derivation {
  return rederive({ infos: [], revs: [], strings: [], projection: '', entries: [] }, all);
}

/** Past this many changed blocks, finding each in the list costs more than comparing the lists. */
const FEW = 32;

/**
 * `touched`, when known: the blocks changed or put in since `last` was made, none having left
 * the array since; the start and end are then found from where those blocks stand.
 */
export function rederive(
  last: Derivation,
  all: readonly BlockInfo[],
  touched?: ReadonlySet<BlockInfo>,
): Derivation {
  const n = all.length;
  const m = last.infos.length;
  if (touched && touched.size === 0 && n === m) return last;
  const span = touched && touched.size <= FEW ? spanOf(all, touched) : undefined;
  let head = 0;
  let tail = 0;
  if (span) {
    head = span.lo;
    tail = n - 1 - span.hi;
  } else {
    const same = (i: number, j: number) => all[i] === last.infos[j] && all[i]!.rev === last.revs[j];
    while (head < n && head < m && same(head, head)) head++;
    while (tail < n - head && tail < m - head && same(n - 1 - tail, m - 1 - tail)) tail++;
  }
  let headChars = 0;
  let headLive = 0;
  for (let j = 0; j < head; j++) {
    const s = last.strings[j];
    if (typeof s === 'string') {
      headChars += s.length;
      headLive++;
    }
  }
  let tailChars = 0;
  let tailLive = 0;
  for (let j = m - tail; j < m; j++) {
    const s = last.strings[j];
    if (typeof s === 'string') {
      tailChars += s.length;
      tailLive++;
    }
  }
  const revs: number[] = [];
  const strings: (string | null)[] = [];
  const texts: string[] = [];
  const entries: string[] = [];
  for (let i = head; i < n - tail; i++) {
    const info = all[i]!;
    revs.push(info.rev);
    if (info.deleted) {
      strings.push(null);
      continue;
    }
    const text = stringOf(info);
    strings.push(text);
    texts.push(text);
    entries.push(entryOf(info));
  }
  const kept = last.projection;
  return {
    infos: all.slice(),
    revs: last.revs.slice(0, head).concat(revs, last.revs.slice(m - tail)),
    strings: last.strings.slice(0, head).concat(strings, last.strings.slice(m - tail)),
    projection: kept.slice(0, headChars) + texts.join('') + kept.slice(kept.length - tailChars),
    entries: last.entries
      .slice(0, headLive)
      .concat(entries, last.entries.slice(last.entries.length - tailLive)),
  };
}

/** Where the first and last of the touched blocks stand, or undefined when one is not in the list. */
function spanOf(
  all: readonly BlockInfo[],
  touched: ReadonlySet<BlockInfo>,
): { lo: number; hi: number } | undefined {
  if (touched.size === 0) return undefined;
  let lo = all.length;
  let hi = -1;
  for (const info of touched) {
    const at = all.indexOf(info);
    if (at < 0) return undefined;
    if (at < lo) lo = at;
    if (at > hi) hi = at;
  }
  return { lo, hi };
}
