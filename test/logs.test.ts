import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { freePort } from './support/raw-http.ts';

const BIN = resolve(import.meta.dirname, '..', 'bin', 'tandem.js');

describe('server logs', () => {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-logs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('write each request with its id, person and workspace, at the level LOG_LEVEL sets', async () => {
    const port = await freePort();
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      TANDEM_DATA: dir,
      PORT: String(port),
      PAGES_PORT: String(await freePort()),
      LOG_LEVEL: 'debug',
    };
    const child = spawn(process.execPath, [BIN, 'serve', '--no-worker'], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    try {
      while (!out.includes('Tandem is running')) {
        assert.equal(child.exitCode, null, err);
        await new Promise((r) => setTimeout(r, 50));
      }
      const made = spawnSync(
        process.execPath,
        [BIN, 'token', 'create', '--user', 'ada@demo.test', '--scopes', 'documents:read'],
        { env, encoding: 'utf8' },
      );
      assert.equal(made.status, 0, made.stderr);
      const res = await fetch(`http://127.0.0.1:${port}/api/documents`, {
        headers: { authorization: `Bearer ${made.stdout.trim()}`, 'x-request-id': 'soak-42.a' },
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-request-id'), 'soak-42.a', 'a proxy’s request id is kept');
      const mine = await fetch(`http://127.0.0.1:${port}/healthz`, {
        headers: { 'x-request-id': 'no spaces allowed' },
      });
      assert.match(mine.headers.get('x-request-id') ?? '', /^[0-9a-f-]{36}$/, 'an odd one is replaced');

      const lines = () =>
        err
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as Record<string, unknown>);
      /** The first log line that matches, once the server has written it. */
      const logged = async (match: (l: Record<string, unknown>) => boolean) => {
        for (let i = 0; i < 100 && !lines().some(match); i++) await new Promise((r) => setTimeout(r, 50));
        return lines().find(match);
      };

      const line = await logged((l) => l.msg === 'request' && l.path === '/api/documents');
      assert.ok(line, `a line for the request in: ${err.slice(0, 2000)}`);
      assert.equal(line.request, 'soak-42.a');
      assert.equal(line.status, 200);
      assert.ok(typeof line.person === 'string' && line.person !== '', 'the person it acted for');
      assert.ok(typeof line.workspace === 'string' && line.workspace !== line.person, 'the workspace');
      assert.ok(!err.includes('Bearer'), 'no credential in the log');

      // An MCP call is logged the same way, under the id its proxy gave it.
      const mcp = (headers: Record<string, string>) =>
        fetch(`http://127.0.0.1:${port}/mcp`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${made.stdout.trim()}`,
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          },
          body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
        });
      const listed = await mcp({ 'x-request-id': 'soak-42.b' });
      assert.equal(listed.status, 200, await listed.clone().text());
      assert.match(await listed.text(), /read_document/);
      assert.equal(listed.headers.get('x-request-id'), 'soak-42.b');
      const call = await logged((l) => l.msg === 'request' && l.request === 'soak-42.b');
      assert.ok(call, `a line for the MCP call in: ${err.slice(-2000)}`);
      assert.equal(call.path, '/mcp');
      assert.equal(call.status, 200);
      assert.equal(call.person, line.person, 'the person the call acted for');

      // A client whose headers disagree with its body is refused 400: one info line, no error.
      const refused = await mcp({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'prompts/list' });
      assert.equal(refused.status, 400);
      const refusal = await logged((l) => l.msg === 'mcp request refused');
      assert.ok(refusal, `a line for the refusal in: ${err.slice(-2000)}`);
      assert.equal(refusal.level, 30, 'at info');
      assert.match(String(refusal.refused), /^Rejected inbound request/);
      assert.ok(!lines().some((l) => (l.level as number) >= 50), 'no error line for a client’s fault');
    } finally {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
  });
});
