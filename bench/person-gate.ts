/**
 * What judging a person's update costs: a keystroke, a new block and a 2 KB paste into a document
 * of 60,000 characters and into one at the live bounds (250,000), through the gate the socket
 * uses (a shadow copy, the blocks the update touches); what making the shadow costs; and the heap
 * a document at the bounds takes with its shadow.
 *
 *   node --expose-gc bench/person-gate.ts      (BENCH_UPDATES to change the count)
 */
import * as Y from 'yjs';
import { DEFAULT_BOUNDS } from '../src/domains/documents/bounds.ts';
import { blockArray, docFromMarkdown, newBlock } from '../src/domains/documents/model.ts';
import { personGate } from '../src/domains/documents/person-gate.ts';

const UPDATES = Number(process.env.BENCH_UPDATES ?? 2_000);

const paragraph = (i: number) => `Paragraph ${i}: ${'words that people write, '.repeat(15)}\n\n`;

function documentOf(chars: number): Y.Doc {
  let markdown = '# Bench\n\n';
  for (let i = 0; markdown.length + 420 < chars; i++) markdown += paragraph(i);
  return docFromMarkdown(markdown);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const f = (ms: number) => (ms * 1000).toFixed(0).padStart(8);

function measure(label: string, live: Y.Doc, edit: (replica: Y.Doc, i: number) => void): void {
  const gate = personGate();
  const replica = new Y.Doc();
  Y.applyUpdate(replica, Y.encodeStateAsUpdate(live));
  const made = performance.now();
  gate.check(live, new Uint8Array([0, 0]));
  const shadowMs = performance.now() - made;
  const times: number[] = [];
  for (let i = 0; i < UPDATES; i++) {
    const vector = Y.encodeStateVector(live);
    edit(replica, i);
    const update = Y.encodeStateAsUpdate(replica, vector);
    const started = performance.now();
    const refusal = gate.check(live, update);
    times.push(performance.now() - started);
    if (refusal) throw new Error(`${label}: refused: ${refusal}`);
    Y.applyUpdate(live, update);
  }
  times.sort((a, b) => a - b);
  console.log(
    `${label.padEnd(38)}${f(pct(times, 0.5))}  ${f(pct(times, 0.99))}   (shadow made in ${shadowMs.toFixed(1)} ms)`,
  );
  gate.forget(live);
}

const texts = (doc: Y.Doc) =>
  blockArray(doc)
    .toArray()
    .map((m) => m.get('text') as Y.Text);

console.log(`Judging a person's update (${UPDATES} updates each)       p50 µs    p99 µs`);
for (const [name, chars, pasteRoom] of [
  ['60,000 characters', 60_000, true],
  ['at the bounds (250,000)', DEFAULT_BOUNDS.documentChars - 20_000, false],
] as const) {
  const keystrokes = documentOf(chars);
  measure(`keystroke, ${name}`, keystrokes, (r, i) => {
    const all = texts(r);
    all[i % all.length]!.insert(5, 'x');
  });
  const enters = documentOf(chars);
  measure(`new block, ${name}`, enters, (r, i) => {
    blockArray(r).insert(1 + (i % 50), [newBlock('A line.\n\n')]);
  });
  if (pasteRoom) {
    const pastes = documentOf(chars);
    measure(`2 KB paste, ${name}`, pastes, (r, i) => {
      const all = texts(r);
      all[i % all.length]!.insert(0, 'p'.repeat(2_000).slice(0, i < 90 ? 2_000 : 1));
    });
  }
}

const gc = (globalThis as { gc?: () => void }).gc;
if (gc) {
  gc();
  const before = process.memoryUsage().heapUsed;
  const live = documentOf(DEFAULT_BOUNDS.documentChars - 1_000);
  const gate = personGate();
  const replica = new Y.Doc();
  Y.applyUpdate(replica, Y.encodeStateAsUpdate(live));
  texts(replica)[0]!.insert(0, 'x');
  gate.check(live, Y.encodeStateAsUpdate(replica, Y.encodeStateVector(live)));
  gc();
  const heap = process.memoryUsage().heapUsed - before;
  console.log(`heap of a document at the bounds with its shadow: ${(heap / 1024 / 1024).toFixed(1)} MB`);
  gate.forget(live);
}
console.log("target: none in the issue beyond memory within npm start's heap flags (384 MB old space)");
