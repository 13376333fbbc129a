/**
 * The run engine at scale, measured in one run:
 *  - runs per second of a published 10-step transform chain, queued through the domain and run to
 *    the end: embedded (SQLite, the engine in this process) and on Postgres with 1, 2 and 4
 *    `tandem worker` processes; the baseline is queueing alone;
 *  - on Postgres, a backlog drained: the same number of runs queued while the workers are held,
 *    then let go. Each worker's CPU seconds give runs per worker CPU-second, and from them how the
 *    workers scale when each has a core of its own (this machine's cores are shared with Postgres
 *    and the bench, so wall-clock throughput cannot show it);
 *  - pickup latency on Postgres: a run queued by this process to its start in a worker process;
 *  - scheduler lag with 10,000 schedules due at the same instant, and the worker's memory.
 *
 * Workers are warmed first (each process compiles its hot code on first use, a cost per process and
 * not per run), and the tables are vacuumed before each measured part so every worker count starts
 * from the same state (this machine's Postgres runs without autovacuum).
 *
 *   node bench/engine.ts     (part of npm run bench; BENCH_RUNS, BENCH_WARM, BENCH_BACKLOG,
 *                             BENCH_DATABASE_URL,
 *                             BENCH_ENGINE_PARTS=embedded,postgres,scheduler to change)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createEngine } from '../src/engine/engine.ts';
import { openServices } from '../src/services.ts';
import {
  cpuSeconds,
  dropDatabase,
  finished,
  freshDatabase,
  pct,
  queue,
  rssMb,
  startWorkers,
  stopWorkers,
  until,
  workspace,
} from './engine-kit.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 2000);
/** Runs each worker process finishes before anything is measured. */
const WARM = Number(process.env.BENCH_WARM ?? 1000);
/** Runs queued while the workers are held, then drained (long enough that a worker's own timers do not show). */
const BACKLOG = Number(process.env.BENCH_BACKLOG ?? 2 * RUNS);
const DRAINS = 3;
const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 10_000);

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

async function onPostgres(workerCount: number) {
  const url = await freshDatabase();
  const services = await openServices({ databaseUrl: url });
  const vacuum = () => services.storage.pool!.query('vacuum analyze');
  let total = 0;
  const allFinished = () => until(async () => (await finished(services)) >= total);
  try {
    const { actor, automationId } = await workspace(services);
    const runs = async (n: number) => ((total += n), queue(services, actor, automationId, n));
    const workers = await startWorkers(url, workerCount);
    await runs(WARM * workerCount);
    await allFinished();
    await vacuum();

    // End to end: queued by 8 callers while the workers run them.
    let t = performance.now();
    await runs(RUNS);
    await allFinished();
    const rate = RUNS / ((performance.now() - t) / 1000);
    await vacuum();

    // A backlog: queued while the workers are held (queueing alone, the baseline), then drained;
    // three times, keeping the drain of median CPU cost (one drain takes only a few seconds).
    const drains: { queueRate: number; drainRate: number; cpu: number }[] = [];
    for (let i = 0; i < DRAINS; i++) {
      for (const w of workers) w.kill('SIGSTOP');
      t = performance.now();
      await runs(BACKLOG);
      const queueRate = BACKLOG / ((performance.now() - t) / 1000);
      await vacuum();
      const cpuBefore = workers.map((w) => cpuSeconds(w.pid!));
      t = performance.now();
      for (const w of workers) w.kill('SIGCONT');
      await allFinished();
      const drainRate = BACKLOG / ((performance.now() - t) / 1000);
      const cpu = workers.map((w, j) => cpuSeconds(w.pid!) - cpuBefore[j]!).reduce((a, b) => a + b, 0);
      drains.push({ queueRate, drainRate, cpu });
      await vacuum();
    }
    const { queueRate, drainRate, cpu } = drains.sort((a, b) => a.cpu - b.cpu)[Math.floor(DRAINS / 2)]!;

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
    return { rate, queueRate, drainRate, cpu, pickup };
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
  console.log(`Runs of a 10-step transform chain, ${RUNS} queued through the domain by 8 callers`);
  console.log('                       end to end   queueing alone   ratio');
  if (PARTS.has('embedded')) {
    const e = await embedded();
    console.log(
      `embedded (SQLite)         ${f(e.rate)}   ${f(e.queueRate)}          ${(e.rate / e.queueRate).toFixed(2)}`,
    );
  }
  if (!PARTS.has('postgres') && !PARTS.has('scheduler')) return;
  const results: ({ count: number } & Awaited<ReturnType<typeof onPostgres>>)[] = [];
  for (const count of PARTS.has('postgres') ? [1, 2, 4] : []) {
    const r = await onPostgres(count);
    results.push({ count, ...r });
    console.log(
      `Postgres, ${count} worker${count > 1 ? 's' : ' '}       ${f(r.rate)}   ${f(r.queueRate)}          ${(r.rate / r.queueRate).toFixed(2)}   ×1 worker ${(r.rate / results[0]!.rate).toFixed(2)}`,
    );
  }
  console.log('targets: ≥ 1,000 runs/s embedded; ≥ 400 runs/s on Postgres with one worker');
  if (results.length) {
    const perCpu = (r: (typeof results)[number]) => BACKLOG / r.cpu;
    console.log('');
    console.log(
      `A backlog of ${BACKLOG} runs drained, the median of ${DRAINS} (workers warmed with ${WARM} runs each)`,
    );
    console.log(
      '                       runs/s   worker CPU s   runs per worker CPU-s   with a core each, ×1 worker',
    );
    for (const r of results)
      console.log(
        `Postgres, ${r.count} worker${r.count > 1 ? 's' : ' '}   ${f(r.drainRate)}        ${r.cpu.toFixed(2).padStart(6)}                 ${f(perCpu(r))}                          ${((perCpu(r) * r.count) / perCpu(results[0]!)).toFixed(2)}`,
      );
    console.log('target: 2 workers ≥ 1.6× one worker when each has its own core');
    const pickup = results[0]!.pickup;
    console.log('');
    console.log(
      `pickup, queued in one process to started in a worker (Postgres, ${pickup.length} runs): p50 ${pct(pickup, 50)} ms, p99 ${pct(pickup, 99)} ms (target p99 ≤ 50 ms)`,
    );
  }
  if (!PARTS.has('scheduler')) return;
  const s = await scheduler();
  console.log(
    `scheduler lag, ${SCHEDULES} schedules due at once, 2 workers: p50 ${pct(s.lag, 50)} ms, p99 ${pct(s.lag, 99)} ms (target p99 ≤ 2 s); fired twice: ${s.doubled}; worker RSS ${s.rss.map((m) => `${m.toFixed(0)} MB`).join(', ')}`,
  );
  await dropDatabase();
}

await main();
