/**
 * Undoing one agent write: how long an undo takes on a 60,000-character document with 200 later
 * edits (people's, through the live model), and how much storage a document's history takes after
 * 10,000 writes with pruning on, against the same without.
 *
 *   node bench/undo.ts      (BENCH_UNDOS, BENCH_HISTORY_WRITES to change the load)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import * as Y from 'yjs';
import { demoFixture, DEMO_WORKSPACE } from '../src/domains/import/demo.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { pruneVersions } from '../src/domains/documents/prune.ts';
import { versionChanges } from '../src/domains/documents/undo.ts';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { openServices, type Services } from '../src/services.ts';

const UNDOS = Number(process.env.BENCH_UNDOS ?? 60);
/** Undos made first and not counted: the code paths are compiled before anything is timed. */
const WARM_UP = 3;
const LATER_EDITS = 200;
const HISTORY_WRITES = Number(process.env.BENCH_HISTORY_WRITES ?? 10_000);

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** A document just under 60,000 characters, in numbered sections. */
function bigDocument(): string {
  let text = '# Undo benchmark\n\n';
  for (let i = 0; text.length < 59_000; i++) {
    text += `## Section ${i}\n\nThis paragraph of section ${i} stands in for real prose, long enough to be typical of a working document.\n\n`;
  }
  return text;
}

/** A person's replica of a live document: edits made on it reach the server as theirs. */
function replicaOf(services: Services, actor: Actor, id: string, state: Uint8Array) {
  const doc = new Y.Doc();
  Y.applyUpdate(doc, state);
  const sent: Promise<void>[] = [];
  doc.on('update', (update: Uint8Array, origin: unknown) => {
    if (origin !== 'server') sent.push(services.documents.applyPersonUpdate(actor, id, update));
  });
  return { doc, settled: () => Promise.all(sent) };
}

async function undoLatency(services: Services, actor: Actor): Promise<{ warm: number[]; kept: number }> {
  const { undo } = versionChanges(services.deps, services.documents.store);
  const times: number[] = [];
  let kept = 0;
  for (let i = 0; i < UNDOS + WARM_UP; i++) {
    const { document_id: id } = await services.documents.create(actor, {
      title: `Undo ${i}`,
      scope: 'org',
      content_markdown: bigDocument(),
    });
    // The agent write to undo: a section rewritten, in the middle of the document.
    const written = (await services.documents.edit(actor, {
      document_id: id,
      mode: 'replace_section',
      section_excerpt: `This paragraph of section ${40 + (i % 20)} stands in`,
      content_markdown:
        'Rewritten by the agent: first paragraph.\n\nRewritten by the agent: second paragraph.\n\n',
    })) as { new_version: number };
    const row = await services.deps.db
      .selectFrom('checkpoints')
      .select('id')
      .where('artifact_id', '=', id)
      .where('result_version', '=', written.new_version)
      .executeTakeFirstOrThrow();
    // 200 later edits by a person: words typed into passages across the document, a few into
    // what the agent wrote.
    const live = await services.documents.store.open(id);
    const replica = replicaOf(services, actor, id, Y.encodeStateAsUpdate(live.doc));
    const blocks = replica.doc.getArray<Y.Map<unknown>>('blocks');
    for (let e = 0; e < LATER_EDITS; e++) {
      const live = blocks.toArray().filter((m) => m.get('deleted') !== true);
      const map =
        e % 50 === 0
          ? live.find((m) => String(m.get('text')).includes('Rewritten by the agent'))!
          : live[(e * 37) % live.length]!;
      (map.get('text') as Y.Text).insert(0, `edit ${e} `);
    }
    await replica.settled();
    await services.documents.store.flush(id);
    const started = performance.now();
    const done = await undo(actor, { document_id: id, version_id: row.id });
    if (i >= WARM_UP) {
      times.push(performance.now() - started);
      kept += done.kept.length;
    }
    if (process.env.BENCH_VERBOSE) console.log(i, (performance.now() - started).toFixed(1));
    replica.doc.destroy();
    await services.documents.store.unload(id);
  }
  return { warm: times.sort((a, b) => a - b), kept };
}

/** What a version row takes as stored: its texts, plus about 100 bytes of the rest. */
const ROW_BYTES = sql<number>`coalesce(length(content), 0) + coalesce(length(blocks_json), 0)
  + coalesce(length(result_blocks_json), 0) + coalesce(length(changes_json), 0)
  + coalesce(length(kept_json), 0) + coalesce(length(instruction), 0) + 100`;

/** Bytes a document's version rows take, as stored. */
async function historyBytes(services: Services, id: string): Promise<{ rows: number; bytes: number }> {
  const r = await services.deps.db
    .selectFrom('checkpoints')
    .select((eb) => [eb.fn.countAll<number>().as('rows'), eb.fn.sum<number>(ROW_BYTES).as('bytes')])
    .where('artifact_id', '=', id)
    .executeTakeFirstOrThrow();
  return { rows: Number(r.rows), bytes: Number(r.bytes ?? 0) };
}

/**
 * 10,000 agent writes to one document, spread over a year (one about every 53 minutes), each a
 * section rewritten. Pruning runs as the engine's housekeeping would, on the year's clock; what
 * the history would take without it is the sum of every row as written.
 */
async function historyStorage(services: Services, actor: Actor) {
  const sections = 20;
  let text = '# History\n\n';
  for (let s = 0; s < sections; s++) text += `## Part ${s}\n\nPart ${s} text, version 0.\n\n`;
  const { document_id: id } = await services.documents.create(actor, {
    title: 'History',
    scope: 'org',
    content_markdown: text,
  });
  const year = 365 * 86_400_000;
  const start = Date.now() - year;
  const step = year / HISTORY_WRITES;
  const without = await historyBytes(services, id);
  const started = performance.now();
  for (let w = 0; w < HISTORY_WRITES; w++) {
    const s = (w * 7) % sections;
    const result = (await services.documents.edit(actor, {
      document_id: id,
      mode: 'replace_section',
      section_excerpt: `Part ${s} text, version`,
      content_markdown: `Part ${s} text, version ${w + 1}: rewritten with a sentence or two of new prose.\n\n`,
    })) as { new_version: number };
    // The write is dated where it falls in the year.
    const at = Math.round(start + w * step);
    const row = services.deps.db
      .updateTable('checkpoints')
      .set({ created_at: at })
      .where('artifact_id', '=', id)
      .where('result_version', '=', result.new_version);
    await row.execute();
    const size = await services.deps.db
      .selectFrom('checkpoints')
      .select(ROW_BYTES.as('bytes'))
      .where('artifact_id', '=', id)
      .where('result_version', '=', result.new_version)
      .executeTakeFirstOrThrow();
    without.rows++;
    without.bytes += Number(size.bytes);
    // The housekeeping's pass, about once an hour of the year's clock.
    if (Math.floor((at - start) / 3_600_000) !== Math.floor((at - step - start) / 3_600_000))
      await pruneVersions(services.deps.db, { now: at });
  }
  const writeMs = performance.now() - started;
  const withPruning = await historyBytes(services, id);
  return { without, withPruning, writeMs };
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-bench-undo-'));
  const services = await openServices({ sqlitePath: join(dataDir, 'tandem.sqlite') });
  try {
    const ids = (await importFixture(services.deps, demoFixture)).workspaces[DEMO_WORKSPACE]!;
    const actor: Actor = {
      personId: ids.users['ada@demo.test']!,
      workspaceId: ids.id,
      scopes: new Set(SCOPES),
    };
    const { warm, kept } = await undoLatency(services, actor);
    const f = (ms: number) => ms.toFixed(1).padStart(8);
    console.log(
      `Undo of one agent write on a 60,000-character document with ${LATER_EDITS} later edits (${UNDOS} undos, SQLite)`,
    );
    console.log(`                         p50 ms    p99 ms`);
    console.log(`undo                   ${f(percentile(warm, 50))}  ${f(percentile(warm, 99))}`);
    console.log(`passages kept per undo: ${(kept / UNDOS).toFixed(1)}`);
    console.log('target p99 ≤ 200 ms');
    console.log('');
    const { without, withPruning, writeMs } = await historyStorage(services, actor);
    const kb = (b: number) => `${(b / 1024).toFixed(0)} KB`;
    console.log(
      `A document's history after ${HISTORY_WRITES} agent writes over a year (${(writeMs / 1000).toFixed(0)} s of writes)`,
    );
    console.log(
      `without pruning   ${String(without.rows).padStart(6)} rows  ${kb(without.bytes).padStart(10)}`,
    );
    console.log(
      `with pruning      ${String(withPruning.rows).padStart(6)} rows  ${kb(withPruning.bytes).padStart(10)}`,
    );
    console.log(`pruning keeps ${((withPruning.bytes / without.bytes) * 100).toFixed(1)}% of the storage`);
  } finally {
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
