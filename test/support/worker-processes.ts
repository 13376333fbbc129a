import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { PG_URL } from './databases.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'tandem.js');

/**
 * A PostgreSQL database of its own on the test server, for `tandem worker` processes (which take
 * only DATABASE_URL, so they cannot be pointed at a schema): created empty, dropped with `drop`.
 */
export async function scratchDatabase(prefix: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: PG_URL, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  await admin(async (client) => {
    await client.query(`CREATE DATABASE ${name}`);
    // Its data need not outlive a crash of the server: commits do not wait for the disk.
    await client.query(`ALTER DATABASE ${name} SET synchronous_commit = off`);
  });
  const url = new URL(PG_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      admin(async (client) => {
        // Pools that were just closed may still be hanging up: wait for them a little, rather than
        // cutting them off (which they would report as an error).
        const until = Date.now() + 5_000;
        const connected = async () =>
          Number(
            (
              await client.query<{ n: string }>(
                'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1',
                [name],
              )
            ).rows[0]!.n,
          );
        while ((await connected()) > 0 && Date.now() < until)
          await new Promise((done) => setTimeout(done, 50));
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

export interface WorkerProcess {
  child: ChildProcess;
  /** The id the worker takes leases with (`jobs.locked_by`), as it prints it when it starts. */
  id: string;
  /** What it wrote to standard error (the log at LOG_LEVEL=error). */
  stderr(): string;
  exited: Promise<void>;
  /** SIGKILL, then wait for the exit. */
  kill(): Promise<void>;
}

/**
 * Starts `tandem worker` on `databaseUrl` (or, without one, on the embedded database under
 * `dataDir`) and waits for its "is running" line.
 */
export async function startWorker(
  databaseUrl: string | undefined,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, [BIN, 'worker'], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
      TANDEM_DATA: dataDir,
      LOG_LEVEL: 'error',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const id = await new Promise<string>((done, fail) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const started = /Tandem worker (\S+) is running/.exec(out);
      if (started) done(started[1]!);
    });
    void exited.then(() =>
      fail(new Error(`the worker exited before it ran (${child.exitCode}): ${out}${err}`)),
    );
  });
  return {
    child,
    id,
    stderr: () => err,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
