/**
 * Tandem's speed figures, each against a baseline measured in the same process and run:
 * a bare MCP server with one no-op tool, served over the same HTTP stack.
 *
 *   npm run bench            (BENCH_CALLS, BENCH_SECONDS, BENCH_CONCURRENCY to change the load)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { serve } from '@hono/node-server';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { loadConfig } from '../src/config.ts';
import { demoFixture, DEMO_WORKSPACE } from '../src/domains/workspace/demo.ts';
import { importFixture } from '../src/domains/workspace/import.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { openServices } from '../src/services.ts';
import { startServer } from '../src/server.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);

type Call = () => Promise<unknown>;

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
  const rounds = Math.max(2, Math.round(seconds));
  const window = (seconds * 1000) / rounds;
  for (let r = 0; r < rounds; r++) {
    const order: (0 | 1)[] = r % 2 === 0 ? [0, 1] : [1, 0];
    for (const which of order) {
      const end = performance.now() + window;
      await Promise.all(
        (which === 0 ? a : b).map(async (call) => {
          while (performance.now() < end) {
            await call();
            done[which]!++;
          }
        }),
      );
    }
  }
  return [done[0]! / seconds, done[1]! / seconds];
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

  // The baseline: the same SDK and HTTP stack, one tool that does nothing, no auth, no storage.
  // Its schemas are built once, as Tandem's are, so neither side pays for schema construction per call.
  const inputSchema = z.object({});
  const outputSchema = z.object({ ok: z.boolean() });
  const bare = createMcpHandler(() => {
    const s = new McpServer({ name: 'bare', version: '1.0.0' });
    s.registerTool('noop', { inputSchema, outputSchema }, async () => ({
      content: [{ type: 'text', text: 'ok' }],
      structuredContent: { ok: true },
    }));
    return s;
  });
  const bareServer = serve({ fetch: (req) => bare.fetch(req), port: 18790, hostname: '127.0.0.1' });
  await new Promise((r) => bareServer.once('listening', r));

  const pageId = ids.artifacts.landing!;
  const tandemUrl = `${config.publicUrl}/mcp`;
  const bareUrl = 'http://127.0.0.1:18790/mcp';
  // The load comes from a worker thread, so the servers under test keep this thread to themselves.
  const worker = new Worker(new URL(import.meta.url), { workerData: { tandemUrl, bareUrl, token, pageId } });
  const report = await new Promise<Report>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  print(report);

  await server.close();
  await bare.close();
  bareServer.close();
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
}

async function load(): Promise<Report> {
  const { tandemUrl, bareUrl, token, pageId } = workerData as {
    tandemUrl: string;
    bareUrl: string;
    token: string;
    pageId: string;
  };
  const t1 = await client(tandemUrl, token);
  const b1 = await client(bareUrl);
  const [readPage, noop] = await pairedLatencies(
    checked(t1, 'read_page', { page_id: pageId }),
    checked(b1, 'noop', {}),
    CALLS,
  );
  const tandemClients = await Promise.all(
    Array.from({ length: CONCURRENCY }, () => client(tandemUrl, token)),
  );
  const bareClients = await Promise.all(Array.from({ length: CONCURRENCY }, () => client(bareUrl)));
  const [readRate, noopRate] = await pairedThroughput(
    tandemClients.map((c) => checked(c, 'read_page', { page_id: pageId })),
    bareClients.map((c) => checked(c, 'noop', {})),
    SECONDS,
  );
  await Promise.all([...tandemClients, ...bareClients, t1, b1].map((c) => c.close()));
  return { noop, readPage, noopRate, readRate };
}

function print({ noop, readPage, noopRate, readRate }: Report) {
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
}

if (isMainThread) await main();
else parentPort!.postMessage(await load());
