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

export function rederive(last: Derivation, all: readonly BlockInfo[]): Derivation {
  const n = all.length;
  const m = last.infos.length;
  const same = (i: number, j: number) => all[i] === last.infos[j] && all[i]!.rev === last.revs[j];
  let head = 0;
  let headChars = 0;
  let headLive = 0;
  while (head < n && head < m && same(head, head)) {
    const s = last.strings[head];
    if (typeof s === 'string') {
      headChars += s.length;
      headLive++;
    }
    head++;
  }
  let tail = 0;
  let tailChars = 0;
  let tailLive = 0;
  while (tail < n - head && tail < m - head && same(n - 1 - tail, m - 1 - tail)) {
    const s = last.strings[m - 1 - tail];
    if (typeof s === 'string') {
      tailChars += s.length;
      tailLive++;
    }
    tail++;
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
