import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { importFixture } from '../src/domains/import/import.ts';
import { openServices, type Services } from '../src/services.ts';
import { dropPgSchema } from '../src/storage/db.ts';
import { PG_URL } from './support/databases.ts';
import { testFixture } from './support/fixture.ts';
import {
  authorize,
  authorizeUrl,
  exchangeCode,
  fakeBrowser,
  mcpCall,
  pkcePair,
  registerClient,
  signIn,
} from './support/oauth.ts';
import { freePort } from './support/raw-http.ts';

const PASSWORD = 'correct horse battery';
const REDIRECT = 'http://127.0.0.1:5999/callback';
/** The promise to people: a revocation reaches every instance within this long. */
const PROMISED_MS = 5000;

/** One `tandem serve` process; all of them on one Postgres schema, behind one PUBLIC_URL. */
async function serveProcess(env: Record<string, string>): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/tandem.js', 'serve', '--no-worker'], {
    env: {
      ...process.env,
      ...env,
      PORT: String(port),
      PAGES_PORT: String(await freePort()),
      LOG_LEVEL: 'error',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const seen = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('Tandem is running')) resolve();
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.once('exit', (code) => reject(new Error(`tandem serve exited with ${code}:\n${output}`)));
  });
  return { child, url: `http://127.0.0.1:${port}` };
}

/** How long after `since` the check first held, polling every 50 ms; fails past the promise. */
async function heldAfter(since: number, check: () => Promise<boolean>, what: string): Promise<number> {
  for (;;) {
    if (await check()) return Date.now() - since;
    if (Date.now() - since > PROMISED_MS + 1000)
      assert.fail(`${what} did not happen within ${PROMISED_MS} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

const SKIP = process.env.TANDEM_TEST_POSTGRES === 'skip' ? 'TANDEM_TEST_POSTGRES=skip' : false;

describe('revocation across two server processes on one Postgres', { skip: SKIP }, () => {
  const schema = `t_${randomBytes(6).toString('hex')}`;
  let services: Services;
  let dataDir: string;
  let a: { child: ChildProcess; url: string };
  let b: { child: ChildProcess; url: string };
  let ada: { personId: string; workspaceId: string };
  const lags: Record<string, number> = {};

  before(async () => {
    services = await openServices({ databaseUrl: PG_URL, pgSchema: schema, poolSize: 4 });
    const ids = await importFixture(services.deps, testFixture);
    ada = { personId: ids.workspaces.Acme!.users['ada@acme.test']!, workspaceId: ids.workspaces.Acme!.id };
    await services.accounts.setPassword('ada@acme.test', PASSWORD);
    dataDir = mkdtempSync(join(tmpdir(), 'tandem-instances-'));
    const databaseUrl = `${PG_URL}?options=${encodeURIComponent(`-c search_path=${schema}`)}`;
    const common = { DATABASE_URL: databaseUrl, TANDEM_DATA: dataDir };
    a = await serveProcess(common);
    // Behind one load balancer both answer to one PUBLIC_URL, so OAuth tokens are good at either.
    b = await serveProcess({ ...common, PUBLIC_URL: a.url });
  });

  after(async () => {
    for (const p of [a, b]) p?.child.kill('SIGTERM');
    await Promise.all(
      [a, b].map(
        (p) =>
          p &&
          new Promise((resolve) =>
            p.child.exitCode === null ? p.child.once('exit', resolve) : resolve(null),
          ),
      ),
    );
    await services?.close();
    await dropPgSchema(PG_URL, schema);
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    console.log(`revocation reached the other instance after (ms): ${JSON.stringify(lags)}`);
  });

  const me = (url: string, headers: Record<string, string>) => fetch(`${url}/api/me`, { headers });

  /** A browser signed in to instance A. */
  async function signedInOnA() {
    const browser = fakeBrowser(a.url);
    await signIn(browser, 'ada@acme.test', PASSWORD);
    return browser;
  }

  it('a personal access token: at once on the instance that revoked it, within 5 s on the other', async () => {
    const pat = await services.tokens.create(ada.personId, ada.workspaceId, ['documents:read'], 3_600_000);
    const bearer = { authorization: `Bearer ${pat.token}` };
    // Both instances have just verified it (and remember it).
    assert.equal((await me(a.url, bearer)).status, 200);
    assert.equal((await me(b.url, bearer)).status, 200);
    const browser = await signedInOnA();
    const revoked = await fetch(`${a.url}/api/tokens/${pat.tokenId}`, {
      method: 'DELETE',
      headers: { cookie: browser.jar.header(), origin: a.url },
    });
    assert.equal(revoked.status, 200);
    const at = Date.now();
    assert.equal((await me(a.url, bearer)).status, 401, 'at once where it was revoked');
    lags.token = await heldAfter(
      at,
      async () => (await me(b.url, bearer)).status === 401,
      'B refusing the token',
    );
    assert.equal((await mcpCall(b.url, pat.token)).status, 401, '/mcp too');
  });

  it('a browser session: signing out on one instance ends it on the other within 5 s', async () => {
    const browser = await signedInOnA();
    const cookie = { cookie: browser.jar.header() };
    assert.equal((await me(a.url, cookie)).status, 200);
    assert.equal((await me(b.url, cookie)).status, 200, 'one session, any instance');
    const out = await browser.post('/logout', {});
    assert.equal(out.status, 303);
    const at = Date.now();
    assert.equal((await me(a.url, cookie)).status, 401, 'at once where it was ended');
    lags.session = await heldAfter(
      at,
      async () => (await me(b.url, cookie)).status === 401,
      'B ending the session',
    );
  });

  it('an OAuth grant revoked in settings, and a token revoked by RFC 7009 on the other instance', async () => {
    const clientId = await registerClient(a.url, REDIRECT, 'Two Instance Client');
    const browser = await signedInOnA();
    const tokens = async () => {
      const { verifier, challenge } = pkcePair();
      const { callback } = await authorize(
        browser,
        authorizeUrl(a.url, { clientId, redirectUri: REDIRECT, challenge }),
      );
      const got = await exchangeCode(a.url, {
        client_id: clientId,
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      assert.equal(got.status, 200, JSON.stringify(got.body));
      return got.body;
    };

    // RFC 7009 at B; A had just accepted the token.
    const first = await tokens();
    assert.equal((await mcpCall(a.url, first.access_token!)).status, 200);
    assert.equal((await mcpCall(b.url, first.access_token!)).status, 200);
    const revoke = await fetch(`${b.url}/oauth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ token: first.access_token!, client_id: clientId }),
    });
    assert.equal(revoke.status, 200);
    let at = Date.now();
    assert.equal((await mcpCall(b.url, first.access_token!)).status, 401, 'at once where it was revoked');
    lags.oauthToken = await heldAfter(
      at,
      async () => (await mcpCall(a.url, first.access_token!)).status === 401,
      'A refusing the revoked access token',
    );

    // The whole app, from /settings on A; B had just accepted its token.
    const second = await tokens();
    assert.equal((await mcpCall(b.url, second.access_token!)).status, 200);
    const [app] = (await services.grants.list(ada.personId)).filter((g) => g.client_id === clientId);
    assert.ok(app);
    const out = await browser.post(`/settings/apps/${app.grant_id}/revoke`, {});
    assert.equal(out.status, 303);
    at = Date.now();
    assert.equal((await mcpCall(a.url, second.access_token!)).status, 401, 'at once where it was revoked');
    lags.oauthGrant = await heldAfter(
      at,
      async () => (await mcpCall(b.url, second.access_token!)).status === 401,
      'B refusing the disconnected app’s token',
    );
  });
});
