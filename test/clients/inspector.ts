import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
/** The MCP Inspector's command line, as installed from npm. */
const INSPECTOR = join(
  dirname(require.resolve('@modelcontextprotocol/inspector/package.json')),
  'clients/launcher/build/index.js',
);

/**
 * One Inspector CLI command against Tandem, as a developer runs it: it signs in with OAuth when it
 * holds no token (printing the address to visit, since no browser opens here), keeps the tokens in
 * its file store under `home`, and prints the method's answer as JSON.
 */
function inspector(home: string, args: string[]) {
  const child = spawn(process.execPath, [INSPECTOR, '--cli', ...args], {
    env: {
      ...process.env,
      HOME: home,
      MCP_AUTO_OPEN_ENABLED: 'true',
      MCP_INSPECTOR_SECRET_STORE: 'file',
      BROWSER: 'none',
      DISPLAY: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<number>((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
  return {
    stderr: () => err,
    async authorizationUrl(): Promise<URL> {
      const end = Date.now() + 60_000;
      while (Date.now() < end) {
        const url = /Please navigate to:\s*(\S+)/.exec(err)?.[1];
        if (url) return new URL(url);
        if (child.exitCode !== null) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`the Inspector asked for no authorization: ${err}`);
    },
    async answer(): Promise<Record<string, unknown>> {
      const code = await exited;
      assert.equal(code, 0, `the Inspector ended well: ${err}\n${out}`);
      return JSON.parse(out) as Record<string, unknown>;
    },
  };
}

describe('the MCP Inspector CLI connects through OAuth in Chromium', { skip: BROWSER_SKIP }, () => {
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
      let home: string;
      before(() => {
        ({ h, server, context } = made);
        home = mkdtempSync(join(tmpdir(), 'tandem-inspector-home-'));
      });
      after(() => rmSync(home, { recursive: true, force: true }));

      it('signs Ada in and lists the tools, then calls one with the token it kept', async () => {
        const callbackUrl = `http://127.0.0.1:${await freePort()}/oauth/callback`;
        const target = ['--server-url', `${server.url}/mcp`, '--callback-url', callbackUrl];
        const listing = inspector(home, [...target, '--method', 'tools/list']);
        const done = await personAuthorizes(context, await listing.authorizationUrl(), {
          redirectUrl: callbackUrl,
          email: 'ada@acme.test',
          password: PASSWORD,
        });
        assert.ok(done.asked?.length, 'Ada saw what it asks for');
        // Chromium's redirect was held for the test and goes on to the Inspector's callback now,
        // unless the browser's own navigation reached it first (the Inspector then stops listening).
        await deliver(done.callback).then(
          (res) => assert.equal(res?.status, 200),
          (error: unknown) =>
            assert.match(
              listing.stderr(),
              /Authorization complete/,
              `the Inspector took no redirect (${String(error)})`,
            ),
        );
        const listed = (await listing.answer()) as { tools: { name: string }[] };
        assert.deepEqual(
          listed.tools.map((t) => t.name),
          IMPLEMENTED_TOOLS,
        );

        // A second command signs in with nothing: it uses the token it stored.
        const reading = inspector(home, [
          ...target,
          '--stored-auth-only',
          '--method',
          'tools/call',
          '--tool-name',
          'read_page',
          '--tool-arg',
          `page_id=${acme(h).artifacts.landing}`,
        ]);
        const read = (await reading.answer()) as { structuredContent: { title: string } };
        assert.equal(read.structuredContent.title, 'Landing');
      });
    });
  }
});
