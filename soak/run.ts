/**
 * `npm run soak`: the whole cluster at once under mixed load and faults. Three `tandem serve` and
 * two `tandem worker` processes on a PostgreSQL and a Redis of the soak's own, behind a small
 * round-robin proxy; people typing through real providers, agents calling MCP tools, schedules
 * firing and signed webhooks arriving; a server, a worker, Redis and PostgreSQL each failing
 * mid-flight. It ends with checks read through the public doors and prints its figures.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { Agent } from './agents.ts';
import { check } from './checks.ts';
import {
  answers,
  freePort,
  postmasterPid,
  startPostgres,
  startRedis,
  TandemProcess,
  treeSample,
  waitFor,
  type Sample,
} from './cluster.ts';
import { faults, type Heal } from './faults.ts';
import { HookSender } from './hooks.ts';
import { disagreements, fanOut, Typist, Watcher, type TypedAt } from './people.ts';
import { startProxy } from './proxy.ts';
import { blockLabel, seed } from './seed.ts';
import { mb, ms, sleep, Timings } from './stats.ts';

const num = (name: string, fallback: number) => {
  const v = process.env[name];
  if (v === undefined || v === '') return fallback;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name}=${v} must be a positive number`);
  return n;
};

const SECONDS = num('SOAK_SECONDS', 300);
const SHAPE = {
  people: num('SOAK_PEOPLE', 60),
  documents: num('SOAK_DOCUMENTS', 10),
  agents: num('SOAK_AGENTS', 20),
  schedules: num('SOAK_SCHEDULES', 200),
};
const SERVERS = num('SOAK_SERVERS', 3);
const WORKERS = num('SOAK_WORKERS', 2);
const KEY_MS = num('SOAK_KEY_MS', 1000);
const THINK_MS = num('SOAK_THINK_MS', 300);
const HOOK_MS = num('SOAK_HOOK_MS', 1000);
/** SOAK_FAULTS=off runs the load without killing anything (to tell the load's figures from the faults'). */
const FAULTS = process.env.SOAK_FAULTS !== 'off';

const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1)}s] ${line}`);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-soak-'));
  const cleanups: (() => Promise<void> | void)[] = [() => rmSync(dir, { recursive: true, force: true })];
  let failures: string[];
  try {
    const postgres = await startPostgres(dir);
    cleanups.unshift(() => postgres.stop());
    const redis = await startRedis();
    cleanups.unshift(() => redis.stop());
    log(`PostgreSQL at ${postgres.url}, Redis at ${redis.url}`);

    const serverPorts = await Promise.all(Array.from({ length: SERVERS }, freePort));
    const up = new Set<number>();
    const proxy = await startProxy(() => serverPorts.filter((p) => up.has(p)));
    cleanups.unshift(() => proxy.close());
    const secretKey = randomBytes(32);
    const minute = (new Date().getUTCMinutes() + 30) % 60;
    const seeded = await seed(postgres.url, secretKey, SHAPE, minute);
    log(
      `seeded ${SHAPE.people} people, ${SHAPE.documents} documents, ${SHAPE.agents + SHAPE.schedules + 1} automations`,
    );

    const env = (name: string): Record<string, string> => {
      const data = join(dir, name);
      mkdirSync(data, { recursive: true });
      return {
        DATABASE_URL: postgres.url,
        REDIS_URL: redis.url,
        TANDEM_SECRET_KEY: secretKey.toString('base64'),
        PUBLIC_URL: proxy.url,
        TRUST_PROXY: 'loopback',
        TANDEM_DATA: data,
        TANDEM_RUN_LEASE_S: '10',
        LOG_LEVEL: 'warn',
      };
    };
    const servers = await Promise.all(
      serverPorts.map(async (port, i) => {
        const pagesPort = await freePort();
        return new TandemProcess(
          `server ${i}`,
          ['serve', '--no-worker', '--port', String(port)],
          { ...env(`server${i}`), PAGES_PORT: String(pagesPort) },
          async () => {
            const ok = await answers(`http://127.0.0.1:${port}/readyz`);
            if (ok) up.add(port);
            else up.delete(port);
            return ok;
          },
        );
      }),
    );
    const workers = await Promise.all(
      Array.from({ length: WORKERS }, async (_, i) => {
        const port = await freePort();
        return new TandemProcess(
          `worker ${i}`,
          ['worker', '--health-port', String(port)],
          env(`worker${i}`),
          () => answers(`http://127.0.0.1:${port}/readyz`),
        );
      }),
    );
    const all = [...servers, ...workers];
    cleanups.unshift(async () => {
      await Promise.all(all.map((p) => p.stop()));
    });
    await Promise.all(all.map((p) => p.start()));
    log(`${SERVERS} servers and ${WORKERS} workers ready; proxy at ${proxy.url}`);
    const everyoneReady = async () =>
      (await Promise.all(all.map((p) => p.alive() && p.ready()))).every(Boolean);

    // Schedules: each set to fire once, at an instant spread over the soak.
    const planted = new Map<number, string>();
    const client = new pg.Client({ connectionString: postgres.url });
    await client.connect();
    const first = Date.now() + 15_000;
    const span = Math.max(1000, SECONDS * 1000 - 45_000);
    for (let k = 0; k < seeded.schedules.length; k++) {
      const at = Math.round(first + (span * k) / seeded.schedules.length);
      await client.query('UPDATE automations SET next_fire_at = $1 WHERE id = $2', [at, seeded.schedules[k]]);
      planted.set(k, new Date(at).toISOString());
    }
    await client.end();

    // The load.
    const timings = new Timings();
    const ws = (port: number) => `ws://127.0.0.1:${port}/collab`;
    const viaProxy = `${proxy.url.replace(/^http/, 'ws')}/collab`;
    const typedAt: TypedAt = new Map();
    const arrivals = new Map<string, number[]>();
    const token = seeded.people[0]!.token;
    const typists = seeded.documents.flatMap((d) =>
      d.typists.map(
        (i) => new Typist(viaProxy, d.id, seeded.people[i]!.token, blockLabel(i), typedAt, KEY_MS),
      ),
    );
    const watchers = seeded.documents.map((d) =>
      serverPorts.map((port) => new Watcher(ws(port), d.id, token, d.typists.map(blockLabel), arrivals)),
    );
    const byDocument = new Map(seeded.documents.map((d, i) => [d.id, watchers[i]!]));
    const connections = () => [...typists.map((t) => t.conn), ...watchers.flat().map((w) => w.conn)];
    cleanups.unshift(() => connections().forEach((c) => c.close()));
    await waitFor(() => connections().every((c) => c.settled()), 'every editor to sync', 60_000);
    log(`${typists.length} people and ${watchers.flat().length} watchers connected`);

    const documentIds = seeded.documents.map((d) => d.id);
    const agents = seeded.agents.map(
      (a, i) =>
        new Agent(
          proxy.url,
          seeded.people[i]!.token,
          i,
          documentIds,
          a.pageId,
          a.automationId,
          timings,
          THINK_MS,
        ),
    );
    const probe = new Agent(
      proxy.url,
      token,
      0,
      documentIds,
      seeded.agents[0]!.pageId,
      seeded.agents[0]!.automationId,
      new Timings(),
      0,
    );
    const hooks = new HookSender(proxy.url, seeded.workspaceId, HOOK_MS, timings);

    const samples = new Map<string, { first?: Sample; last?: Sample; peak: number }>();
    const sampler = setInterval(() => {
      for (const p of all) p.measure();
      const pm = postmasterPid(dir);
      const rp = redis.pid();
      for (const [name, pid] of [
        ['postgres', pm],
        ['redis', rp],
      ] as const) {
        const s = pid ? treeSample(pid) : undefined;
        if (!s) continue;
        const entry = samples.get(name) ?? { peak: 0 };
        entry.first ??= s;
        entry.last = s;
        entry.peak = Math.max(entry.peak, s.rssBytes);
        samples.set(name, entry);
      }
    }, 2000);
    cleanups.unshift(() => clearInterval(sampler));

    const loadStart = Date.now();
    for (const t of typists) t.start();
    const loops = [...agents.map((a) => a.loop()), hooks.loop()];
    log(`load running for ${SECONDS} s`);
    const heals: Heal[] = FAULTS
      ? await faults(
          {
            servers,
            workers,
            redis,
            postgres,
            disagreements: () => disagreements(typists, byDocument, 1000),
            watchers,
            ready: everyoneReady,
            probe,
            probeDocument: documentIds[0]!,
            probeAutomation: seeded.agents[0]!.automationId,
          },
          loadStart,
          [0.15, 0.35, 0.55, 0.75].map((f) => f * SECONDS * 1000),
          log,
        )
      : [];
    const left = loadStart + SECONDS * 1000 - Date.now();
    if (left > 0) await sleep(left);
    for (const t of typists) t.stop();
    for (const a of agents) a.stop();
    hooks.stop();
    await Promise.all(loops);
    const loadSeconds = (Date.now() - loadStart) / 1000;
    log('load stopped; waiting for everything to settle');

    await waitFor(
      () => disagreements(typists, byDocument).length === 0,
      'every editor to settle',
      120_000,
    ).catch((error: Error) => {
      for (const d of disagreements(typists, byDocument).slice(0, 10)) console.log(`  ${d}`);
      throw error;
    });
    const lastPlanted = Math.max(...[...planted.values()].map((v) => Date.parse(v)));
    await sleep(Math.max(0, lastPlanted + 5000 - Date.now()));
    await waitFor(
      async () => {
        for (const a of [...agents, probe])
          for (const runId of a.ledger.runs.slice(-3)) {
            const r = await a.call('read_automation', {
              automation_id: seeded.agents[a.index]!.automationId,
              run_id: runId,
            });
            const status = (r.run as { status?: string } | undefined)?.status ?? r.status;
            if (status === 'queued' || status === 'running') return false;
          }
        return true;
      },
      'the last runs to finish',
      180_000,
    );
    await sleep(10_000);

    const callers = serverPorts.map((port) => {
      const direct = new Agent(`http://127.0.0.1:${port}`, token, 0, documentIds, '', '', new Timings(), 0);
      return (name: string, args: Record<string, unknown>) => direct.call(name, args);
    });
    failures = await check({
      seeded,
      callers,
      serverWs: serverPorts.map(ws),
      token,
      typists,
      agents: [...agents, probe],
      hooks,
      planted,
    });
    if (!(await everyoneReady())) failures.push('a process is not ready at the end');

    // Figures.
    fanOut(typedAt, arrivals, SERVERS, timings);
    const calls = agents.reduce((s, a) => s + a.calls, 0);
    const failed = agents.reduce((s, a) => s + a.failures, 0);
    console.log(
      `\n== figures (${loadSeconds.toFixed(0)} s of load, ${SERVERS} servers, ${WORKERS} workers) ==`,
    );
    console.log(
      `tool calls: ${calls} (${(calls / loadSeconds).toFixed(1)}/s), ${failed} failed during faults`,
    );
    for (const name of timings.names()) {
      const s = timings.summary(name);
      console.log(
        `  ${name.padEnd(34)} n=${String(s.count).padStart(6)}  p50 ${ms(s.p50).padStart(8)}  p99 ${ms(s.p99).padStart(8)}`,
      );
    }
    const keys = typists.reduce((s, t) => s + t.keys, 0);
    const runs = agents.reduce((s, a) => s + a.ledger.runs.length, 0);
    console.log(
      `keys typed: ${keys}; runs queued by agents: ${runs}; webhooks acknowledged: ${hooks.acked.length}`,
    );
    console.log(`proxy answered 502 (no server took the connection): ${proxy.failures()}`);
    console.log(
      'heal times (ms from the fault): ready / tool call / editors synced / instances agree / run finished',
    );
    for (const h of heals)
      console.log(
        `  ${h.fault.padEnd(40)} ${[h.ready, h.toolCall, h.editorsSynced, h.instancesAgree, h.runFinished].map((v) => String(v)).join(' / ')}`,
      );
    console.log('per process: CPU (share of one core over the load) and peak memory');
    for (const p of all)
      console.log(
        `  ${p.name.padEnd(12)} CPU ${((p.cpuSeconds() / loadSeconds) * 100).toFixed(0).padStart(4)} %  peak ${mb(p.peakRss)}  (${p.lives} starts)`,
      );
    for (const [name, s] of samples)
      console.log(
        `  ${name.padEnd(12)} CPU ${((((s.last?.cpuSeconds ?? 0) - (s.first?.cpuSeconds ?? 0)) / loadSeconds) * 100).toFixed(0).padStart(4)} %  peak ${mb(s.peak)}`,
      );
    const agentErrors = new Map<string, number>();
    for (const a of agents) for (const [k, v] of a.errors) agentErrors.set(k, (agentErrors.get(k) ?? 0) + v);
    if (agentErrors.size) console.log('failed calls by kind:', Object.fromEntries(agentErrors));
    await probe.close();
    for (const a of agents) await a.close();
  } catch (error) {
    failures = [`the soak stopped: ${(error as Error).stack ?? String(error)}`];
  } finally {
    for (const cleanup of cleanups) await Promise.resolve(cleanup()).catch(() => undefined);
  }
  if (failures.length) {
    console.log(`\nFAILED: ${failures.length} check(s)`);
    const kinds = new Map<string, number>();
    for (const f of failures) kinds.set(f.replace(/\d+/g, 'N'), (kinds.get(f.replace(/\d+/g, 'N')) ?? 0) + 1);
    for (const [kind, n] of kinds) console.log(`  ${n} × ${kind}`);
    for (const f of failures.slice(0, 20)) console.log(`  - ${f}`);
    process.exitCode = 1;
  } else
    console.log('\nPASSED: every acknowledged write is there once, every instance agrees, nothing is stuck.');
}

await main();
