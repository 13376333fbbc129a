import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import type { RunningServer } from '../../src/server.ts';
import {
  BROWSER_SKIP,
  deliver,
  launchBrowser,
  personAuthorizes,
  tandemForBrowser,
} from '../support/browser-oauth.ts';
import { DATABASES } from '../support/databases.ts';
import { acme, type Harness } from '../support/harness.ts';
import { freePort } from '../support/raw-http.ts';
import { IMPLEMENTED_TOOLS } from '../support/tools.ts';

const PASSWORD = 'correct horse battery';
const require = createRequire(import.meta.url);
/** mcp-remote, what Claude Desktop users run to reach a remote MCP server, as installed from npm. */
const MCP_REMOTE = join(dirname(require.resolve('mcp-remote/package.json')), 'dist/proxy.js');

/**
 * mcp-remote as a desktop app runs it: a stdio MCP server that connects to Tandem, opening the
 * person's browser for OAuth (here: Chromium driven by `authorize`, since no browser opens by itself).
 */
function mcpRemote(url: string, port: number, configDir: string) {
  const child = spawn(process.execPath, [MCP_REMOTE, url, String(port), '--host', '127.0.0.1'], {
    env: { ...process.env, MCP_REMOTE_CONFIG_DIR: configDir, BROWSER: 'none', DISPLAY: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  }) as ChildProcessWithoutNullStreams;
  let err = '';
  let out = '';
  const waiting = new Map<number, (message: Record<string, unknown>) => void>();
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    let nl: number;
    while ((nl = out.indexOf('\n')) >= 0) {
      const line = out.slice(0, nl);
      out = out.slice(nl + 1);
      if (!line.trim()) continue;
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') waiting.get(message.id)?.(message);
    }
  });
  let id = 0;
  return {
    child,
    stderr: () => err,
    /** The authorization URL mcp-remote asks the person to visit, once it asks. */
    async authorizationUrl(): Promise<string> {
      const end = Date.now() + 60_000;
      while (Date.now() < end) {
        const url = /Please authorize this client by visiting:\s*(\S+)/.exec(err)?.[1];
        if (url) return url;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`mcp-remote asked for no authorization: ${err}`);
    },
    request(method: string, params: object = {}): Promise<Record<string, unknown>> {
      id += 1;
      const mine = id;
      return new Promise((resolve) => {
        waiting.set(mine, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id: mine, method, params })}\n`);
      });
    },
    notify(method: string) {
      child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method })}\n`);
    },
    close: () => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill())),
  };
}

describe('mcp-remote connects through OAuth in Chromium', { skip: BROWSER_SKIP }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
  });

  for (const db of DATABASES) {
    describe(db.name, () => {
      const made = tandemForBrowser(db, () => browser, PASSWORD);
      let h: Harness;
      let server: RunningServer;
      let context: BrowserContext;
      let configDir: string;
      before(() => {
        ({ h, server, context } = made);
        configDir = mkdtempSync(join(tmpdir(), 'tandem-mcp-remote-config-'));
      });
      after(() => rmSync(configDir, { recursive: true, force: true }));

      const running: ReturnType<typeof mcpRemote>[] = [];
      after(async () => {
        await Promise.all(
          running
            .filter((r) => r.child.exitCode === null && r.child.signalCode === null)
            .map((r) => r.close()),
        );
      });

      /** Starts mcp-remote, lets Ada sign in and answer in Chromium, and initializes the connection. */
      async function connect(port: number) {
        const remote = mcpRemote(`${server.url}/mcp`, port, configDir);
        running.push(remote);
        const redirectUrl = `http://127.0.0.1:${port}/oauth/callback`;
        const initialized = remote.request('initialize', {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'desktop', version: '1.0.0' },
        });
        const done = await personAuthorizes(context, new URL(await remote.authorizationUrl()), {
          redirectUrl,
          email: 'ada@acme.test',
          password: PASSWORD,
        });
        // Chromium's redirect was held for the test; it goes on to mcp-remote's callback now
        // (which listens once it has asked; a quick answer may arrive before it does).
        const taken = () => remote.stderr().includes('Auth code received');
        const res = await deliver(done.callback, taken).catch((error: unknown) => {
          throw new Error(`mcp-remote took no redirect (${String(error)}): ${remote.stderr()}`);
        });
        if (res) assert.equal(res.status, 200, `mcp-remote took the code: ${remote.stderr()}`);
        const init = await initialized;
        assert.ok(init.result, `initialized: ${JSON.stringify(init)} ${remote.stderr()}`);
        remote.notify('notifications/initialized');
        return { remote, asked: done.asked };
      }

      it('signs Ada in, lists the tools and reads; signed out with the grant held, it lands back without consent', async () => {
        const port = await freePort();
        const first = await connect(port);
        assert.deepEqual(first.asked, ['Read your documents, pages and tables, and their comments']);
        const listed = (await first.remote.request('tools/list')) as {
          result: { tools: { name: string }[] };
        };
        assert.deepEqual(
          listed.result.tools.map((t) => t.name),
          IMPLEMENTED_TOOLS,
        );
        const read = (await first.remote.request('tools/call', {
          name: 'read_page',
          arguments: { page_id: acme(h).artifacts.landing },
        })) as { result: { structuredContent: { title: string } } };
        assert.equal(read.result.structuredContent.title, 'Landing');
        await first.remote.close();

        // Its tokens (and the rest of its state) gone, the browser signed out; its registration and Ada's grant stand.
        for (const file of readdirSync(configDir, { recursive: true, encoding: 'utf8' }))
          if (file.endsWith('.json') && !file.endsWith('client_info.json'))
            rmSync(join(configDir, file), { force: true });
        await context.clearCookies();
        const again = await connect(port);
        assert.equal(again.asked, undefined, 'no consent page: nothing new was asked');
        const listedAgain = (await again.remote.request('tools/list')) as { result: { tools: unknown[] } };
        assert.equal(listedAgain.result.tools.length, IMPLEMENTED_TOOLS.length);
        await again.remote.close();
      });
    });
  }
});
