/**
 * Tandem's speed figures, each against a baseline measured in the same process and run:
 * a bare MCP server with one no-op tool, served over the same HTTP stack.
 *
 *   npm run bench            (BENCH_CALLS, BENCH_SECONDS, BENCH_CONCURRENCY to change the load)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { loadConfig } from '../src/config.ts';
import { demoFixture, DEMO_WORKSPACE } from '../src/domains/import/demo.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { openServices, type Services } from '../src/services.ts';
import type { Actor } from '../src/domains/workspace/actor.ts';
import { startServer } from '../src/server.ts';
import { serveBare } from './bare.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

type Call = () => Promise<unknown>;

const met = (ok: boolean) => (ok ? '(met)' : '(not met)');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

/**
 * Latencies of two calls measured in alternating rounds (the order flipping every round), so
 * both see the same machine: on a shared VM, measuring one after the other turns drift into a
 * difference.
 */
async function pairedLatencies(a: Call, b: Call, n: number, rounds = 20): Promise<[Stats, Stats]> {
  for (let i = 0; i < Math.min(200, n); i++) {
    await a();
    await b();
  }
  const times: [number[], number[]] = [[], []];
  const per = Math.ceil(n / rounds);
  for (let r = 0; r < rounds; r++) {
    const order: (0 | 1)[] = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const call = which === 0 ? a : b;
      for (let i = 0; i < per; i++) {
        const t = performance.now();
        await call();
        times[which].push(performance.now() - t);
      }
    }
  }
  return times.map((list) => {
    list.sort((x, y) => x - y);
    return { p50: percentile(list, 50), p99: percentile(list, 99) };
  }) as [Stats, Stats];
}

/** Calls per second of two sets of clients, in alternating one-second windows. */
async function pairedThroughput(a: Call[], b: Call[], seconds: number): Promise<[number, number]> {
  const done = [0, 0];
  // An even number of rounds, so each server goes first as often as the other.
  const rounds = Math.max(2, 2 * Math.round(seconds / 2));
  const window = (seconds * 1000) / rounds;
  const during = async (which: 0 | 1, ms: number, count: boolean) => {
    const end = performance.now() + ms;
    await Promise.all(
      (which === 0 ? a : b).map(async (call) => {
        while (performance.now() < end) {
          await call();
          if (count) done[which]!++;
        }
      }),
    );
  };
  // One untimed window each first: new clients' first calls are not what the servers sustain.
  for (const which of [0, 1] as const) await during(which, window, false);
  for (let r = 0; r < rounds; r++)
    for (const which of r % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const))
      await during(which, window, true);
  return [done[0]! / ((window * rounds) / 1000), done[1]! / ((window * rounds) / 1000)];
}

async function client(url: string, token?: string) {
  const c = new Client({ name: 'bench', version: '1.0.0' });
  await c.connect(
    new StreamableHTTPClientTransport(
      new URL(url),
      token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
    ),
  );
  return c;
}

function checked(c: Client, name: string, args: Record<string, unknown>): Call {
  return async () => {
    const r = await c.callTool({ name, arguments: args });
    if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content)}`);
  };
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-bench-'));
  const config = loadConfig({ TANDEM_DATA: dataDir, PORT: '18787', LOG_LEVEL: 'error' });
  const services = await openServices({ sqlitePath: config.sqlitePath });
  const ids = (await importFixture(services.deps, demoFixture)).workspaces[DEMO_WORKSPACE]!;
  const ada = ids.users['ada@demo.test']!;
  const { token } = await services.tokens.create(ada, ids.id, [...SCOPES], 3_600_000);
  const server = await startServer(config, services);

  // The baseline: the same SDK and HTTP stack, one tool that does nothing, no auth, no storage
  // (bench/bare.ts); the goals are against the SDK's default, and a second one answering in JSON
  // as Tandem does shows what Tandem itself adds.
  const bare = await serveBare(18790, 'stream');
  const bareJson = await serveBare(18792, 'json');

  const pageId = ids.artifacts.landing!;
  const actor = { personId: ada, workspaceId: ids.id, scopes: new Set(SCOPES) };
  const made = await services.documents.create(actor, { title: 'Bench', content_markdown: bigDocument(0) });
  const docId = made.document_id;
  const tandemUrl = `${config.publicUrl}/mcp`;
  const bareUrl = bare.url;
  const bareJsonUrl = bareJson.url;
  // The load comes from a worker thread, so the servers under test keep this thread to themselves.
  const worker = new Worker(new URL(import.meta.url), {
    workerData: { tandemUrl, bareUrl, bareJsonUrl, token, pageId, docId },
  });
  const report = await new Promise<Report>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  print(report);
  console.log('');
  console.log(await memoryInChild());

  await server.close();
  await bare.close();
  await bareJson.close();
  await services.storage.close();
  rmSync(dataDir, { recursive: true, force: true });
}

interface Stats {
  p50: number;
  p99: number;
}
interface Report {
  noop: Stats;
  readPage: Stats;
  noopRate: number;
  readRate: number;
  /** read_page against the bare server answering in JSON: p50s, then calls/s of each. */
  json: { readPage: Stats; noop: Stats; readRate: number; noopRate: number };
  docs: [name: string, stats: Stats, baseline: Stats][];
}

async function load(): Promise<Report> {
  const { tandemUrl, bareUrl, bareJsonUrl, token, pageId, docId } = workerData as {
    tandemUrl: string;
    bareUrl: string;
    bareJsonUrl: string;
    token: string;
    pageId: string;
    docId: string;
  };
  const t1 = await client(tandemUrl, token);
  const b1 = await client(bareUrl);
  const j1 = await client(bareJsonUrl);
  const [readPage, noop] = await pairedLatencies(
    checked(t1, 'read_page', { page_id: pageId }),
    checked(b1, 'noop', {}),
    CALLS,
  );
  const [readPageJ, noopJ] = await pairedLatencies(
    checked(t1, 'read_page', { page_id: pageId }),
    checked(j1, 'noop', {}),
    CALLS,
  );
  const noopCall = checked(b1, 'noop', {});
  const docCalls = Math.max(100, Math.floor(CALLS / 4));
  const [readDoc, noopForRead] = await pairedLatencies(
    checked(t1, 'read_document', { document_id: docId }),
    noopCall,
    docCalls,
  );
  const [append, noopForAppend] = await pairedLatencies(
    checked(t1, 'edit_document', {
      document_id: docId,
      mode: 'append',
      content_markdown: 'One more line.\n',
    }),
    noopCall,
    docCalls,
  );
  const [replace, noopForReplace] = await pairedLatencies(
    checked(t1, 'edit_document', {
      document_id: docId,
      mode: 'replace_section',
      section_excerpt: 'the section the benchmark rewrites',
      content_markdown:
        '## Section 17: the section the benchmark rewrites\n\nRewritten in the benchmark.\n\n',
    }),
    noopCall,
    docCalls,
  );
  const tandemClients = await Promise.all(
    Array.from({ length: CONCURRENCY }, () => client(tandemUrl, token)),
  );
  const bareClients = await Promise.all(Array.from({ length: CONCURRENCY }, () => client(bareUrl)));
  const jsonClients = await Promise.all(Array.from({ length: CONCURRENCY }, () => client(bareJsonUrl)));
  const [readRate, noopRate] = await pairedThroughput(
    tandemClients.map((c) => checked(c, 'read_page', { page_id: pageId })),
    bareClients.map((c) => checked(c, 'noop', {})),
    SECONDS,
  );
  const [readRateJ, noopRateJ] = await pairedThroughput(
    tandemClients.map((c) => checked(c, 'read_page', { page_id: pageId })),
    jsonClients.map((c) => checked(c, 'noop', {})),
    SECONDS,
  );
  await Promise.all([...tandemClients, ...bareClients, ...jsonClients, t1, b1, j1].map((c) => c.close()));
  return {
    noop,
    readPage,
    noopRate,
    readRate,
    json: { readPage: readPageJ, noop: noopJ, readRate: readRateJ, noopRate: noopRateJ },
    docs: [
      ['read_document', readDoc, noopForRead],
      ['edit_document append', append, noopForAppend],
      ['edit_document replace_section', replace, noopForReplace],
    ],
  };
}

function print({ noop, readPage, noopRate, readRate, json, docs }: Report) {
  const f = (n: number) => n.toFixed(2).padStart(8);
  console.log(
    `Tandem benchmark (Node ${process.versions.node}, SQLite, HTTP on loopback; ${CALLS} sequential calls and ${CONCURRENCY} clients for ${SECONDS}s each, the two servers in alternating rounds)`,
  );
  console.log('');
  console.log('                         p50 ms    p99 ms    calls/s');
  console.log(`noop (bare MCP server) ${f(noop.p50)}  ${f(noop.p99)}  ${noopRate.toFixed(0).padStart(9)}`);
  console.log(
    `read_page              ${f(readPage.p50)}  ${f(readPage.p99)}  ${readRate.toFixed(0).padStart(9)}`,
  );
  console.log('');
  console.log(
    `read_page / noop  p50 ×${(readPage.p50 / noop.p50).toFixed(2)}  p99 ×${(readPage.p99 / noop.p99).toFixed(2)}  throughput ×${(readRate / noopRate).toFixed(2)}`,
  );
  console.log(`targets: p50 ratio ≤ 1.5; read_page ≥ 1000 calls/s with ${CONCURRENCY} clients`);
  const p50 = readPage.p50 / noop.p50;
  const rate = readRate / noopRate;
  console.log(
    `goal: read_page p50 ≤ 1.15×, throughput ≥ 0.9×: p50 ×${p50.toFixed(2)} ${met(p50 <= 1.15)}, throughput ×${rate.toFixed(2)} ${met(rate >= 0.9)}`,
  );
  console.log(
    `against a bare no-op answering in one JSON body, as Tandem answers (${f(json.noop.p50).trim()} ms, ${json.noopRate.toFixed(0)} calls/s): what Tandem adds: p50 ×${(json.readPage.p50 / json.noop.p50).toFixed(2)}, throughput ×${(json.readRate / json.noopRate).toFixed(2)}`,
  );
  console.log('');
  console.log('On a 60,000-character document        p50 ms    p99 ms    ×noop p50  ×noop p99');
  for (const [name, stats, base] of docs) {
    const r50 = (stats.p50 / base.p50).toFixed(2).padStart(9);
    const r99 = (stats.p99 / base.p99).toFixed(2).padStart(9);
    console.log(`${name.padEnd(36)} ${f(stats.p50)}  ${f(stats.p99)}  ${r50}  ${r99}`);
  }
  console.log('target: edits within 5× the no-op baseline');
  const edits = docs.filter(([name]) => name.startsWith('edit_document'));
  console.log(
    `goal: edits p50 ≤ 2.5×: ${edits.map(([name, stats, base]) => `${name.slice(14)} ×${(stats.p50 / base.p50).toFixed(2)} ${met(stats.p50 / base.p50 <= 2.5)}`).join(', ')}`,
  );
}

/** A document just under the 60,000-character cap, in numbered sections. */
function bigDocument(seed: number): string {
  let text = `# Benchmark document ${seed}\n\n`;
  for (let i = 0; text.length < 59_000; i++) {
    const heading = i === 17 ? 'Section 17: the section the benchmark rewrites' : `Section ${i}`;
    text += `## ${heading}\n\nThis paragraph of section ${i} stands in for real prose, long enough to be typical. It has a list:\n\n- one item\n- another item\n\n`;
  }
  return text;
}

/**
 * The memory figure comes from a process of its own, so the load phase's heap does not count,
 * started with the same V8 flags as `npm start`.
 */
async function memoryInChild(): Promise<string> {
  const { execFileSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    scripts: { start: string };
  };
  const flags = pkg.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
  return execFileSync(process.execPath, [...flags, fileURLToPath(import.meta.url)], {
    env: { ...process.env, BENCH_PHASE: 'memory' },
    encoding: 'utf8',
  }).trim();
}

async function memoryPhase(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-bench-memory-'));
  const services = await openServices({ sqlitePath: join(dataDir, 'tandem.sqlite') });
  const ids = (await importFixture(services.deps, demoFixture)).workspaces[DEMO_WORKSPACE]!;
  const actor = { personId: ids.users['ada@demo.test']!, workspaceId: ids.id, scopes: new Set(SCOPES) };
  console.log(await cycleDocuments(services, actor));
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
}

/** Memory after 1,000 documents of 60,000 characters have each been written through the live model. */
async function cycleDocuments(services: Services, actor: Actor): Promise<string> {
  const count = Number(process.env.BENCH_DOCUMENTS ?? 1000);
  const before = process.memoryUsage().rss;
  const started = performance.now();
  let peak = before;
  for (let i = 0; i < count; i++) {
    const { document_id } = await services.documents.create(actor, {
      title: `Cycle ${i}`,
      content_markdown: bigDocument(i),
    });
    await services.documents.edit(actor, { document_id, mode: 'append', content_markdown: 'Touched.\n' });
    if (i % 50 === 0) peak = Math.max(peak, process.memoryUsage().rss);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = process.memoryUsage().rss;
  peak = Math.max(peak, after);
  const mb = (n: number) => `${(n / 1048576).toFixed(0)} MB`;
  return [
    `Cycled ${count} documents of 60,000 characters through the live model (create + append each) in ${seconds.toFixed(1)} s.`,
    `RSS before ${mb(before)}, peak ${mb(peak)}, after ${mb(after)}; ${services.documents.store.loadedCount()} documents in memory (V8 flags of npm start: ${process.execArgv.join(' ') || 'none'}).`,
    `goal: 1,000 cycled documents ≤ 350 MB: peak ${mb(peak)} over ${count} ${met(peak <= 350 * 1048576 && count >= 1000)}`,
  ].join('\n');
}

if (process.env.BENCH_PHASE === 'memory') await memoryPhase();
else if (isMainThread) await main();
else parentPort!.postMessage(await load());
