/**
 * The soak's cluster: a PostgreSQL and a Redis of its own (so restarting them touches nothing
 * else on the machine), and `tandem serve` / `tandem worker` processes that can be killed and
 * started again, each sampled for CPU and memory.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tandem.js');

/** Ports already handed out in this process: two servers never get the same one. */
const given = new Set<number>();

export async function freePort(): Promise<number> {
  for (;;) {
    const port = await anyFreePort();
    if (given.has(port)) continue;
    given.add(port);
    return port;
  }
}

async function anyFreePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => done(port));
    });
  });
}

/** Resolves once `check` is true, or rejects after `ms` naming `what`. */
export async function waitFor(check: () => Promise<boolean> | boolean, what: string, ms = 60_000) {
  const until = Date.now() + ms;
  for (;;) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    if (Date.now() > until) throw new Error(`gave up waiting for ${what} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function pgBin(name: string): string {
  const found = spawnSync('sh', ['-c', `ls -d /usr/lib/postgresql/*/bin/${name} | sort -V | tail -1`]);
  const path = found.stdout.toString().trim();
  if (!path) throw new Error(`PostgreSQL's ${name} is not installed (apt-get install postgresql)`);
  return path;
}

/** Runs a PostgreSQL program as the postgres user when this process is root (it refuses root). */
function asPostgres(program: string, args: string[]) {
  const root = process.getuid?.() === 0;
  const [cmd, argv] = root ? ['runuser', ['-u', 'postgres', '--', program, ...args]] : [program, args];
  const result = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (result.status !== 0)
    throw new Error(`${program} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

export interface Postgres {
  url: string;
  /** Stops it at once, as a crash would (WAL recovery on start), then starts it again. */
  restart(): void;
  stop(): void;
}

export async function startPostgres(dir: string): Promise<Postgres> {
  const data = join(dir, 'pg');
  mkdirSync(data, { recursive: true });
  if (process.getuid?.() === 0) {
    const pw = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const uid = Number(pw.stdout.trim());
    chownSync(dir, uid, uid);
    chownSync(data, uid, uid);
  }
  const port = await freePort();
  asPostgres(pgBin('initdb'), ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=300`;
  const ctl = (...args: string[]) => asPostgres(pgBin('pg_ctl'), ['-D', data, ...args]);
  const start = () => ctl('-o', options, '-l', join(dir, 'pg.log'), '-w', 'start');
  start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart() {
      ctl('-m', 'immediate', 'stop');
      start();
    },
    stop() {
      try {
        ctl('-m', 'fast', 'stop');
      } catch {
        // already stopped
      }
    },
  };
}

export interface Redis {
  url: string;
  pid(): number | undefined;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<Redis> {
  const port = await freePort();
  let child: ChildProcess;
  const start = async () => {
    child = spawn(
      'redis-server',
      ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      {
        stdio: 'ignore',
      },
    );
    await waitFor(
      () =>
        new Promise<boolean>((done) => {
          const probe = spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' });
          done(probe.stdout.trim() === 'PONG');
        }),
      'Redis to answer',
      10_000,
    );
  };
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await exited;
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    pid: () => child.pid,
    async restart() {
      await stop();
      await start();
    },
    stop,
  };
}

export interface Sample {
  cpuSeconds: number;
  rssBytes: number;
}

/** CPU seconds used so far and resident memory of a process, from /proc. */
export function sample(pid: number): Sample | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? 0) * 1024;
    return { cpuSeconds: ticks / 100, rssBytes: rss };
  } catch {
    return undefined;
  }
}

/** One `tandem` process that can be killed and started again under the same name and port. */
export class TandemProcess {
  child: ChildProcess | undefined;
  /** CPU seconds of earlier lives, so a restart does not reset the figure. */
  cpuBefore = 0;
  lastCpu = 0;
  peakRss = 0;
  log = '';
  lives = 0;

  readonly name: string;
  readonly args: string[];
  readonly env: Record<string, string>;
  readonly ready: () => Promise<boolean>;

  constructor(name: string, args: string[], env: Record<string, string>, ready: () => Promise<boolean>) {
    this.name = name;
    this.args = args;
    this.env = env;
    this.ready = ready;
  }

  async start() {
    this.lives++;
    const child = spawn(process.execPath, ['--max-old-space-size=384', BIN, ...this.args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...this.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    this.lastCpu = 0;
    const keep = (chunk: Buffer) => {
      this.log = (this.log + chunk.toString()).slice(-20_000);
    };
    child.stdout!.on('data', keep);
    child.stderr!.on('data', keep);
    const exited = new Promise<never>((_, fail) =>
      child.once('exit', (code) =>
        fail(new Error(`${this.name} exited (${code}): ${this.log.slice(-2000)}`)),
      ),
    );
    exited.catch(() => undefined);
    await Promise.race([waitFor(() => this.ready(), `${this.name} to be ready`, 180_000), exited]);
  }

  alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGKILL: no chance to finish anything. */
  async kill() {
    const child = this.child;
    if (!child || !this.alive()) return;
    this.measure();
    this.cpuBefore += this.lastCpu;
    this.lastCpu = 0;
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGKILL');
    await exited;
  }

  async stop() {
    const child = this.child;
    if (!child || !this.alive()) return;
    this.measure();
    const exited = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    const forced = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await exited;
    clearTimeout(forced);
  }

  measure() {
    if (!this.child?.pid || !this.alive()) return;
    const s = sample(this.child.pid);
    if (!s) return;
    this.lastCpu = s.cpuSeconds;
    this.peakRss = Math.max(this.peakRss, s.rssBytes);
  }

  cpuSeconds(): number {
    return this.cpuBefore + this.lastCpu;
  }
}

/** GET `url`; true on a 2xx answer within 2 s. */
export async function answers(url: string): Promise<boolean> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** A process and its children (PostgreSQL's backends), summed. */
export function treeSample(rootPid: number): Sample | undefined {
  const root = sample(rootPid);
  if (!root) return undefined;
  let cpu = root.cpuSeconds;
  let rss = root.rssBytes;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== rootPid) continue;
      const child = sample(Number(entry));
      if (child) {
        cpu += child.cpuSeconds;
        rss += child.rssBytes;
      }
    } catch {
      // the process ended while being read
    }
  }
  return { cpuSeconds: cpu, rssBytes: rss };
}

/** The postmaster's pid, from its lock file. */
export function postmasterPid(dir: string): number | undefined {
  try {
    return Number(readFileSync(join(dir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}
