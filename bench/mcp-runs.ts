/**
 * Runs queued through MCP: 8 clients calling `edit_automation` `run` on the published 10-step
 * chain over HTTP, each with its next call as soon as the last one answers, until every run has
 * finished. Embedded (SQLite, the engine in this process beside the server) and on Postgres with
 * one `tandem worker` process; the engine alone (the same runs queued through the domain) is
 * measured in the same run for comparison. Both servers answer 1,000 calls before any is timed,
 * and on Postgres the tables are vacuumed before each measured part.
 * "Both costs paid" is what a run that costs a bare SDK call plus its run alone could reach on
 * this machine's shared cores: 1 / (1/ceiling + 1/alone).
 *
 *   node bench/mcp-runs.ts   (part of npm run bench; BENCH_MCP_RUNS, BENCH_DATABASE_URL,
 *                             BENCH_MCP_PARTS=embedded,postgres to change)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { loadConfig } from '../src/config.ts';
import { serveBare, type Answer } from './bare.ts';
import { createEngine } from '../src/engine/engine.ts';
import { startServer } from '../src/server.ts';
import { openServices, type Services } from '../src/services.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import {
  dropDatabase,
  finished,
  freshDatabase,
  queue,
  startWorkers,
  stopWorkers,
  until,
  workspace,
} from './engine-kit.ts';

const RUNS = Number(process.env.BENCH_MCP_RUNS ?? 2000);
const IN_FLIGHT = 8;
/** Calls made before any is timed, so both servers are measured warm (compiled, caches full). */
const WARM_UP = 1000;
const PARTS = new Set((process.env.BENCH_MCP_PARTS ?? 'embedded,postgres').split(','));

interface Calls {
  url: string;
  token: string | undefined;
  call: { name: string; arguments: Record<string, unknown> };
}

/**
 * 8 MCP clients in a worker thread (so the server under test keeps this thread to itself, as in
 * bench/run.ts), connected before anything is timed: `make(n)` has them make `n` calls of one
 * tool between them and resolves when all have answered.
 */
async function callers(url: string, token: string | undefined, call: Calls['call']) {
  const worker = new Worker(new URL(import.meta.url), { workerData: { url, token, call } satisfies Calls });
  const next = () =>
    new Promise<void>((resolve, reject) => {
      const fail = (error: Error) => reject(error);
      worker.once('error', fail);
      worker.once('message', (m: { error?: string }) => {
        worker.off('error', fail);
        if (m.error) reject(new Error(m.error));
        else resolve();
      });
    });
  await next();
  return {
    make(n: number) {
      const done = next();
      worker.postMessage(n);
      return done;
    },
    close: () => worker.terminate(),
  };
}

/** The clients' side of `callers`, in its worker thread. */
async function makeCalls({ url, token, call }: Calls): Promise<void> {
  const clients = await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      const c = new Client({ name: 'bench', version: '1.0.0' });
      await c.connect(
        new StreamableHTTPClientTransport(
          new URL(url),
          token ? { requestInit: { headers: { Authorization: `Bearer ${token}` } } } : {},
        ),
      );
      return c;
    }),
  );
  parentPort!.postMessage({});
  parentPort!.on('message', async (n: number) => {
    let next = 0;
    try {
      await Promise.all(
        clients.map(async (c) => {
          while (next < n) {
            next += 1;
            const r = await c.callTool(call);
            if (r.isError) throw new Error(`${call.name} failed: ${JSON.stringify(r.content)}`);
          }
        }),
      );
      parentPort!.postMessage({});
    } catch (error) {
      parentPort!.postMessage({ error: String(error) });
    }
  });
}

/**
 * The ceiling the MCP door sets: calls per second a bare SDK server (one no-op tool, no auth, no
 * storage, the same HTTP stack) answers with the same 8 calls in flight, measured the same way;
 * answering with the SDK's default event stream, or in one JSON body as Tandem does.
 */
async function bareCeiling(port: number, n: number, answer: Answer): Promise<number> {
  const bare = await serveBare(port, answer);
  const calls = await callers(bare.url, undefined, { name: 'noop', arguments: {} });
  try {
    await calls.make(WARM_UP);
    const t = performance.now();
    await calls.make(n);
    return n / ((performance.now() - t) / 1000);
  } finally {
    await calls.close();
    await bare.close();
  }
}

async function measure(
  services: Services,
  port: number,
  begin: () => Promise<void>,
): Promise<{ mcp: number; alone: number }> {
  const { actor, automationId } = await workspace(services);
  const { token } = await services.tokens.create(actor.personId, actor.workspaceId, [...SCOPES], 3_600_000);
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-bench-mcp-runs-'));
  const config = loadConfig({
    TANDEM_DATA: dataDir,
    PORT: String(port),
    PAGES_PORT: String(port + 1),
    LOG_LEVEL: 'error',
  });
  const server = await startServer(config, services);
  // On Postgres each measured part starts from vacuumed tables, as in bench/engine.ts (this
  // machine's Postgres runs without autovacuum, and a queue's dead rows raise its cost per run).
  const vacuum = async () => void (await services.storage.pool?.query('vacuum analyze'));
  let total = 0;
  const all = () => until(async () => (await finished(services)) >= total);
  const calls = await callers(`${config.publicUrl}/mcp`, token, {
    name: 'edit_automation',
    arguments: { action: 'run', automation_id: automationId },
  });
  try {
    await begin();
    total += WARM_UP;
    await calls.make(WARM_UP);
    await all();
    await vacuum();
    let t = performance.now();
    total += RUNS;
    await calls.make(RUNS);
    await all();
    const mcp = RUNS / ((performance.now() - t) / 1000);
    await vacuum();
    t = performance.now();
    total += RUNS;
    await queue(services, actor, automationId, RUNS);
    await all();
    const alone = RUNS / ((performance.now() - t) / 1000);
    return { mcp, alone };
  } finally {
    await calls.close();
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function embedded() {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-mcp-embedded-'));
  const services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
  const engine = createEngine(services, { concurrency: 8 });
  try {
    return await measure(services, 18800, () => engine.start());
  } finally {
    await engine.stop();
    await services.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function onPostgres() {
  const url = await freshDatabase();
  const services = await openServices({ databaseUrl: url });
  let workers: Awaited<ReturnType<typeof startWorkers>> = [];
  try {
    return await measure(services, 18810, async () => {
      workers = await startWorkers(url, 1);
    });
  } finally {
    await stopWorkers(workers);
    await services.close();
    await dropDatabase();
  }
}

async function main() {
  const f = (n: number) => n.toFixed(0).padStart(6);
  const met = (ok: boolean) => (ok ? '(met)' : '(not met)');
  const seen: string[] = [];
  console.log(
    `Runs queued through MCP (${IN_FLIGHT} edit_automation run calls in flight over HTTP, the 10-step chain, ${RUNS} runs; runs/s to the last run finished)`,
  );
  const streamed = await bareCeiling(18820, RUNS, 'stream');
  console.log(
    `bare SDK server, no-op calls ${f(streamed)} calls/s   (the SDK's default: each answer an event stream)`,
  );
  const ceiling = await bareCeiling(18821, RUNS, 'json');
  console.log(
    `bare, answering in JSON  ${f(ceiling)} calls/s   (as Tandem answers: the most any tool call can reach here)`,
  );
  // Each MCP-queued run costs at least a bare call and the run itself, on the same two cores: the
  // most both together allow, from the two figures measured here (a bound, not a measurement).
  const paid = (alone: number) => 1 / (1 / ceiling + 1 / alone);
  if (PARTS.has('embedded')) {
    const r = await embedded();
    console.log(
      `embedded (SQLite)        MCP ${f(r.mcp)} runs/s   engine alone ${f(r.alone)} runs/s   both costs paid ${f(paid(r.alone))} runs/s`,
    );
    seen.push(`embedded ${r.mcp.toFixed(0)} ${met(r.mcp >= 1000)}`);
  }
  if (PARTS.has('postgres')) {
    const r = await onPostgres();
    console.log(
      `Postgres, one worker     MCP ${f(r.mcp)} runs/s   engine alone ${f(r.alone)} runs/s   both costs paid ${f(paid(r.alone))} runs/s`,
    );
    seen.push(`Postgres ${r.mcp.toFixed(0)} ${met(r.mcp >= 500)}`);
  }
  console.log(
    `goal: MCP-queued runs (8 calls in flight, the 10-step chain) ≥ 1,000 runs/s embedded and ≥ 500 on Postgres with one worker: ${seen.join(', ')}`,
  );
}

if (isMainThread) await main();
else await makeCalls(workerData as Calls);
