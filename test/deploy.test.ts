import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { CONFIG_KEYS, loadConfig } from '../src/config.ts';
import { DATABASES } from './support/databases.ts';
import { scratchDatabase } from './support/worker-processes.ts';

const ROOT = resolve(import.meta.dirname, '..');
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
/** What every server and worker must share (README, "Running more than one"). */
const SHARED = [
  'DATABASE_URL',
  'REDIS_URL',
  'TANDEM_SECRET_KEY',
  'PUBLIC_URL',
  'PAGES_ORIGIN',
  'TRUST_PROXY',
];

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  healthcheck?: { test: string[] };
}

/** compose.yaml as docker compose reads it, with `${NAME:?…}` and `${NAME:-default}` filled in from `vars`. */
function compose(vars: Record<string, string>): Record<string, Service> {
  const text = read('compose.yaml').replace(
    /\$\{(\w+)(?::([?-])([^}]*))?\}/g,
    (_, name: string, op, rest) => {
      if (vars[name] !== undefined) return vars[name];
      if (op === '-') return rest as string;
      throw new Error(`compose.yaml needs ${name}: ${rest}`);
    },
  );
  return (parse(text, { merge: true }) as { services: Record<string, Service> }).services;
}

const tandemServices = (services: Record<string, Service>) =>
  Object.entries(services).filter(([, s]) => s.image === 'tandem');

async function freePort(): Promise<number> {
  return new Promise((done) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

describe('the container image and the compose file', () => {
  const vars = { TANDEM_SECRET_KEY: randomBytes(32).toString('base64') };
  const services = compose(vars);

  it('runs tandem serve, worker and migrate from one image built by a multi-stage, non-root Dockerfile', () => {
    const dockerfile = read('Dockerfile');
    assert.ok((dockerfile.match(/^FROM /gm) ?? []).length >= 2, 'a build stage and a runtime stage');
    const user = /^USER (\S+)/m.exec(dockerfile)?.[1];
    assert.ok(user && user !== 'root' && user !== '0', `runs as ${user}`);
    assert.match(dockerfile, /^ENTRYPOINT \[.*"bin\/tandem\.js"\]/m);
    assert.match(dockerfile, /^CMD \["serve"\]/m);
    assert.match(dockerfile, /HEALTHCHECK[\s\S]*\/readyz/);
    assert.match(dockerfile, /npm run build:web/, 'the web app is built into the image');
    const commands = tandemServices(services).map(([, s]) => s.command?.[0]);
    assert.deepEqual(new Set(commands), new Set(['migrate', 'serve', 'worker']));
    assert.ok(services.migrate?.build, 'the migrate service builds the image the others run');
  });

  it('sets only settings Tandem reads, each valid, and the same shared settings on every server and worker', () => {
    for (const [name, s] of tandemServices(services)) {
      const env = s.environment ?? {};
      for (const key of Object.keys(env))
        assert.ok(CONFIG_KEYS.includes(key), `${name} sets ${key}, which Tandem does not read`);
      assert.doesNotThrow(() => loadConfig(env), `${name}'s environment`);
      for (const key of SHARED) assert.equal(env[key], services.server!.environment![key], `${name}: ${key}`);
    }
    assert.throws(() => compose({}), /TANDEM_SECRET_KEY/, 'no cluster starts without a shared secret key');
  });

  it('sends the proxy to the ports the servers listen on, WebSockets included', () => {
    const caddy = read('deploy/Caddyfile');
    const env = services.server!.environment!;
    assert.match(caddy, new RegExp(`dynamic a server ${env.PORT}\\b`));
    assert.match(caddy, new RegExp(`dynamic a server ${env.PAGES_PORT}\\b`));
    assert.match(caddy, /lb_policy round_robin/);
  });

  it('documents the settings that must match across instances', () => {
    const readme = read('README.md');
    const section = readme.slice(readme.indexOf('## Running more than one'));
    assert.ok(section.length > 0 && readme.includes('## Running more than one'));
    for (const key of ['TANDEM_SECRET_KEY', 'PUBLIC_URL', 'TRUST_PROXY', 'REDIS_URL'])
      assert.ok(section.slice(0, 4000).includes(key), `the section names ${key}`);
  });

  const postgres = DATABASES.find((d) => d.name === 'postgres');
  describe('its commands, run as compose runs them', { skip: !postgres && 'PostgreSQL is skipped' }, () => {
    let db: Awaited<ReturnType<typeof scratchDatabase>>;
    const dir = mkdtempSync(join(tmpdir(), 'tandem-deploy-'));
    const children: ReturnType<typeof spawn>[] = [];
    before(async () => {
      db = await scratchDatabase('tandem_deploy');
    });
    after(async () => {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(
        children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)),
      );
      await db?.drop();
      rmSync(dir, { recursive: true, force: true });
    });

    /** The service's environment with the compose hosts replaced by this machine's services. */
    const envOf = (s: Service, ports: Record<string, string> = {}) => ({
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...s.environment,
      DATABASE_URL: db.url,
      REDIS_URL,
      TANDEM_DATA: dir,
      HOST: '127.0.0.1',
      LOG_LEVEL: 'error',
      ...ports,
    });
    const bin = join(ROOT, 'bin', 'tandem.js');

    it('migrates, then a worker and a server answer their health checks', async () => {
      const migrated = spawnSync(process.execPath, [bin, ...services.migrate!.command!], {
        env: envOf(services.migrate!),
        encoding: 'utf8',
      });
      assert.equal(migrated.status, 0, migrated.stderr);

      const start = async (s: Service, port: string, ports: Record<string, string>) => {
        const healthPort = String(await freePort());
        const [, url] = /fetch\('([^']+)'\)/.exec(s.healthcheck!.test.join(' ')) ?? [];
        assert.ok(url?.endsWith('/readyz'), 'the health check reads /readyz');
        const command = s.command!.map((a) => (a === port ? healthPort : a));
        const child = spawn(process.execPath, [bin, ...command], {
          env: envOf(s, { ...ports, ...(s.environment?.PORT === port ? { PORT: healthPort } : {}) }),
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        children.push(child);
        const health = url!.replace(`:${port}/`, `:${healthPort}/`);
        for (let i = 0; ; i++) {
          const res = await fetch(health).catch(() => undefined);
          if (res?.status === 200) return;
          assert.ok(child.exitCode === null, `${command.join(' ')} exited with ${child.exitCode}: ${stderr}`);
          assert.ok(i < 900, `${command.join(' ')} answered ${res?.status} ${await res?.text()}: ${stderr}`);
          await new Promise((r) => setTimeout(r, 100));
        }
      };
      await start(services.worker!, '8790', {});
      await start(services.server!, '8787', { PAGES_PORT: String(await freePort()) });
    });
  });
});
