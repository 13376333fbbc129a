/** What bench/engine.ts measures with: the plan, a workspace, queueing, worker processes, a database. */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { demoFixture, DEMO_USER } from '../src/domains/import/demo.ts';
import type { Services } from '../src/services.ts';

const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const BENCH_DB = 'tandem_bench_engine';
const ROOT = new URL('..', import.meta.url).pathname;

/** Ten `template` transforms in a row: no I/O of its own, so the engine's cost is what shows. */
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

export const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

export const until = async (check: () => Promise<boolean>, ms = 120_000) => {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('timed out waiting');
};

/** The demo workspace with the chain published (behind a weekly schedule that does not fire). */
export async function workspace(services: Services): Promise<{ actor: Actor; automationId: string }> {
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
export async function queue(services: Services, actor: Actor, automationId: string, n: number) {
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

export async function finished(services: Services): Promise<number> {
  const row = await services.deps.db
    .selectFrom('runs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'succeeded')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** utime + stime of a process, in seconds. */
export function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

export async function startWorkers(url: string, count: number): Promise<ChildProcess[]> {
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

export async function stopWorkers(workers: ChildProcess[]) {
  await Promise.all(
    workers.map((w) => new Promise<void>((resolve) => (w.once('exit', () => resolve()), w.kill('SIGTERM')))),
  );
}

async function admin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: ADMIN_URL });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** An empty database of the bench's own; its address. */
export async function freshDatabase(): Promise<string> {
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`);
    await c.query(`CREATE DATABASE ${BENCH_DB}`);
  });
  const url = new URL(ADMIN_URL);
  url.pathname = `/${BENCH_DB}`;
  return url.toString();
}

export const dropDatabase = () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`));
