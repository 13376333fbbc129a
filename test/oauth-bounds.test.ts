import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import {
  authorize,
  authorizeUrl,
  consentForm,
  exchangeCode,
  fakeBrowser,
  listedScopes,
  mcpCall,
  pkcePair,
  refresh,
  signIn,
  type FakeBrowser,
} from './support/oauth.ts';
import { startOnFreePorts } from './support/raw-http.ts';

const PASSWORD = 'correct horse battery';
const LOOPBACK = 'http://127.0.0.1:5999/callback';
const WEB = 'https://app.example.test/oauth/callback';
const WEB_OTHER_PATH = 'https://app.example.test/oauth/elsewhere';
const ATTACKER = 'https://collector.example.net/cb';

/** What MCP clients send when they register (their shapes, with this test's redirect URIs). */
const REAL_CLIENTS: Record<string, Record<string, unknown>> = {
  'Claude Code': {
    client_name: 'Claude Code (tandem)',
    redirect_uris: ['http://localhost:51234/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  'VS Code': {
    client_name: 'Visual Studio Code',
    client_uri: 'https://code.visualstudio.com/',
    redirect_uris: ['http://127.0.0.1:33418/', 'https://vscode.dev/redirect'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  'mcp-remote': {
    client_name: 'MCP CLI Proxy',
    client_uri: 'https://github.com/modelcontextprotocol/mcp-cli',
    software_id: '2e6dc280-f3c3-4e01-99a7-8181dbd1d23d',
    software_version: '0.1.29',
    redirect_uris: ['http://localhost:3334/oauth/callback'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
  'MCP Inspector': {
    client_name: 'MCP Inspector',
    client_uri: 'https://github.com/modelcontextprotocol/inspector',
    scope: 'documents:read',
    redirect_uris: ['http://localhost:6274/oauth/callback', 'http://localhost:6274/oauth/callback/debug'],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  },
};

interface Answer {
  status: number;
  headers: Headers;
  body: Record<string, string>;
}

async function register(
  origin: string,
  metadata: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const res = await fetch(`${origin}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(metadata),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, string> };
}

/** A registration sent chunked: no Content-Length, so its size is known only once read. */
function registerChunked(origin: string, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${origin}/oauth/register`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 10));
    req.end(body.slice(10));
  });
}

const client = (redirectUris: string[], name = 'Bounded client') => ({
  client_name: name,
  redirect_uris: redirectUris,
  grant_types: ['authorization_code', 'refresh_token'],
  response_types: ['code'],
  token_endpoint_auth_method: 'none',
  application_type: 'native',
});

for (const db of DATABASES) {
  describe(`OAuth consent, registration and refresh bounds (${db.name})`, () => {
    let h: Harness;
    let server: RunningServer;
    let proxied: RunningServer;
    let origin: string;
    let dataDir: string;
    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-oauth-bounds-'));
      server = await startOnFreePorts(h.services, dataDir);
      proxied = await startOnFreePorts(h.services, dataDir, { TRUST_PROXY: 'loopback' });
      origin = server.url;
      await h.services.accounts.setPassword('ada@acme.test', PASSWORD);
    });
    after(async () => {
      await server?.close();
      await proxied?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    /** Each test starts with this address's registrations uncounted. */
    const forgetCounts = () => h.services.deps.db.deleteFrom('sign_in_attempts').execute();

    async function signedInBrowser(): Promise<FakeBrowser> {
      const browser = fakeBrowser(origin);
      await signIn(browser, 'ada@acme.test', PASSWORD);
      return browser;
    }

    async function registered(redirectUris: string[], name?: string): Promise<string> {
      await forgetCounts();
      const res = await register(origin, client(redirectUris, name));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      return res.body.client_id!;
    }

    const consentFor = (
      browser: FakeBrowser,
      clientId: string,
      redirectUri: string,
      scope = 'documents:read',
    ) =>
      authorize(
        browser,
        authorizeUrl(origin, { clientId, redirectUri, challenge: pkcePair().challenge, scope }),
      );

    describe('consent is per redirect URI', () => {
      it('asks again, naming the host, when the same client sends the person to another of its redirect URIs', async () => {
        const clientId = await registered([LOOPBACK, ATTACKER], 'Two Doors');
        const browser = await signedInBrowser();
        const first = await consentFor(browser, clientId, LOOPBACK);
        assert.ok(first.consent, 'the first authorization shows the consent page');
        assert.equal(new URL(first.callback).origin, 'http://127.0.0.1:5999');
        // The same client, the same scope, another redirect URI: the person is asked, and told where.
        const second = await consentFor(browser, clientId, ATTACKER);
        assert.ok(second.consent, 'a consent page for the other redirect URI');
        assert.match(first.consent, /This app can send you back to 2 different addresses/);
        assert.match(first.consent, /This time it is <strong>127\.0\.0\.1:5999<\/strong>/);
        assert.match(second.consent, /This time it is <strong>collector\.example\.net<\/strong>/);
        assert.deepEqual(listedScopes(second.consent), [
          'Read your documents, pages and tables, and their comments',
        ]);
        assert.equal(second.callback.origin, 'https://collector.example.net');
        assert.ok(second.callback.searchParams.get('code'));
        // Each redirect URI holds its own grant now: neither asks again.
        assert.equal((await consentFor(browser, clientId, LOOPBACK)).consent, undefined);
        assert.equal((await consentFor(browser, clientId, ATTACKER)).consent, undefined);
        const apps = await h.services.grants.list(h.actor('ada@acme.test').personId);
        const mine = apps.filter((a) => a.client_id === clientId).map((a) => a.redirect_uri);
        assert.deepEqual(mine.sort(), [ATTACKER, LOOPBACK].sort());
      });

      it('asks again for another path on the same host, but not for a native app’s new loopback port', async () => {
        const clientId = await registered([WEB, WEB_OTHER_PATH, LOOPBACK]);
        const browser = await signedInBrowser();
        assert.ok((await consentFor(browser, clientId, WEB)).consent);
        const other = await consentFor(browser, clientId, WEB_OTHER_PATH);
        assert.ok(other.consent, 'the same host, another redirect URI');
        assert.match(
          other.consent,
          /This time it is <strong>app\.example\.test<\/strong> \(<code>https:\/\/app\.example\.test\/oauth\/elsewhere<\/code>\)/,
        );
        assert.ok((await consentFor(browser, clientId, LOOPBACK)).consent);
        // RFC 8252: the same loopback redirect on another port is the same app on the same machine.
        const moved = await consentFor(browser, clientId, 'http://127.0.0.1:6123/callback');
        assert.equal(moved.consent, undefined);
        assert.equal(moved.callback.origin, 'http://127.0.0.1:6123');
      });

      it('grants only the redirect URI the page named: a form shown for one is not taken for another', async () => {
        const clientId = await registered([LOOPBACK, ATTACKER]);
        const browser = await signedInBrowser();
        // The person is shown the page for the loopback redirect...
        const shown = await browser.follow(
          authorizeUrl(origin, { clientId, redirectUri: LOOPBACK, challenge: pkcePair().challenge }),
        );
        const loopbackForm = consentForm(await shown.text());
        assert.equal(loopbackForm.redirect_shown, LOOPBACK);
        // ...and that answer is posted to an authorization for the other one.
        const other = await browser.follow(
          authorizeUrl(origin, { clientId, redirectUri: ATTACKER, challenge: pkcePair().challenge }),
        );
        const page = await other.text();
        const action = /<form method="post" action="([^"]+)"/.exec(page)![1]!.replaceAll('&#47;', '/');
        const posted = await browser.post(action, { ...loopbackForm, decision: 'allow' });
        assert.equal(posted.status, 200, 'the page is shown again rather than allowed');
        assert.match(await posted.text(), /This time it is <strong>collector\.example\.net<\/strong>/);
        const apps = await h.services.grants.list(h.actor('ada@acme.test').personId);
        assert.equal(apps.filter((a) => a.client_id === clientId).length, 0, 'nothing was granted');
      });
    });

    describe('registration is bounded', () => {
      it('takes what real MCP clients send', async () => {
        await forgetCounts();
        for (const [name, metadata] of Object.entries(REAL_CLIENTS)) {
          const res = await register(origin, metadata);
          assert.equal(res.status, 201, `${name}: ${JSON.stringify(res.body)}`);
        }
      });

      it('refuses metadata past 5 KiB, more than 5 redirect URIs, one past 512 characters or over plain http, storing nothing', async () => {
        await forgetCounts();
        const before = await h.services.deps.db
          .selectFrom('oauth_records')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('model', '=', 'Client')
          .executeTakeFirstOrThrow();
        const large = await register(origin, {
          ...client([LOOPBACK]),
          client_uri: 'https://a.test/',
          pad: 'x'.repeat(6000),
        });
        assert.equal(large.status, 413);
        assert.equal(large.body.error, 'invalid_client_metadata');
        assert.match(large.body.error_description!, /at most 5 KiB/);
        assert.equal(large.headers.get('access-control-allow-origin'), '*', 'a browser client can read why');
        const many = await register(
          origin,
          client(Array.from({ length: 6 }, (_, i) => `http://127.0.0.1:${5000 + i}/cb`)),
        );
        assert.equal(many.status, 400);
        assert.equal(many.body.error, 'invalid_redirect_uri');
        assert.equal(many.body.error_description, 'redirect_uris may hold at most 5 URIs');
        const long = await register(origin, client([`https://app.example.test/${'a'.repeat(520)}`]));
        assert.equal(long.status, 400);
        assert.equal(long.body.error, 'invalid_redirect_uri');
        assert.equal(long.body.error_description, 'redirect_uris may hold URIs of at most 512 characters');
        const plainHttp = await register(origin, client(['http://app.example.test/cb']));
        assert.equal(plainHttp.status, 400);
        assert.equal(
          plainHttp.body.error_description,
          'redirect_uris may use http only for localhost or a loopback address, not http://app.example.test/cb',
        );
        const name = await register(origin, client([LOOPBACK], 'n'.repeat(101)));
        assert.equal(name.status, 400);
        assert.equal(name.body.error, 'invalid_client_metadata');
        assert.equal(name.body.error_description, 'client_name may be at most 100 characters');
        const after = await h.services.deps.db
          .selectFrom('oauth_records')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('model', '=', 'Client')
          .executeTakeFirstOrThrow();
        assert.equal(Number(after.n), Number(before.n));
      });

      it('refuses a chunked registration that declares no length, however small', async () => {
        await forgetCounts();
        assert.equal(await registerChunked(origin, JSON.stringify(client([LOOPBACK]))), 411);
        assert.equal(
          await registerChunked(origin, JSON.stringify({ ...client([LOOPBACK]), pad: 'x'.repeat(60_000) })),
          411,
        );
      });

      it('lets one address register 60 clients an hour, then answers 429 with Retry-After; other addresses go on', async () => {
        await forgetCounts();
        const from = (address: string) => ({ 'x-forwarded-for': address });
        for (let i = 0; i < 60; i++) {
          const res = await register(proxied.url, client([LOOPBACK], `Burst ${i}`), from('203.0.113.20'));
          assert.equal(res.status, 201, `registration ${i + 1}`);
        }
        const refused = await register(proxied.url, client([LOOPBACK], 'One too many'), from('203.0.113.20'));
        assert.equal(refused.status, 429);
        assert.equal(refused.body.error, 'too_many_requests');
        assert.match(
          refused.body.error_description!,
          /^Too many client registrations from this address; try again in \d+ seconds?\.$/,
        );
        assert.ok(Number(refused.headers.get('retry-after')) > 3000);
        // A refused registration is not stored, and another address (or another IPv6 network) registers.
        assert.equal((await register(proxied.url, client([LOOPBACK]), from('198.51.100.20'))).status, 201);
        // Many addresses of one IPv6 /64 count as one.
        for (let i = 0; i < 60; i++)
          await register(proxied.url, client([LOOPBACK]), from(`2001:db8:5:6::${(i + 1).toString(16)}`));
        assert.equal(
          (await register(proxied.url, client([LOOPBACK]), from('2001:db8:5:6:abcd::1'))).status,
          429,
        );
        await forgetCounts();
      });

      it('forgets a registration nobody authorized within 24 hours, and keeps one that was', async () => {
        const idle = await registered([LOOPBACK], 'Never used');
        const used = await registered([LOOPBACK], 'Used');
        const started = await registered([LOOPBACK], 'Started only');
        const row = (id: string) =>
          h.services.deps.db
            .selectFrom('oauth_records')
            .select(['expires_at'])
            .where('model', '=', 'Client')
            .where('id', '=', id)
            .executeTakeFirst();
        const expiresAt = (await row(idle))!.expires_at!;
        assert.ok(Math.abs(expiresAt - (Date.now() + 24 * 3600_000)) < 60_000, 'a day from now');
        const browser = await signedInBrowser();
        assert.ok((await consentFor(browser, used, LOOPBACK)).callback.searchParams.get('code'));
        assert.equal((await row(used))!.expires_at, null, 'authorized: it stays');
        // An authorization that reached the consent page and went no further does not count.
        await browser.follow(
          authorizeUrl(origin, { clientId: started, redirectUri: LOOPBACK, challenge: pkcePair().challenge }),
        );
        assert.notEqual((await row(started))!.expires_at, null);
        // A day passes.
        await h.services.deps.db
          .updateTable('oauth_records')
          .set({ expires_at: Date.now() - 1 })
          .where('model', '=', 'Client')
          .where('expires_at', 'is not', null)
          .execute();
        for (const id of [idle, started]) {
          const res = await browser.follow(
            authorizeUrl(origin, { clientId: id, redirectUri: LOOPBACK, challenge: pkcePair().challenge }),
          );
          assert.equal(res.status, 400, 'an expired registration is an unknown client');
          assert.match(await res.text(), /client/i);
        }
        await h.services.oauth.prune();
        assert.equal(await row(idle), undefined, 'pruned');
        assert.equal(await row(started), undefined, 'pruned');
        assert.ok(await row(used), 'the authorized client stays');
        assert.ok((await consentFor(browser, used, LOOPBACK)).callback.searchParams.get('code'));
      });
    });

    describe('refresh tokens', () => {
      async function tokens() {
        const clientId = await registered([LOOPBACK]);
        const browser = await signedInBrowser();
        const { verifier, challenge } = pkcePair();
        const { callback } = await authorize(
          browser,
          authorizeUrl(origin, { clientId, redirectUri: LOOPBACK, challenge }),
        );
        const got = await exchangeCode(origin, {
          client_id: clientId,
          code: callback.searchParams.get('code')!,
          redirect_uri: LOOPBACK,
          code_verifier: verifier,
        });
        assert.equal(got.status, 200, JSON.stringify(got.body));
        return { clientId, tokens: got.body };
      }

      it('answers a retry within 60 s with the same new pair, however often and however parallel', async () => {
        const { clientId, tokens: t0 } = await tokens();
        const answers = await Promise.all(
          Array.from({ length: 3 }, () => refresh(origin, clientId, t0.refresh_token!)),
        );
        for (const a of answers) assert.equal(a.status, 200, JSON.stringify(a.body));
        assert.equal(new Set(answers.map((a) => a.body.refresh_token)).size, 1, 'one refresh token for all');
        assert.equal(new Set(answers.map((a) => a.body.access_token)).size, 1, 'one access token for all');
        const retry = await refresh(origin, clientId, t0.refresh_token!);
        assert.equal(retry.body.refresh_token, answers[0]!.body.refresh_token);
        const live = await h.services.deps.db
          .selectFrom('oauth_records')
          .select('id')
          .where('model', '=', 'RefreshToken')
          .where('consumed_at', 'is', null)
          .where('client_id', '=', clientId)
          .execute();
        assert.deepEqual(
          live.map((r) => r.id),
          [retry.body.refresh_token],
          'one chain of tokens alive',
        );
        assert.equal((await mcpCall(origin, retry.body.access_token!)).status, 200);
      });

      it('revokes the grant when an older token comes back after its successor was used, even within 60 s', async () => {
        const { clientId, tokens: t0 } = await tokens();
        const t1 = await refresh(origin, clientId, t0.refresh_token!);
        const t2 = await refresh(origin, clientId, t1.body.refresh_token!);
        assert.equal(t2.status, 200);
        // t0 is seconds old, but the pair it was exchanged for was used since: not a retry.
        const reused = await refresh(origin, clientId, t0.refresh_token!);
        assert.equal(reused.status, 400);
        assert.equal(reused.body.error, 'invalid_grant');
        assert.equal((await mcpCall(origin, t2.body.access_token!)).status, 401, 'the grant is gone');
        assert.equal((await refresh(origin, clientId, t2.body.refresh_token!)).status, 400);
      });

      it('revokes the grant when a rotated token comes back after the window, from any client instance', async () => {
        const { clientId, tokens: t0 } = await tokens();
        const t1 = await refresh(origin, clientId, t0.refresh_token!);
        await h.services.deps.db
          .updateTable('oauth_records')
          .set({ consumed_at: Date.now() - 61_000 })
          .where('model', '=', 'RefreshToken')
          .where('id', '=', t0.refresh_token!)
          .execute();
        assert.equal((await refresh(origin, clientId, t0.refresh_token!)).body.error, 'invalid_grant');
        assert.equal((await mcpCall(origin, t1.body.access_token!)).status, 401);
      });
    });
  });
}
