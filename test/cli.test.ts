import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Fixture } from '../src/domains/import/fixture.ts';
import type { ImportResult } from '../src/domains/import/import.ts';
import { openServices } from '../src/services.ts';
import { testFixture } from './support/fixture.ts';
import { IMPLEMENTED_TOOLS } from './support/tools.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tandem.js');

const scratch: string[] = [];
// Every command starts a fresh Node; a shared compile cache keeps the many short runs quick.
const compileCache = mkdtempSync(join(tmpdir(), 'tandem-cli-cache-'));
scratch.push(compileCache);
function tempDir(label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `tandem-cli-${label}-`));
  scratch.push(dir);
  return dir;
}

/** The environment a person would have, minus anything that would point Tandem elsewhere. */
function cleanEnv(dataDir: string, extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(TANDEM_|DATABASE_URL$|REDIS_URL$|PORT$|HOST$|PUBLIC_URL$|PAGES_ORIGIN$|LOG_LEVEL$)/.test(key))
      continue;
    env[key] = value;
  }
  return { ...env, NODE_COMPILE_CACHE: compileCache, TANDEM_DATA: dataDir, ...extra };
}

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

function tandem(
  args: string[],
  dataDir: string,
  extraEnv: Record<string, string> = {},
  // Generous: on a busy machine loading the CLI's modules alone can take seconds.
  timeout = 60_000,
): Promise<Run> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: cleanEnv(dataDir, extraEnv),
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', fail);
    child.once('close', (code, signal) => done({ code, signal, stdout, stderr }));
  });
}

function writeJson(dir: string, name: string, value: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value, null, 2));
  return file;
}

function sqlitePath(dataDir: string): string {
  return join(dataDir, 'tandem.sqlite');
}

function withDb<T>(dataDir: string, fn: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(sqlitePath(dataDir), { readOnly: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Every row of every table, so two states can be compared exactly. */
function dump(dataDir: string): string {
  if (!existsSync(sqlitePath(dataDir))) return '(no database)';
  return withDb(dataDir, (db) => {
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as {
      name: string;
    }[];
    return JSON.stringify(
      tables.map(({ name }) => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all()]),
    );
  });
}

/** One row as a plain object (node:sqlite returns rows without a prototype). */
function row(db: DatabaseSync, query: string, ...params: string[]): Record<string, unknown> | undefined {
  const found = db.prepare(query).get(...params);
  return found === undefined ? undefined : { ...found };
}

function workspaceNames(dataDir: string): string[] {
  if (!existsSync(sqlitePath(dataDir))) return [];
  return withDb(dataDir, (db) =>
    (db.prepare('SELECT name FROM workspaces ORDER BY name').all() as { name: string }[]).map((r) => r.name),
  );
}

function portIsFree(port: number): Promise<boolean> {
  return new Promise((done) => {
    const probe = createServer();
    probe.once('error', () => done(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => done(true)));
  });
}

/** A port whose next port is free too: serve listens on PORT and shows pages on PORT+1. */
async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((done, fail) => {
      const probe = createServer();
      probe.once('error', fail);
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => done(port));
      });
    });
    if (port < 65000 && (await portIsFree(port + 1))) return port;
  }
}

/** `tandem serve` as a child process; started() resolves once it has printed all it prints on start. */
function serve(dataDir: string, port: number) {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', String(port)], {
    cwd: ROOT,
    env: cleanEnv(dataDir),
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 90_000,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once('close', (code, signal) => done({ code, signal })),
  );
  let running = true;
  void exited.then(() => (running = false));
  async function started(): Promise<void> {
    const deadline = Date.now() + 15_000;
    while (!/\n {2}data: .*\n/.test(stdout)) {
      if (!running) throw new Error(`serve exited early; stderr: ${stderr}`);
      if (Date.now() > deadline)
        throw new Error(`serve did not start in time; stdout: ${stdout} stderr: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // The lines after "data:" are written in the same tick; give the pipe a moment to deliver them.
    await new Promise((r) => setTimeout(r, 300));
  }
  return { child, exited, started, stdout: () => stdout, stderr: () => stderr };
}

/** Asserts the shape every refusal shares: a non-zero exit, nothing on stdout, one line on stderr. */
function assertOneLineRefusal(run: Run, command: string, mentions: RegExp): void {
  assert.notEqual(run.code, 0, `expected a non-zero exit; stdout: ${run.stdout}`);
  assert.equal(run.signal, null, 'the command should exit on its own');
  assert.equal(run.stdout, '', 'a refused command prints nothing on stdout');
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, `expected one line on stderr, got:\n${run.stderr}`);
  assert.ok(lines[0]!.startsWith(`tandem ${command}: `), `stderr: ${run.stderr}`);
  assert.match(lines[0]!, mentions);
  assert.doesNotMatch(lines[0]!, /\bat .*\.ts:\d+/, 'no stack trace');
}

const typoFixture: Fixture = {
  workspaces: [{ name: 'Typo', users: [{ email: 'ann@typo.test', nmae: 'Ann' } as never] }],
};
const extraFieldFixture: Fixture = {
  workspaces: [{ name: 'Typo', users: [{ email: 'ann@typo.test', name: 'Ann', nmae: 'Ann' } as never] }],
};
const strangerFixture = (member: string): Fixture => ({
  workspaces: [
    {
      name: 'Beta',
      users: [{ email: 'bea@beta.test', name: 'Bea' }],
      pods: [{ key: 'core', name: 'Core', members: ['bea@beta.test', member] }],
      artifacts: [
        {
          key: 'doc',
          type: 'document',
          title: 'Doc',
          owner: 'bea@beta.test',
          scope: 'org',
          markdown: 'Hi.\n',
        },
      ],
    },
  ],
});

describe('tandem command line', () => {
  let prepared: string;
  let files: string;
  let ids: ImportResult;

  before(async () => {
    prepared = tempDir('prepared');
    files = tempDir('files');
    const imported = await tandem(['import', writeJson(files, 'fixture.json', testFixture)], prepared);
    assert.equal(imported.code, 0, imported.stderr);
    ids = JSON.parse(imported.stdout) as ImportResult;
  });
  after(() => {
    for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
  });

  describe('refuses bad input with one clear line and changes nothing', { concurrency: 4 }, () => {
    const cases: {
      name: string;
      args: () => string[];
      env?: Record<string, string>;
      command: string;
      mentions: RegExp;
      /** Also run on an empty data dir, where a command that opens the database could leave something behind. */
      onEmptyDir?: boolean;
    }[] = [
      {
        name: 'an unknown command',
        args: () => ['frobnicate'],
        command: 'frobnicate',
        mentions: /unknown command "frobnicate"/,
      },
      { name: 'an unknown flag', args: () => ['serve', '--colour'], command: 'serve', mentions: /--colour/ },
      {
        name: 'serve --port abc',
        args: () => ['serve', '--port', 'abc'],
        command: 'serve',
        mentions: /--port.*abc/,
      },
      {
        name: 'PORT=abc serve',
        args: () => ['serve'],
        env: { PORT: 'abc' },
        command: 'serve',
        mentions: /PORT.*abc/,
      },
      {
        name: 'DATABASE_URL=mysql://x serve',
        args: () => ['serve'],
        env: { DATABASE_URL: 'mysql://x' },
        command: 'serve',
        mentions: /DATABASE_URL.*mysql:\/\/x.*postgres/,
      },
      {
        name: 'LOG_LEVEL=loud serve',
        args: () => ['serve'],
        env: { LOG_LEVEL: 'loud' },
        command: 'serve',
        mentions: /LOG_LEVEL.*loud/,
      },
      {
        name: 'token create without --user',
        args: () => ['token', 'create', '--scopes', 'documents:read'],
        command: 'token',
        mentions: /--user/,
      },
      {
        name: 'token create without --scopes',
        args: () => ['token', 'create', '--user', 'ada@acme.test'],
        command: 'token',
        mentions: /--scopes/,
      },
      {
        name: 'token create with an unknown scope',
        args: () => [
          'token',
          'create',
          '--user',
          'ada@acme.test',
          '--scopes',
          'documents:read,documents:delete',
        ],
        command: 'token',
        mentions: /unknown scope "documents:delete"/,
      },
      {
        name: 'token create with a bad --ttl',
        args: () => [
          'token',
          'create',
          '--user',
          'ada@acme.test',
          '--scopes',
          'documents:read',
          '--ttl',
          'soon',
        ],
        command: 'token',
        mentions: /--ttl "soon"/,
      },
      { name: 'mcp without --user', args: () => ['mcp'], command: 'mcp', mentions: /--user/ },
      {
        name: 'mcp --user of nobody',
        args: () => ['mcp', '--user', 'nobody@x.test'],
        command: 'mcp',
        mentions: /nobody@x\.test/,
        onEmptyDir: true,
      },
      {
        name: 'import of a fixture with a misspelt field',
        args: () => ['import', writeJson(files, 'typo.json', typoFixture)],
        command: 'import',
        mentions: /workspaces\.0\.users\.0: unknown field "nmae"/,
      },
      {
        name: 'import of a fixture with an extra field',
        args: () => ['import', writeJson(files, 'extra.json', extraFieldFixture)],
        command: 'import',
        mentions: /workspaces\.0\.users\.0: unknown field "nmae"/,
      },
      {
        name: 'import of invalid JSON',
        args: () => ['import', writeJson(files, 'broken.json', '{"workspaces": [')],
        command: 'import',
        mentions: /broken\.json.*JSON/,
      },
      {
        name: 'import of a fixture naming an unknown user',
        args: () => ['import', writeJson(files, 'stranger.json', strangerFixture('zed@beta.test'))],
        command: 'import',
        mentions: /workspaces\.0\.pods\.0\.members\.1: "zed@beta\.test" is not a user of Beta/,
      },
    ];

    for (const c of cases) {
      it(c.name, async () => {
        // Against a data directory holding a workspace: not one row changes.
        const dir = tempDir('bad');
        cpSync(prepared, dir, { recursive: true });
        const before = dump(dir);
        const run = await tandem(c.args(), dir, c.env);
        assertOneLineRefusal(run, c.command, c.mentions);
        assert.equal(dump(dir), before, 'the database changed');

        if (!c.onEmptyDir) return;
        // Against an empty data directory: the same line, and no workspace appears.
        const empty = tempDir('empty');
        const fresh = await tandem(c.args(), empty, c.env);
        assertOneLineRefusal(fresh, c.command, c.mentions);
        assert.deepEqual(workspaceNames(empty), [], 'a refused command created a workspace');
      });
    }
  });

  it('stores nothing of a refused import, so the corrected fixture imports under the same name', async () => {
    const dir = tempDir('retry');
    const refused = await tandem(
      ['import', writeJson(files, 'stranger-2.json', strangerFixture('zed@beta.test'))],
      dir,
    );
    assert.notEqual(refused.code, 0);
    assert.deepEqual(workspaceNames(dir), []);
    if (existsSync(sqlitePath(dir))) {
      withDb(dir, (db) => {
        for (const table of ['people', 'pods', 'pod_members', 'artifacts']) {
          assert.deepEqual(row(db, `SELECT COUNT(*) AS n FROM ${table}`), { n: 0 }, `${table} kept rows`);
        }
      });
    }

    const fixed = await tandem(
      ['import', writeJson(files, 'fixed.json', strangerFixture('bea@beta.test'))],
      dir,
    );
    assert.equal(fixed.code, 0, fixed.stderr);
    const map = JSON.parse(fixed.stdout) as ImportResult;
    assert.deepEqual(Object.keys(map.workspaces), ['Beta']);
    assert.deepEqual(workspaceNames(dir), ['Beta']);
  });

  it('import prints the map of fixture keys to the ids it stored', () => {
    const fixture = testFixture.workspaces;
    assert.deepEqual(Object.keys(ids.workspaces).sort(), fixture.map((w) => w.name).sort());
    for (const ws of fixture) {
      const got = ids.workspaces[ws.name]!;
      assert.deepEqual(Object.keys(got).sort(), ['artifacts', 'conversations', 'id', 'pods', 'users']);
      assert.deepEqual(Object.keys(got.users).sort(), ws.users.map((u) => u.email).sort());
      assert.deepEqual(Object.keys(got.pods).sort(), (ws.pods ?? []).map((p) => p.key).sort());
      assert.deepEqual(
        Object.keys(got.conversations).sort(),
        (ws.conversations ?? []).map((c) => c.key).sort(),
      );
      assert.deepEqual(Object.keys(got.artifacts).sort(), (ws.artifacts ?? []).map((a) => a.key).sort());
    }
    withDb(prepared, (db) => {
      const acme = ids.workspaces.Acme!;
      assert.deepEqual(row(db, 'SELECT name FROM workspaces WHERE id = ?', acme.id), { name: 'Acme' });
      for (const [email, id] of Object.entries(acme.users)) {
        assert.deepEqual(row(db, 'SELECT email, workspace_id FROM people WHERE id = ?', id), {
          email,
          workspace_id: acme.id,
        });
      }
      assert.deepEqual(
        row(db, 'SELECT title, owner_id FROM artifacts WHERE id = ?', acme.artifacts.roadmap!),
        {
          title: 'Roadmap',
          owner_id: acme.users['ada@acme.test'],
        },
      );
      assert.deepEqual(row(db, 'SELECT name FROM pods WHERE id = ?', acme.pods.design!), { name: 'Design' });
      assert.deepEqual(row(db, 'SELECT title FROM conversations WHERE id = ?', acme.conversations.general!), {
        title: 'General',
      });
    });
  });

  it('token create prints a token that stands for that person, with the scopes and lifetime asked for', async () => {
    const dir = tempDir('token');
    cpSync(prepared, dir, { recursive: true });
    const started = Date.now();
    const run = await tandem(
      ['token', 'create', '--user', 'bob@acme.test', '--scopes', 'documents:read', '--ttl', '2h'],
      dir,
    );
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stderr, '');
    const lines = run.stdout.trimEnd().split('\n');
    assert.equal(lines.length, 1, run.stdout);
    const token = lines[0]!;
    assert.match(token, /^tdm_[A-Za-z0-9_-]{20,}$/);

    const services = await openServices({ sqlitePath: sqlitePath(dir) });
    try {
      const verified = await services.tokens.verify(token);
      assert.ok(verified, 'the printed token is not accepted');
      assert.equal(verified.actor.personId, ids.workspaces.Acme!.users['bob@acme.test']);
      assert.equal(verified.actor.workspaceId, ids.workspaces.Acme!.id);
      assert.deepEqual([...verified.actor.scopes], ['documents:read']);
      assert.ok(verified.expiresAt !== null);
      const lifetime = verified.expiresAt - started;
      assert.ok(
        lifetime > 7_100_000 && lifetime <= 7_200_000 + 20_000,
        `lifetime ${lifetime} ms is not two hours`,
      );
    } finally {
      await services.storage.close();
    }
  });

  it('migrate on a fresh data dir says what it applied, and then that it is up to date', async () => {
    const dir = tempDir('migrate');
    const first = await tandem(['migrate'], dir);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /applied: .*001_foundation/);
    assert.ok(existsSync(sqlitePath(dir)));
    const second = await tandem(['migrate'], dir);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /up to date/);
    assert.doesNotMatch(second.stdout, /applied/);
  });

  it('serve on an empty data dir creates the demo workspace, serves / and /mcp, and stops cleanly on SIGTERM', async () => {
    const dir = tempDir('serve');
    const port = await freePortPair();
    const base = `http://127.0.0.1:${port}`;
    const first = serve(dir, port);
    try {
      await first.started();
      assert.match(first.stdout(), new RegExp(`Tandem is running at ${base}\\n`));
      assert.match(first.stdout(), /Created the demo workspace/);
      assert.deepEqual(workspaceNames(dir), ['Demo']);

      // The app sends a visitor who is not signed in to sign in first, and back afterwards.
      const home = await fetch(`${base}/`);
      assert.equal(home.status, 200);
      assert.match(home.url, /\/login\?next=%2F$/);
      assert.match(await home.text(), /Sign in/);

      const anonymous = await fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
      });
      assert.equal(anonymous.status, 401);
      assert.match(anonymous.headers.get('www-authenticate') ?? '', /^Bearer /);

      // A token made by the CLI next to the running server works against it.
      const made = await tandem(
        ['token', 'create', '--user', 'ada@demo.test', '--scopes', 'documents:read,documents:write'],
        dir,
      );
      assert.equal(made.code, 0, made.stderr);
      const token = made.stdout.trim();
      const client = new Client({ name: 'cli-tests', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
          authProvider: { token: async () => token },
        }),
      );
      try {
        const { tools } = await client.listTools();
        assert.deepEqual(
          tools.map((t) => t.name),
          IMPLEMENTED_TOOLS,
        );
        const created = await client.callTool({
          name: 'create_page',
          arguments: { title: 'Hello', html: '<p>hello</p>' },
        });
        assert.notEqual(created.isError, true, JSON.stringify(created.content));
        const pageId = (created.structuredContent as { page_id: string }).page_id;
        const read = await client.callTool({ name: 'read_page', arguments: { page_id: pageId } });
        assert.equal((read.structuredContent as { html: string }).html, '<p>hello</p>');
      } finally {
        await client.close();
      }
    } finally {
      first.child.kill('SIGTERM');
    }
    const stopped = await first.exited;
    assert.equal(stopped.signal, null, 'serve should exit on its own after SIGTERM');
    assert.equal(stopped.code, 0, `serve exited with ${stopped.code}; stderr: ${first.stderr()}`);
    assert.equal(first.stderr(), '');

    // A second start finds the workspace and does not create the demo again.
    const second = serve(dir, port);
    try {
      await second.started();
      assert.doesNotMatch(second.stdout(), /Created the demo workspace/);
    } finally {
      second.child.kill('SIGTERM');
    }
    assert.equal((await second.exited).code, 0, second.stderr());
    assert.deepEqual(workspaceNames(dir), ['Demo']);
  });
});
