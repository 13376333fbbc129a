import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices, type Services } from '../src/services.ts';
import { testFixture } from './support/fixture.ts';
import { freePort } from './support/raw-http.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tandem.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `tandem …` as a person runs it, with `input` typed or piped on standard input. */
function tandem(args: string[], dataDir: string, input?: string): Promise<Run> {
  return new Promise((done, fail) => {
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) {
      if (v !== undefined && !/^(TANDEM_|DATABASE_URL$|PORT$|PUBLIC_URL$|PAGES_ORIGIN$)/.test(k)) env[k] = v;
    }
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: ROOT,
      env: { ...env, TANDEM_DATA: dataDir },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

describe('tandem user password, token list and token revoke', () => {
  let dir: string;
  let services: Services;
  let ids: Awaited<ReturnType<typeof importFixture>>['workspaces'];
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-identity-cli-'));
    services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
    ids = (await importFixture(services.deps, testFixture)).workspaces;
  });
  after(async () => {
    await services?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sets a password read from standard input', async () => {
    const run = await tandem(['user', 'password', '--user', 'bob@acme.test'], dir, 'a new password\n');
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'set the password of bob@acme.test\n');
    const [bob] = await services.accounts.signIn('bob@acme.test', 'a new password', '10.0.0.1');
    assert.equal(bob?.personId, ids.Acme!.users['bob@acme.test']);
  });

  it('refuses a short password, no input, or an unknown person in one line, changing nothing', async () => {
    const cases: [string[], string, RegExp][] = [
      [['--user', 'bob@acme.test'], 'short\n', /^tandem user: a password needs at least 8 characters$/],
      [['--user', 'bob@acme.test'], '', /^tandem user: give the new password on standard input/],
      [
        ['--user', 'nobody@acme.test'],
        'long enough one\n',
        /^tandem user: no person with e-mail nobody@acme\.test/,
      ],
      [
        ['--user', 'bob@acme.test', '--workspace', 'Other'],
        'long enough one\n',
        /no person with e-mail bob@acme\.test in workspace "Other"/,
      ],
    ];
    for (const [args, input, message] of cases) {
      const run = await tandem(['user', 'password', ...args], dir, input);
      assert.notEqual(run.code, 0, args.join(' '));
      assert.equal(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr.trim(), message);
    }
    assert.equal((await services.accounts.signIn('bob@acme.test', 'a new password', '10.0.0.2')).length, 1);
  });

  it('lists a person’s tokens and revokes one by id', async () => {
    const bob = { id: ids.Acme!.users['bob@acme.test']!, ws: ids.Acme!.id };
    const kept = await services.tokens.create(bob.id, bob.ws, ['documents:read'], 3_600_000);
    const gone = await services.tokens.create(
      bob.id,
      bob.ws,
      ['automations:read', 'automations:write'],
      null,
    );
    const list = await tandem(['token', 'list', '--user', 'bob@acme.test'], dir);
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trim().split('\n');
    assert.equal(lines.length, 2);
    assert.match(
      lines[0]!,
      new RegExp(`^${gone.tokenId}  automations:read,automations:write  made \\S+ \\S+  never expires$`),
    );
    assert.match(
      lines[1]!,
      new RegExp(`^${kept.tokenId}  documents:read  made \\S+ \\S+  expires \\S+ \\S+$`),
    );

    const revoke = await tandem(['token', 'revoke', gone.tokenId], dir);
    assert.equal(revoke.code, 0, revoke.stderr);
    assert.equal(revoke.stdout, `revoked ${gone.tokenId}\n`);
    assert.equal(await services.tokens.verify(gone.token), null);
    assert.ok(await services.tokens.verify(kept.token));
    const again = await tandem(['token', 'revoke', gone.tokenId], dir);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, 'tandem token: Token not found\n');
    const none = await tandem(['token', 'list', '--user', 'cy@acme.test'], dir);
    assert.equal(none.stdout, 'cy@acme.test has no personal access tokens\n');
  });

  it('prints the demo people’s password once when serve creates the demo, and it signs in', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'tandem-identity-demo-'));
    const port = await freePort();
    const child = spawn(process.execPath, [BIN, 'serve', '--no-worker', '--port', String(port)], {
      cwd: ROOT,
      env: {
        ...process.env,
        TANDEM_DATA: empty,
        DATABASE_URL: '',
        PUBLIC_URL: '',
        PAGES_PORT: String(await freePort()),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout.on('data', (d: Buffer) => {
          output += d.toString();
          if (/shown this once/.test(output)) resolve();
        });
        child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
      });
      const password = /with the password (\S+) \(shown this once\)/.exec(output)?.[1];
      assert.ok(password, output);
      const origin = `http://127.0.0.1:${port}`;
      const res = await fetch(`${origin}/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ email: 'ada@demo.test', password }),
        redirect: 'manual',
      });
      assert.equal(res.status, 303);
      assert.match(res.headers.get('set-cookie') ?? '', /^tandem_session=/);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => (child.exitCode === null ? child.once('exit', resolve) : resolve(null)));
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
