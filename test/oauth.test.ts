import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import {
  authorize,
  authorizeUrl,
  exchangeCode,
  fakeBrowser,
  listedScopes,
  mcpCall,
  pkcePair,
  refresh,
  registerClient,
  serveClientDocument,
  signIn,
  type FakeBrowser,
} from './support/oauth.ts';
import { freePort, startOnFreePorts } from './support/raw-http.ts';

const PASSWORD = 'correct horse battery';
const REDIRECT = 'http://127.0.0.1:5999/callback';

for (const db of DATABASES) {
  describe(`OAuth 2.1 for MCP clients (${db.name})`, () => {
    let h: Harness;
    let server: RunningServer;
    let origin: string;
    let dataDir: string;
    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-oauth-'));
      server = await startOnFreePorts(h.services, dataDir);
      origin = server.url;
      await h.services.accounts.setPassword('ada@acme.test', PASSWORD);
    });
    after(async () => {
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    async function signedInBrowser(): Promise<FakeBrowser> {
      const browser = fakeBrowser(origin);
      await signIn(browser, 'ada@acme.test', PASSWORD);
      return browser;
    }

    /** A code for a fresh DCR client, through sign-in and consent; with the verifier that redeems it. */
    async function codeFor(scope = 'documents:read', clientId?: string) {
      const client = clientId ?? (await registerClient(origin, REDIRECT));
      const { verifier, challenge } = pkcePair();
      const browser = await signedInBrowser();
      const { callback, consent } = await authorize(
        browser,
        authorizeUrl(origin, { clientId: client, redirectUri: REDIRECT, challenge, scope }),
      );
      const code = callback.searchParams.get('code');
      assert.ok(code, `a code in ${callback.href}`);
      return { clientId: client, code, verifier, callback, consent, browser };
    }

    async function tokensFor(scope = 'documents:read') {
      const got = await codeFor(scope);
      const tokens = await exchangeCode(origin, {
        client_id: got.clientId,
        code: got.code,
        redirect_uri: REDIRECT,
        code_verifier: got.verifier,
      });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      return { ...got, tokens: tokens.body };
    }

    it('publishes RFC 8414 and RFC 9728 metadata with what clients need', async () => {
      const as = (await (await fetch(`${origin}/.well-known/oauth-authorization-server`)).json()) as Record<
        string,
        unknown
      >;
      assert.equal(as.issuer, origin);
      assert.equal(as.authorization_endpoint, `${origin}/oauth/authorize`);
      assert.equal(as.token_endpoint, `${origin}/oauth/token`);
      assert.equal(as.registration_endpoint, `${origin}/oauth/register`);
      assert.equal(as.revocation_endpoint, `${origin}/oauth/revoke`);
      assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
      assert.ok((as.token_endpoint_auth_methods_supported as string[]).includes('none'));
      assert.equal(as.client_id_metadata_document_supported, true);
      assert.equal(as.authorization_response_iss_parameter_supported, true);
      assert.deepEqual(as.scopes_supported, [
        'automations:read',
        'automations:write',
        'documents:read',
        'documents:write',
      ]);
      const res = await fetch(`${origin}/.well-known/oauth-protected-resource/mcp`);
      const pr = (await res.json()) as Record<string, unknown>;
      assert.equal(pr.resource, `${origin}/mcp`);
      assert.deepEqual(pr.authorization_servers, [origin]);
      // Every scope the resource knows; the 401 challenge names the one to start with.
      assert.deepEqual(pr.scopes_supported, [
        'automations:read',
        'automations:write',
        'documents:read',
        'documents:write',
      ]);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    });

    it('lets clients that run in a browser discover, register and redeem codes across origins', async () => {
      const from = { origin: 'http://localhost:6274' };
      for (const path of [
        '/.well-known/oauth-authorization-server',
        '/.well-known/oauth-protected-resource/mcp',
      ]) {
        const res = await fetch(`${origin}${path}`, { headers: from });
        assert.ok(res.headers.get('access-control-allow-origin'), path);
      }
      const preflight = await fetch(`${origin}/oauth/register`, {
        method: 'OPTIONS',
        headers: {
          ...from,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type',
        },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get('access-control-allow-origin'), '*');
      assert.match(preflight.headers.get('access-control-allow-headers') ?? '', /content-type/);
      const registered = await fetch(`${origin}/oauth/register`, {
        method: 'POST',
        headers: { ...from, 'content-type': 'application/json' },
        body: JSON.stringify({
          client_name: 'In a browser',
          redirect_uris: ['http://localhost:6274/oauth/callback'],
        }),
      });
      assert.equal(registered.status, 201);
      assert.equal(registered.headers.get('access-control-allow-origin'), '*');
      // The token endpoint answers CORS for the origins of the client's own redirect URIs.
      const token = await fetch(`${origin}/oauth/token`, {
        method: 'OPTIONS',
        headers: { ...from, 'access-control-request-method': 'POST' },
      });
      assert.equal(token.headers.get('access-control-allow-origin'), 'http://localhost:6274');
    });

    it('answers /mcp without a token, or with a bad one, 401 naming the metadata and a first scope', async () => {
      for (const headers of [{}, { authorization: 'Bearer not-a-token' }] as Record<string, string>[]) {
        const res = await fetch(`${origin}/mcp`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...headers },
          body: '{}',
        });
        assert.equal(res.status, 401);
        const challenge = res.headers.get('www-authenticate') ?? '';
        assert.match(challenge, /^Bearer /);
        assert.match(
          challenge,
          new RegExp(`resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`),
        );
        assert.match(challenge, /scope="documents:read"/);
      }
    });

    it('gives a DCR client a token that works on /mcp and acts as the person; refuses a code used twice', async () => {
      const { clientId, code, verifier, consent, callback, tokens } = await tokensFor();
      assert.deepEqual(listedScopes(consent ?? ''), [
        'Read your documents, pages and tables, and their comments',
      ]);
      assert.equal(callback.searchParams.get('iss'), origin, 'iss in the redirect (RFC 9207)');
      assert.equal(callback.searchParams.get('state'), 'st-1');
      assert.equal(tokens.scope, 'documents:read');
      assert.equal(tokens.token_type, 'Bearer');
      assert.equal(Number(tokens.expires_in), 3600);
      assert.ok(tokens.refresh_token, 'a refresh token');
      const call = await mcpCall(origin, tokens.access_token!, 'tools/call', {
        name: 'list_documents',
        arguments: { scope: 'mine' },
      });
      assert.equal(call.status, 200, call.text);
      assert.match(call.text, /Private plan/, 'Ada’s own private document: the token acts as Ada');

      const again = await exchangeCode(origin, {
        client_id: clientId,
        code,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      assert.equal(again.status, 400);
      assert.equal(again.body.error, 'invalid_grant');
      // A code presented twice revokes what the first exchange issued (RFC 6749 §4.1.2).
      assert.equal((await mcpCall(origin, tokens.access_token!)).status, 401);
    });

    it('requires PKCE with S256 and refuses a wrong verifier', async () => {
      const clientId = await registerClient(origin, REDIRECT);
      const browser = await signedInBrowser();
      for (const [label, challenge, method] of [
        ['no challenge', undefined, undefined],
        ['plain', 'a'.repeat(43), 'plain'],
      ] as const) {
        const res = await browser.follow(
          authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge, method: method ?? 'S256' }),
        );
        assert.equal(res.status, 303, label);
        const back = new URL(res.headers.get('location')!);
        assert.equal(back.origin + back.pathname, REDIRECT, label);
        assert.equal(back.searchParams.get('error'), 'invalid_request', label);
        assert.equal(back.searchParams.get('iss'), origin, label);
      }
      const got = await codeFor('documents:read', clientId);
      const wrong = await exchangeCode(origin, {
        client_id: clientId,
        code: got.code,
        redirect_uri: REDIRECT,
        code_verifier: pkcePair().verifier,
      });
      assert.equal(wrong.status, 400);
      assert.equal(wrong.body.error, 'invalid_grant');
      const none = await exchangeCode(origin, {
        client_id: clientId,
        code: got.code,
        redirect_uri: REDIRECT,
      });
      assert.equal(none.status, 400);
    });

    it('refuses a redirect URI the client did not register, without redirecting to it', async () => {
      const clientId = await registerClient(origin, REDIRECT);
      const browser = await signedInBrowser();
      // Exact match; the one latitude is RFC 8252's for native apps: a loopback IP's port may vary.
      for (const foreign of [
        'https://evil.example/callback',
        `${REDIRECT}/more`,
        `${REDIRECT}?x=1`,
        'http://localhost:5999/callback',
        'https://127.0.0.1:5999/callback',
      ]) {
        const res = await browser.follow(
          authorizeUrl(origin, { clientId, redirectUri: foreign, challenge: pkcePair().challenge }),
        );
        assert.equal(res.status, 400, foreign);
        assert.equal(res.headers.get('location'), null, foreign);
        assert.match(await res.text(), /redirect_uri/, foreign);
      }
      // The token endpoint checks it too.
      const got = await codeFor('documents:read', clientId);
      const res = await exchangeCode(origin, {
        client_id: clientId,
        code: got.code,
        redirect_uri: 'http://127.0.0.1:5999/other',
        code_verifier: got.verifier,
      });
      assert.equal(res.body.error, 'invalid_grant');
    });

    it('binds tokens to /mcp: another resource is refused, and a token for another audience is invalid', async () => {
      const clientId = await registerClient(origin, REDIRECT);
      const browser = await signedInBrowser();
      const res = await browser.follow(
        authorizeUrl(origin, {
          clientId,
          redirectUri: REDIRECT,
          challenge: pkcePair().challenge,
          resource: 'https://elsewhere.example/api',
        }),
      );
      const back = new URL(res.headers.get('location')!);
      assert.equal(back.searchParams.get('error'), 'invalid_target');

      // An access token (as the server stores them) whose audience is not /mcp.
      const { tokens } = await tokensFor();
      const stored = await h.services.oauth.find('AccessToken', tokens.access_token!);
      assert.ok(stored);
      await h.services.oauth.upsert(
        'AccessToken',
        'foreign-audience-token',
        {
          ...stored,
          jti: 'foreign-audience-token',
          aud: 'https://elsewhere.example/api',
        },
        3600,
      );
      const foreign = await mcpCall(origin, 'foreign-audience-token');
      assert.equal(foreign.status, 401);
      assert.match(foreign.challenge ?? '', /error="invalid_token"/);
      assert.equal((await mcpCall(origin, tokens.access_token!)).status, 200, 'the real one works');
    });

    it('redirects a Deny with error=access_denied and iss', async () => {
      const clientId = await registerClient(origin, REDIRECT);
      const browser = await signedInBrowser();
      const { callback } = await authorize(
        browser,
        authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge: pkcePair().challenge }),
        'deny',
      );
      assert.equal(callback.searchParams.get('error'), 'access_denied');
      assert.equal(callback.searchParams.get('iss'), origin);
      assert.equal(callback.searchParams.get('code'), null);
    });

    it('steps up: 403 names the granted and needed scopes; consent lists only the new one; the new token works', async () => {
      const first = await tokensFor('documents:read');
      const create = { name: 'create_page', arguments: { title: 'Stepped up', html: '<p>Hi</p>' } };
      const refused = await mcpCall(origin, first.tokens.access_token!, 'tools/call', create);
      assert.equal(refused.status, 403);
      assert.match(refused.challenge ?? '', /error="insufficient_scope"/);
      assert.match(refused.challenge ?? '', /scope="documents:read documents:write"/);
      assert.match(refused.challenge ?? '', /resource_metadata="/);
      // What SDK clients show as the error: the tool and the scope it needs.
      assert.match(
        refused.challenge ?? '',
        /error_description="create_page needs the documents:write scope"/,
      );
      assert.equal(
        (JSON.parse(refused.text) as { error_description: string }).error_description,
        'create_page needs the documents:write scope',
      );

      const { verifier, challenge } = pkcePair();
      const { callback, consent } = await authorize(
        first.browser,
        authorizeUrl(origin, {
          clientId: first.clientId,
          redirectUri: REDIRECT,
          challenge,
          scope: 'documents:read documents:write',
        }),
      );
      assert.deepEqual(listedScopes(consent ?? ''), [
        'Create and change documents and pages, and comment on them',
      ]);
      const second = await exchangeCode(origin, {
        client_id: first.clientId,
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      assert.equal(second.body.scope, 'documents:read documents:write');
      const made = await mcpCall(origin, second.body.access_token!, 'tools/call', create);
      assert.equal(made.status, 200, made.text);
      assert.match(made.text, /Created page Stepped up/);

      // Asking again for what was granted shows no consent page at all.
      const third = await authorize(
        first.browser,
        authorizeUrl(origin, {
          clientId: first.clientId,
          redirectUri: REDIRECT,
          challenge: pkcePair().challenge,
          scope: 'documents:write',
        }),
      );
      assert.equal(third.consent, undefined);
      assert.ok(third.callback.searchParams.get('code'));
    });

    it('gives a request without scope the first scope, documents:read, as the 401 challenge names', async () => {
      const clientId = await registerClient(origin, REDIRECT);
      const { verifier, challenge } = pkcePair();
      const browser = await signedInBrowser();
      const { callback, consent } = await authorize(
        browser,
        authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge, scope: null }),
      );
      assert.deepEqual(listedScopes(consent ?? ''), [
        'Read your documents, pages and tables, and their comments',
      ]);
      const tokens = await exchangeCode(origin, {
        client_id: clientId,
        code: callback.searchParams.get('code')!,
        redirect_uri: REDIRECT,
        code_verifier: verifier,
      });
      assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
      assert.equal(tokens.body.scope, 'documents:read');
      const listed = await mcpCall(origin, tokens.body.access_token!);
      assert.equal(listed.status, 200, listed.text);
    });

    it('signed out with the grant still held, sign-in goes on by a GET and ends at the client with no consent', async () => {
      const first = await tokensFor('documents:read');
      const browser = fakeBrowser(origin); // another browser: nobody signed in, the grant stands
      const { challenge } = pkcePair();
      const url = authorizeUrl(origin, { clientId: first.clientId, redirectUri: REDIRECT, challenge });
      const login = await browser.follow(url);
      const loginPage = await login.text();
      assert.match(loginPage, /Sign in to Tandem/);
      const asked = /name="next" value="([^"]+)"/.exec(loginPage)?.[1]?.replaceAll('&#47;', '/') ?? '';
      assert.ok(asked.startsWith('/consent/'), loginPage);
      const posted = await browser.post('/login', {
        email: 'ada@acme.test',
        password: PASSWORD,
        next: asked,
      });
      assert.equal(posted.status, 303);
      // The form's redirect stays on the sign-in pages (form-action 'self' holds there) ...
      const continuation = new URL(posted.headers.get('location')!, origin);
      assert.equal(continuation.pathname, '/login/continue');
      const page = await browser.get(continuation.href);
      assert.equal(page.status, 200);
      const next = /^0;url=(.+)$/.exec(page.headers.get('refresh') ?? '')?.[1] ?? '';
      assert.ok(next.startsWith('/consent/'), `Refresh: ${page.headers.get('refresh')}`);
      assert.match(await page.text(), /<a href="\/consent\/[^"]+">Continue<\/a>/);
      // ... and a fresh GET from that page reaches the client without asking again.
      const back = await browser.follow(next);
      assert.equal(back.status, 303);
      const callback = new URL(back.headers.get('location')!);
      assert.equal(callback.origin + callback.pathname, REDIRECT);
      assert.ok(callback.searchParams.get('code'));
    });

    it('rotates refresh tokens: a retry within 60 s gets the same new pair, reuse after it revokes the grant', async () => {
      const { clientId, tokens } = await tokensFor();
      const first = await refresh(origin, clientId, tokens.refresh_token!);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.notEqual(first.body.refresh_token, tokens.refresh_token);
      // The answer was lost: the client presents the same refresh token again at once, and again.
      for (const attempt of [1, 2]) {
        const retry = await refresh(origin, clientId, tokens.refresh_token!);
        assert.equal(retry.status, 200, JSON.stringify(retry.body));
        assert.equal(
          retry.body.refresh_token,
          first.body.refresh_token,
          `retry ${attempt}: the same refresh token`,
        );
        assert.equal(
          retry.body.access_token,
          first.body.access_token,
          `retry ${attempt}: the same access token`,
        );
        assert.ok(Number(retry.body.expires_in) <= 3600 && Number(retry.body.expires_in) > 3500);
      }
      assert.equal((await mcpCall(origin, first.body.access_token!)).status, 200);
      const next = await refresh(origin, clientId, first.body.refresh_token!);
      assert.equal(next.status, 200, JSON.stringify(next.body));

      // Presented again after the window: theft. The whole grant goes.
      await h.services.deps.db
        .updateTable('oauth_records')
        .set({ consumed_at: Date.now() - 61_000 })
        .where('model', '=', 'RefreshToken')
        .where('id', '=', first.body.refresh_token!)
        .execute();
      const reused = await refresh(origin, clientId, first.body.refresh_token!);
      assert.equal(reused.status, 400);
      assert.equal(reused.body.error, 'invalid_grant');
      assert.equal((await mcpCall(origin, next.body.access_token!)).status, 401);
      assert.equal((await refresh(origin, clientId, next.body.refresh_token!)).status, 400);
    });

    it('revokes an access token or a refresh token by RFC 7009', async () => {
      const { clientId, tokens } = await tokensFor();
      const revoke = (token: string) =>
        fetch(`${origin}/oauth/revoke`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ token, client_id: clientId }),
        });
      assert.equal((await mcpCall(origin, tokens.access_token!)).status, 200);
      assert.equal((await revoke(tokens.access_token!)).status, 200);
      assert.equal((await mcpCall(origin, tokens.access_token!)).status, 401);
      assert.equal((await revoke(tokens.refresh_token!)).status, 200);
      assert.equal((await refresh(origin, clientId, tokens.refresh_token!)).status, 400);
      assert.equal((await revoke('never-issued')).status, 200, 'an unknown token is not an error');
    });

    it('lets a Client ID Metadata Document on this machine stand for the client', async () => {
      const doc = await serveClientDocument((id) => ({
        client_id: id,
        client_name: 'Metadata Client',
        redirect_uris: [REDIRECT],
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
      }));
      try {
        const got = await codeFor('documents:read', doc.clientId);
        assert.match(got.consent ?? '', /Metadata Client/);
        assert.match(got.consent ?? '', /127\.0\.0\.1:5999/, 'the redirect host');
        const tokens = await exchangeCode(origin, {
          client_id: doc.clientId,
          code: got.code,
          redirect_uri: REDIRECT,
          code_verifier: got.verifier,
        });
        assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
        assert.equal((await mcpCall(origin, tokens.body.access_token!)).status, 200);
        assert.ok(doc.hits() >= 1);
      } finally {
        await doc.close();
      }
    });

    it('refuses a loopback client document once Tandem itself is not on loopback', async () => {
      const doc = await serveClientDocument((id) => ({ client_id: id, redirect_uris: [REDIRECT] }));
      const port = await freePort();
      const publicServer = await startOnFreePorts(h.services, dataDir, {
        PUBLIC_URL: 'https://tandem.example.test',
        PORT: String(port),
        PAGES_PORT: String(await freePort()),
      });
      try {
        const res = await fetch(
          authorizeUrl(`http://127.0.0.1:${port}`, {
            clientId: doc.clientId,
            redirectUri: REDIRECT,
            challenge: pkcePair().challenge,
          }),
          { redirect: 'manual' },
        );
        // Served on this port, answering as https://tandem.example.test.
        assert.equal(res.status, 400);
        assert.equal(doc.hits(), 0, 'the document was never fetched');
      } finally {
        await publicServer.close();
        await doc.close();
      }
    });

    it('fetches client documents without following redirects, past 5 KiB or after 2.5 s', async () => {
      let hits = 0;
      let slowDone = () => {};
      const stub = createServer((req, res) => {
        hits++;
        if (req.url === '/redirect.json') {
          res.writeHead(302, { location: '/client.json' }).end();
        } else if (req.url === '/large.json') {
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ client_id: `${base}/large.json`, pad: 'x'.repeat(6000) }));
        } else if (req.url === '/slow.json') {
          slowDone = () => res.end('{}');
        } else {
          res.end('{}');
        }
      });
      await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
      const base = `http://127.0.0.1:${(stub.address() as { port: number }).port}`;
      const browser = await signedInBrowser();
      try {
        for (const path of ['/redirect.json', '/large.json', '/slow.json']) {
          const started = Date.now();
          const res = await browser.follow(
            authorizeUrl(origin, {
              clientId: `${base}${path}`,
              redirectUri: REDIRECT,
              challenge: pkcePair().challenge,
            }),
          );
          assert.equal(res.status, 400, path);
          assert.equal(res.headers.get('location'), null, path);
          assert.ok(Date.now() - started < 5000, `${path} gave up in time`);
        }
        // Neither an http client id off this machine nor a credential in the URL is fetched.
        const before = hits;
        for (const id of ['http://tandem-client.example/client.json', `http://user:pw@127.0.0.1:1/c.json`]) {
          const res = await browser.follow(
            authorizeUrl(origin, { clientId: id, redirectUri: REDIRECT, challenge: pkcePair().challenge }),
          );
          assert.equal(res.status, 400, id);
        }
        assert.equal(hits, before);
      } finally {
        slowDone();
        await new Promise<void>((resolve) => stub.close(() => resolve()));
      }
    });
  });
}
