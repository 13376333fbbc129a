/** Past this many cells the comparison stops looking for the best alignment and compares as sets. */
const MAX_CELLS = 4_000_000;

/**
 * What changed from one text to another, line by line: the lines only the second has (`added`)
 * and those only the first had (`removed`), in order. Blank lines are set aside, and lines are
 * compared without the white space around them.
 */
export function diffTexts(from: string, to: string): { added: string[]; removed: string[] } {
  const a = from.split('\n').filter((b) => b.trim() !== '');
  const b = to.split('\n').filter((x) => x.trim() !== '');
  const key = (s: string) => s.trim();
  let start = 0;
  while (start < a.length && start < b.length && key(a[start]!) === key(b[start]!)) start++;
  let end = 0;
  while (
    end < a.length - start &&
    end < b.length - start &&
    key(a[a.length - 1 - end]!) === key(b[b.length - 1 - end]!)
  )
    end++;
  const midA = a.slice(start, a.length - end);
  const midB = b.slice(start, b.length - end);
  if (midA.length * midB.length > MAX_CELLS) return bySets(midA, midB, key);
  // The longest common run of blocks; what is outside it was added or removed.
  const n = midA.length;
  const m = midB.length;
  const table = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * (m + 1) + j] =
        key(midA[i]!) === key(midB[j]!)
          ? table[(i + 1) * (m + 1) + j + 1]! + 1
          : Math.max(table[(i + 1) * (m + 1) + j]!, table[i * (m + 1) + j + 1]!);
    }
  }
  const added: string[] = [];
  const removed: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (key(midA[i]!) === key(midB[j]!)) {
      i++;
      j++;
    } else if (table[(i + 1) * (m + 1) + j]! >= table[i * (m + 1) + j + 1]!) removed.push(midA[i++]!);
    else added.push(midB[j++]!);
  }
  while (i < n) removed.push(midA[i++]!);
  while (j < m) added.push(midB[j++]!);
  return { added, removed };
}

function bySets(a: string[], b: string[], key: (s: string) => string) {
  const inA = new Map<string, number>();
  for (const x of a) inA.set(key(x), (inA.get(key(x)) ?? 0) + 1);
  const added: string[] = [];
  for (const x of b) {
    const left = inA.get(key(x)) ?? 0;
    if (left > 0) inA.set(key(x), left - 1);
    else added.push(x);
  }
  const inB = new Map<string, number>();
  for (const x of b) inB.set(key(x), (inB.get(key(x)) ?? 0) + 1);
  const removed: string[] = [];
  for (const x of a) {
    const left = inB.get(key(x)) ?? 0;
    if (left > 0) inB.set(key(x), left - 1);
    else removed.push(x);
  }
  return { added, removed };
}
