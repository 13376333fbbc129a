import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import { fakeBrowser, listedScopes, registerClient, signIn } from './support/oauth.ts';
import { freePort, startOnFreePorts } from './support/raw-http.ts';

const PASSWORD = 'correct horse battery';
const CLI = createRequire(import.meta.url).resolve('@modelcontextprotocol/conformance/dist/index.js');

interface Check {
  id: string;
  status: string;
  errorMessage?: string;
}

/**
 * The server scenarios that apply to a server of tools alone (no resources, prompts or the
 * runner's own test tools): the runner cannot present a credential, so a local door in front of
 * `/mcp` adds a personal access token and passes everything else, the Host header included, as is.
 */
const SERVER_SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'http-header-validation',
  'sep-2164-resource-not-found',
  'dns-rebinding-protection',
];

function withToken(target: string, token: string): Promise<{ url: string; close: () => Promise<void> }> {
  const to = new URL(target);
  const door = createServer((req, res) => {
    const forward = request(
      {
        host: to.hostname,
        port: to.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${token}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  return new Promise((resolve) =>
    door.listen(0, '127.0.0.1', () => {
      const { port } = door.address() as AddressInfo;
      resolve({
        url: `http://127.0.0.1:${port}/mcp`,
        close: () => new Promise((done) => door.close(() => done())),
      });
    }),
  );
}

/**
 * The MCP conformance runner's authorization-server scenarios against Tandem's own authorization
 * server. The authorization-code grant prints a URL for a person to open and waits at its own
 * callback; `person` plays that part (signs in, allows) and hands back the redirect.
 */
async function runScenario(
  args: string[],
  person?: (url: string) => Promise<string>,
  suite: 'authorization' | 'server' = 'authorization',
): Promise<{ checks: Check[]; output: string }> {
  const out = mkdtempSync(join(tmpdir(), 'tandem-conformance-'));
  const child = spawn(process.execPath, [CLI, suite, ...args, '-o', out], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  let handed = false;
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  const driven: Promise<void>[] = [];
  const read = (chunk: Buffer) => {
    output += chunk.toString();
    const url = /^(http:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(output)?.[1];
    if (url && person && !handed) {
      handed = true;
      driven.push(
        person(url).then(async (callback) => {
          const res = await fetch(callback);
          assert.equal(res.status, 200, 'the runner took the redirect back');
        }),
      );
    }
  };
  child.stdout.on('data', read);
  child.stderr.on('data', read);
  const code = await exited;
  await Promise.all(driven);
  try {
    const files = readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) =>
      f.endsWith('checks.json'),
    );
    const checks = files.flatMap((f) => JSON.parse(readFileSync(join(out, f), 'utf8')) as Check[]);
    assert.ok(checks.length > 0, `the runner wrote its checks (exit ${code}): ${output}`);
    return { checks, output };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

for (const db of DATABASES) {
  describe(`MCP conformance: authorization and server scenarios on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let dataDir: string;
    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-conformance-server-'));
      server = await startOnFreePorts(h.services, dataDir);
      await h.services.accounts.setPassword('ada@acme.test', PASSWORD);
    });
    after(async () => {
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('metadata and the authorization-code grant pass, the grant’s request without scope getting documents:read', async () => {
      const port = await freePort();
      const redirect = `http://127.0.0.1:${port}/callback`;
      const clientId = await registerClient(server.url, redirect, 'Conformance runner');
      const browser = fakeBrowser(server.url);
      await signIn(browser, 'ada@acme.test', PASSWORD);
      let asked: string[] = [];
      const { checks, output } = await runScenario(
        ['--url', server.url, '--client-id', clientId, '--resource', `${server.url}/mcp`, '-p', String(port)],
        async (url) => {
          assert.equal(new URL(url).searchParams.get('scope'), null, 'the runner sends no scope');
          const consent = await browser.follow(url);
          assert.equal(consent.status, 200);
          const html = await consent.text();
          asked = listedScopes(html);
          const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!.replaceAll('&#47;', '/');
          const value = (name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(html)?.[1] ?? '';
          const posted = await browser.post(action, {
            workspace_shown: value('workspace_shown'),
            scopes_shown: value('scopes_shown'),
            redirect_shown: redirect,
            decision: 'allow',
          });
          const back = await browser.follow(posted.headers.get('location')!);
          return back.headers.get('location')!;
        },
      );
      assert.deepEqual(asked, ['Read your documents, pages and tables, and their comments'], output);
      const ran = new Set(checks.map((c) => c.id));
      assert.ok(ran.has('authorization-code-grant'), output);
      assert.ok(ran.size >= 2, `both scenarios ran: ${[...ran].join(', ')}`);
      assert.deepEqual(
        checks.filter((c) => c.status !== 'SUCCESS'),
        [],
        output,
      );
    });

    it('the server scenarios that apply to a server of tools pass', async () => {
      const ada = h.actor('ada@acme.test');
      const { token } = await h.services.tokens.create(
        ada.personId,
        ada.workspaceId,
        ['documents:read', 'documents:write', 'automations:read', 'automations:write'],
        3_600_000,
      );
      const door = await withToken(`${server.url}/mcp`, token);
      try {
        for (const scenario of SERVER_SCENARIOS) {
          const { checks, output } = await runScenario(
            ['--url', door.url, '--scenario', scenario],
            undefined,
            'server',
          );
          assert.deepEqual(
            checks.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO' && c.status !== 'WARNING'),
            [],
            `${scenario}: ${output}`,
          );
          assert.ok(
            checks.some((c) => c.status === 'SUCCESS'),
            `${scenario} checked something: ${output}`,
          );
        }
      } finally {
        await door.close();
      }
    });
  });
}
