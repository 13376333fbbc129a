/**
 * `read_page` latency while the heaviest runs the engine's caps allow execute in the same process,
 * against the same calls with the engine idle, measured in one run:
 *
 *   node bench/heavy-run.ts        (part of npm run bench; BENCH_HEAVY_SECONDS to change the load)
 *
 * The heavy runs: a map of 1,000 items whose body is two transforms (about 2,500 step executions,
 * the cap), and a chain of template transforms doubling their text up to the output cap.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { loadConfig } from '../src/config.ts';
import { demoFixture, DEMO_WORKSPACE } from '../src/domains/import/demo.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { createEngine } from '../src/engine/engine.ts';
import { openServices } from '../src/services.ts';
import { startServer } from '../src/server.ts';

const SECONDS = Number(process.env.BENCH_HEAVY_SECONDS ?? 6);

const lit = (value: unknown) => ({ kind: 'literal', value });
const ref = (node: string, path: string) => ({ kind: 'ref', node, path });

/** A map over 1,000 items, two transforms per item: the step-execution cap's worth of work. */
const MAP_PLAN = {
  planVersion: 1,
  name: 'Heavy map',
  description: 'Many small steps.',
  nodes: [
    {
      id: 'items',
      kind: 'transform',
      op: 'split',
      input: { text: lit(Array.from({ length: 1000 }, (_, i) => `item ${i}`).join(',')) },
      args: { separator: ',' },
    },
    {
      id: 'each',
      kind: 'map',
      items: ref('items', 'items'),
      concurrency: 10,
      body: {
        nodes: [
          {
            id: 'a',
            kind: 'transform',
            op: 'template',
            input: { x: { kind: 'trigger', path: 'item' } },
            args: { template: '<{{x}}>' },
          },
          {
            id: 'b',
            kind: 'transform',
            op: 'template',
            input: { y: ref('a', 'text') },
            args: { template: '[{{y}}]' },
          },
        ],
        edges: [{ from: 'a', to: 'b' }],
      },
      result: 'b',
    },
  ],
  edges: [{ from: 'items', to: 'each' }],
};

/** Templates doubling a 1,024-character text until the output cap stops them. */
const DOUBLING_PLAN = {
  planVersion: 1,
  name: 'Heavy text',
  description: 'Big outputs.',
  nodes: Array.from({ length: 19 }, (_, i) => ({
    id: `t${i}`,
    kind: 'transform',
    op: 'template',
    input: { x: i === 0 ? lit('x'.repeat(1024)) : ref(`t${i - 1}`, 'text') },
    args: { template: '{{x}}{{x}}' },
  })),
  edges: Array.from({ length: 18 }, (_, i) => ({ from: `t${i}`, to: `t${i + 1}` })),
};

interface Stats {
  p50: number;
  p99: number;
  calls: number;
}

function stats(times: number[]): Stats {
  times.sort((a, b) => a - b);
  const at = (p: number) => times[Math.min(times.length - 1, Math.floor((p / 100) * times.length))] ?? NaN;
  return { p50: at(50), p99: at(99), calls: times.length };
}

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-bench-heavy-'));
  const config = loadConfig({ TANDEM_DATA: dataDir, PORT: '18797', LOG_LEVEL: 'error' });
  const services = await openServices({ sqlitePath: config.sqlitePath });
  const ids = (await importFixture(services.deps, demoFixture)).workspaces[DEMO_WORKSPACE]!;
  const ada = ids.users['ada@demo.test']!;
  const actor: Actor = { personId: ada, workspaceId: ids.id, scopes: new Set(SCOPES) };
  const { token } = await services.tokens.create(ada, ids.id, [...SCOPES], 3_600_000);
  const server = await startServer(config, services);
  const engine = createEngine(services);

  const automations: string[] = [];
  for (const plan of [MAP_PLAN, DOUBLING_PLAN]) {
    const draft = await services.automations.draft(actor, { plan_json: plan, ask: plan.name });
    const published = await services.automations.publish(actor, {
      flow_version_id: draft.flow_version_id,
      name: plan.name,
      trigger: { kind: 'schedule', frequency: 'weekly', weekday: 1, hour: 3, minute: 0, timezone: 'UTC' },
    });
    automations.push(published.automation_id);
  }

  const measure = async (phase: string): Promise<Stats> => {
    const worker = new Worker(new URL(import.meta.url), {
      workerData: {
        url: `${config.publicUrl}/mcp`,
        token,
        pageId: ids.artifacts.landing,
        seconds: SECONDS,
        phase,
      },
    });
    const times = await new Promise<number[]>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await worker.terminate();
    return stats(times);
  };

  const idle = await measure('idle');
  engine.start();
  let runs = 0;
  let stopping = false;
  // Keeps two heavy runs going at all times while the load measures.
  const feeder = (async () => {
    while (!stopping) {
      const active = await services.deps.db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'in', ['queued', 'running', 'waiting'])
        .executeTakeFirstOrThrow();
      if (Number(active.n) < 2) {
        await services.automations.run(actor, { automation_id: automations[runs % 2] });
        runs += 1;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const heavy = await measure('heavy');
  loop.disable();
  stopping = true;
  await feeder;
  await engine.stop();
  const done = await services.deps.db
    .selectFrom('runs')
    .select(['status', 'error'])
    .where('status', 'in', ['succeeded', 'failed'])
    .execute();
  const finished = done.length;
  const steps = await services.deps.db
    .selectFrom('run_nodes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();

  const f = (n: number) => n.toFixed(2).padStart(8);
  console.log('read_page while the heaviest bounded runs execute (same process, SQLite)');
  console.log('                               p50 ms    p99 ms    calls');
  console.log(
    `engine idle                  ${f(idle.p50)}  ${f(idle.p99)}  ${String(idle.calls).padStart(7)}`,
  );
  console.log(
    `heavy runs executing         ${f(heavy.p50)}  ${f(heavy.p99)}  ${String(heavy.calls).padStart(7)}`,
  );
  console.log(
    `ratio heavy/idle             ${(heavy.p50 / idle.p50).toFixed(2).padStart(8)}  ${(heavy.p99 / idle.p99).toFixed(2).padStart(8)}`,
  );
  console.log(
    `runs queued ${runs}, finished ${finished}, step executions stored ${Number(steps.n)} in ${SECONDS} s`,
  );
  console.log(
    `event loop delay while heavy: p99 ${(loop.percentile(99) / 1e6).toFixed(1)} ms, max ${(loop.max / 1e6).toFixed(1)} ms`,
  );
  console.log('target: read_page p99 under 100 ms while heavy runs execute');

  await server.close();
  await services.close();
  rmSync(dataDir, { recursive: true, force: true });
}

/** The load: one client calling read_page back to back for `seconds`, latencies in ms. */
async function load(): Promise<number[]> {
  const { url, token, pageId, seconds } = workerData as {
    url: string;
    token: string;
    pageId: string;
    seconds: number;
  };
  const client = new Client({ name: 'bench-heavy', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  const times: number[] = [];
  const end = performance.now() + seconds * 1000;
  while (performance.now() < end) {
    const t = performance.now();
    const r = await client.callTool({ name: 'read_page', arguments: { page_id: pageId } });
    if (r.isError) throw new Error(`read_page failed: ${JSON.stringify(r.content)}`);
    times.push(performance.now() - t);
  }
  await client.close();
  return times;
}

if (isMainThread) await main();
else parentPort!.postMessage(await load());
