/**
 * The run engine at scale, measured in one run:
 *  - runs per second of a published 10-step transform chain, queued through the domain and run to
 *    the end: embedded (SQLite, the engine in this process) and on Postgres with 1, 2 and 4
 *    `tandem worker` processes, with each worker's CPU seconds (runs per CPU-second shows how the
 *    work scales when each worker has a core of its own); the baseline is queueing alone;
 *  - pickup latency on Postgres: a run queued by this process to its start in a worker process;
 *  - scheduler lag with 10,000 schedules due at the same instant, and the worker's memory.
 *
 *   node bench/engine.ts     (part of npm run bench; BENCH_RUNS, BENCH_DATABASE_URL to change)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/workspace/import.ts';
import { demoFixture, DEMO_USER } from '../src/domains/workspace/demo.ts';
import { createEngine } from '../src/engine/engine.ts';
import { openServices, type Services } from '../src/services.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 10_000);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BENCH_DB = 'tandem_bench_engine';
const ROOT = new URL('..', import.meta.url).pathname;

const CHAIN = {
  planVersion: 1,
  name: 'Chain',
  description: 'Ten transforms in a row.',
  nodes: Array.from({ length: 10 }, (_, i) => ({
    id: `t${i}`,
    kind: 'transform',
    op: 'template',
    input: {
      x: i === 0 ? { kind: 'trigger', path: 'by' } : { kind: 'ref', node: `t${i - 1}`, path: 'text' },
    },
    args: { template: `{{x}}.${i}` },
  })),
  edges: Array.from({ length: 9 }, (_, i) => ({ from: `t${i}`, to: `t${i + 1}` })),
};

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const until = async (check: () => Promise<boolean>, ms = 120_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('timed out waiting');
};

async function workspace(services: Services): Promise<{ actor: Actor; automationId: string }> {
  const ws = Object.values((await importFixture(services.deps, demoFixture)).workspaces)[0]!;
  const actor: Actor = { personId: ws.users[DEMO_USER]!, workspaceId: ws.id, scopes: new Set(SCOPES) };
  const draft = await services.automations.draft(actor, { plan_json: CHAIN, ask: 'Chain.' });
  const published = await services.automations.publish(actor, {
    flow_version_id: draft.flow_version_id,
    name: 'Chain',
    trigger: { kind: 'schedule', frequency: 'weekly', weekday: 1, hour: 3, minute: 0, timezone: 'UTC' },
  });
  return { actor, automationId: published.automation_id };
}

/** Queues `n` runs through the domain from 8 callers at once; resolves when all are queued. */
async function queue(services: Services, actor: Actor, automationId: string, n: number) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < n) {
        next += 1;
        await services.automations.run(actor, { automation_id: automationId });
      }
    }),
  );
}

async function finished(services: Services): Promise<number> {
  const row = await services.deps.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

async function embedded(): Promise<{ rate: number; queueRate: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-engine-'));
  const services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
  try {
    const { actor, automationId } = await workspace(services);
    // The baseline: queueing alone, no engine.
    let t = performance.now();
    await queue(services, actor, automationId, RUNS);
    const queueRate = RUNS / ((performance.now() - t) / 1000);
    await services.deps.db.deleteFrom('jobs').execute();
    await services.deps.db.deleteFrom('runs').execute();
    const engine = createEngine(services, { concurrency: 8 });
    await engine.start();
    t = performance.now();
    await queue(services, actor, automationId, RUNS);
    await until(async () => (await finished(services)) >= RUNS);
    const rate = RUNS / ((performance.now() - t) / 1000);
    await engine.stop();
    return { rate, queueRate };
  } finally {
    await services.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** utime + stime of a process, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}
const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function startWorkers(url: string, count: number): Promise<ChildProcess[]> {
  const workers = Array.from({ length: count }, () =>
    spawn(process.execPath, [join(ROOT, 'bin/tandem.js'), 'worker'], {
      env: {
        ...process.env,
        DATABASE_URL: url,
        LOG_LEVEL: 'error',
        TANDEM_DATA: mkdtempSync(join(tmpdir(), 'tb-')),
      },
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  await Promise.all(
    workers.map(
      (w) =>
        new Promise<void>((resolve, reject) => {
          w.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('is running') && resolve());
          w.once('exit', (code) => reject(new Error(`worker exited ${code}`)));
        }),
    ),
  );
  return workers;
}

async function stopWorkers(workers: ChildProcess[]) {
  await Promise.all(
    workers.map((w) => new Promise<void>((resolve) => (w.once('exit', () => resolve()), w.kill('SIGTERM')))),
  );
}

async function freshDatabase(): Promise<string> {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`);
  await admin.query(`CREATE DATABASE ${BENCH_DB}`);
  await admin.end();
  const url = new URL(ADMIN_URL);
  url.pathname = `/${BENCH_DB}`;
  return url.toString();
}

async function dropDatabase() {
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`);
  await admin.end();
}

async function onPostgres(workerCount: number) {
  const url = await freshDatabase();
  const services = await openServices({ databaseUrl: url });
  try {
    const { actor, automationId } = await workspace(services);
    const workers = await startWorkers(url, workerCount);
    const cpuBefore = workers.map((w) => cpuSeconds(w.pid!));
    const t = performance.now();
    await queue(services, actor, automationId, RUNS);
    const queued = (performance.now() - t) / 1000;
    await until(async () => (await finished(services)) >= RUNS);
    const seconds = (performance.now() - t) / 1000;
    const cpu = workers.map((w, i) => cpuSeconds(w.pid!) - cpuBefore[i]!).reduce((a, b) => a + b, 0);
    let pickup: number[] = [];
    if (workerCount === 1) {
      // One run at a time, so each pickup is measured alone.
      for (let i = 0; i < 200; i++) {
        const { run_id } = await services.automations.run(actor, { automation_id: automationId });
        await until(async () => {
          const r = await services.deps.db
            .selectFrom('runs')
            .select('started_at')
            .where('id', '=', run_id)
            .executeTakeFirst();
          return r?.started_at != null;
        });
      }
      const rows = await services.deps.db
        .selectFrom('runs')
        .select(['queued_at', 'started_at'])
        .orderBy('id', 'desc')
        .limit(200)
        .execute();
      pickup = rows.map((r) => (r.started_at ?? 0) - r.queued_at).sort((a, b) => a - b);
    }
    await stopWorkers(workers);
    return { rate: RUNS / seconds, queueRate: RUNS / queued, cpu, pickup };
  } finally {
    await services.close();
  }
}

async function scheduler() {
  const url = await freshDatabase();
  const services = await openServices({ databaseUrl: url });
  try {
    const { automationId } = await workspace(services);
    const db = services.deps.db;
    const template = await db
      .selectFrom('automations')
      .selectAll()
      .where('id', '=', automationId)
      .executeTakeFirstOrThrow();
    const due = Date.now() + 8_000;
    const flow = await db
      .selectFrom('flows')
      .selectAll()
      .where('id', '=', template.flow_id)
      .executeTakeFirstOrThrow();
    const flows = Array.from({ length: SCHEDULES }, (_, i) => ({
      ...flow,
      id: `${flow.id}_${i}`,
      automation_id: `${template.id}_${i}`,
    }));
    const rows = flows.map((f, i) => ({
      ...template,
      id: `${template.id}_${i}`,
      flow_id: f.id,
      name: `Chain ${i}`,
      enabled: 1,
      next_fire_at: due,
    }));
    for (let i = 0; i < rows.length; i += 500) {
      await db
        .insertInto('flows')
        .values(flows.slice(i, i + 500))
        .execute();
      await db
        .insertInto('automations')
        .values(rows.slice(i, i + 500))
        .execute();
    }
    const workers = await startWorkers(url, 2);
    await until(async () => {
      const n = await db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('cause', '=', 'schedule')
        .executeTakeFirstOrThrow();
      return Number(n.n) >= SCHEDULES;
    }, 180_000);
    const rss = workers.map((w) => rssMb(w.pid!));
    const queued = await db.selectFrom('runs').select('queued_at').where('cause', '=', 'schedule').execute();
    const lag = queued.map((r) => r.queued_at - due).sort((a, b) => a - b);
    const once = await db
      .selectFrom('runs')
      .select(['automation_id', (eb) => eb.fn.countAll<number>().as('n')])
      .where('cause', '=', 'schedule')
      .groupBy('automation_id')
      .having((eb) => eb.fn.countAll(), '>', 1)
      .execute();
    await stopWorkers(workers);
    return { lag, rss, doubled: once.length };
  } finally {
    await services.close();
  }
}

const PARTS = new Set((process.env.BENCH_ENGINE_PARTS ?? 'embedded,postgres,scheduler').split(','));

async function main() {
  const f = (n: number) => n.toFixed(0).padStart(7);
  const e = PARTS.has('embedded') ? await embedded() : { rate: NaN, queueRate: NaN };
  console.log(`Runs of a 10-step transform chain, ${RUNS} queued through the domain by 8 callers`);
  console.log('                              runs/s   queue-only runs/s   ratio   CPU s   runs per CPU-s');
  if (PARTS.has('embedded'))
    console.log(
      `embedded (SQLite)            ${f(e.rate)}   ${f(e.queueRate)}            ${(e.rate / e.queueRate).toFixed(2)}`,
    );
  let one = 0;
  let pickup: number[] = [];
  for (const count of PARTS.has('postgres') ? [1, 2, 4] : []) {
    const r = await onPostgres(count);
    if (count === 1) {
      one = r.rate;
      pickup = r.pickup;
    }
    console.log(
      `Postgres, ${count} worker${count > 1 ? 's' : ' '}          ${f(r.rate)}   ${f(r.queueRate)}            ${(r.rate / r.queueRate).toFixed(2)}  ${r.cpu.toFixed(1).padStart(6)}   ${f(RUNS / r.cpu)}   ×1 worker ${(r.rate / one).toFixed(2)}`,
    );
  }
  console.log('targets: ≥ 1,000 runs/s embedded; ≥ 400 runs/s on Postgres with one worker');
  console.log('');
  if (pickup.length)
    console.log(
      `pickup, queued in one process to started in a worker (Postgres, ${pickup.length} runs): p50 ${pct(pickup, 50)} ms, p99 ${pct(pickup, 99)} ms (target p99 ≤ 50 ms)`,
    );
  if (!PARTS.has('scheduler')) return;
  const s = await scheduler();
  console.log(
    `scheduler lag, ${SCHEDULES} schedules due at once, 2 workers: p50 ${pct(s.lag, 50)} ms, p99 ${pct(s.lag, 99)} ms (target p99 ≤ 2 s); fired twice: ${s.doubled}; worker RSS ${s.rss.map((m) => `${m.toFixed(0)} MB`).join(', ')}`,
  );
  await dropDatabase();
}

await main();
