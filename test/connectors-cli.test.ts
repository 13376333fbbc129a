import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const BIN = join(resolve(import.meta.dirname, '..'), 'bin', 'tandem.js');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** `tandem …` on a data directory of its own, with `input` on standard input. */
function tandem(
  args: string[],
  dataDir: string,
  options: { input?: string; env?: Record<string, string> } = {},
) {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env))
    if (value !== undefined && !/^(TANDEM_|DATABASE_URL$|PORT$|HOST$)/.test(key)) env[key] = value;
  return new Promise<Run>((done, fail) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...env, TANDEM_DATA: dataDir, ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      timeout: 20_000,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.once('error', fail);
    child.once('close', (code) => done({ code, stdout, stderr }));
    child.stdin.end(options.input ?? '');
  });
}

/** Every byte Tandem keeps under its data directory, as text. */
function everythingStored(dir: string): string {
  return readdirSync(dir)
    .map((name) => readFileSync(join(dir, name)).toString('latin1'))
    .join('\n');
}

describe('tandem connector set', () => {
  let dir: string;
  const token = `ghp_${Math.random().toString(36).slice(2)}CliToken`;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'tandem-connector-cli-'));
    const fixture = join(dir, 'fixture.json');
    writeFileSync(
      fixture,
      JSON.stringify({
        workspaces: [
          {
            name: 'Acme',
            users: [
              { email: 'ada@acme.test', name: 'Ada', admin: true },
              { email: 'bob@acme.test', name: 'Bob' },
            ],
            connectors: [{ provider: 'github', secret: 'whsec-cli' }],
          },
        ],
      }),
    );
    const imported = await tandem(['import', fixture], dir);
    assert.equal(imported.code, 0, imported.stderr);
    rmSync(fixture);
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('sets settings, reads a secret from standard input, and prints secrets only as set', async () => {
    const run = await tandem(
      [
        'connector',
        'set',
        'github',
        '--workspace',
        'Acme',
        'api_url=https://ghe.acme.test/api/v3',
        '--stdin',
        'token',
      ],
      dir,
      { input: `${token}\n` },
    );
    assert.equal(run.code, 0, run.stderr);
    const view = JSON.parse(run.stdout) as { settings: Record<string, string>; missing: string[] };
    assert.deepEqual(view.settings, { api_url: 'https://ghe.acme.test/api/v3', token: 'set', secret: 'set' });
    assert.deepEqual(view.missing, []);
    assert.ok(!run.stdout.includes(token) && !run.stderr.includes(token));
    assert.ok(!everythingStored(dir).includes(token), 'the token is sealed in the database');
    assert.equal(
      statSync(join(dir, 'secrets.key')).mode & 0o777,
      0o600,
      'the key is made readable by its owner only',
    );
  });

  it('sets a person’s own connection with --owner', async () => {
    const run = await tandem(
      ['connector', 'set', 'gmail', '--owner', 'bob@acme.test', 'from=bob@acme.test', '--stdin', 'password'],
      dir,
      { input: 'app-password\n' },
    );
    assert.equal(run.code, 0, run.stderr);
    const view = JSON.parse(run.stdout) as { personal: boolean; settings: Record<string, string | null> };
    assert.equal(view.personal, true);
    assert.equal(view.settings.password, 'set');
  });

  it('refuses bad input with one line that repeats no value', async () => {
    const cases: [string[], RegExp, number][] = [
      [
        ['connector', 'set', 'github', 'tokn=x'],
        /^tandem connector: github has no setting "tokn"; it takes api_url, token, secret$/,
        1,
      ],
      [['connector', 'set', 'github', token], /^tandem connector: setting 1 is not FIELD=VALUE$/, 2],
      [
        ['connector', 'set', 'github', '--workspace', 'Nowhere'],
        /^tandem connector: no workspace named "Nowhere"$/,
        1,
      ],
      [
        ['connector', 'get', 'github'],
        /^tandem connector: unknown connector command "get"; use: tandem connector set$/,
        2,
      ],
    ];
    for (const [args, line, code] of cases) {
      const run = await tandem(args, dir);
      assert.equal(run.code, code, args.join(' '));
      assert.match(run.stderr.trim(), line);
      assert.ok(!run.stderr.includes(token));
    }
  });

  it('refuses a malformed TANDEM_SECRET_KEY without repeating it, and secrets under another key', async () => {
    const bad = await tandem(['connector', 'set', 'github'], dir, {
      env: { TANDEM_SECRET_KEY: 'hunter2-not-a-key' },
    });
    assert.equal(bad.code, 1);
    assert.equal(
      bad.stderr.trim(),
      'tandem connector: TANDEM_SECRET_KEY=(not shown) must be 32 random bytes in base64 (openssl rand -base64 32) or as 64 hex digits',
    );
    const other = Buffer.alloc(32, 7).toString('base64');
    const moved = await tandem(['connector', 'set', 'github', 'api_url='], dir, {
      env: { TANDEM_SECRET_KEY: other },
    });
    assert.equal(moved.code, 1);
    assert.match(
      moved.stderr,
      /^tandem connector: the GitHub connection's secrets cannot be read: a stored secret was sealed with another key/,
    );
  });
});
