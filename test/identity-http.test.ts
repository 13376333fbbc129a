import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WRONG_CREDENTIALS } from '../src/domains/auth/accounts.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openAppFixture, PASSWORD, type AppFixture } from './support/app-fixture.ts';
import {
  authorizeUrl,
  consentForm,
  fakeBrowser,
  listedScopes,
  pkcePair,
  registerClient,
  signIn,
} from './support/oauth.ts';
import { freePort, startOnFreePorts } from './support/raw-http.ts';

const REDIRECT = 'http://127.0.0.1:5999/callback';
const form = { 'content-type': 'application/x-www-form-urlencoded' };

describe('people sign in, choose a workspace, manage their credentials', () => {
  let f: AppFixture;
  let origin: string;
  before(async () => {
    f = await openAppFixture();
    origin = f.appOrigin;
    await f.withPassword('ada@acme.test');
    await f.withPassword('bob@acme.test');
    // Ada also belongs to a second workspace.
    await importFixture(f.h.services.deps, {
      workspaces: [{ name: 'Side', users: [{ email: 'ada@acme.test', name: 'Ada at Side' }] }],
    });
  });
  after(async () => {
    await f?.close();
  });

  const login = (email: string, password: string, headers: Record<string, string> = {}) =>
    f.send('/login', {
      headers: { ...form, origin, ...headers },
      body: new URLSearchParams({ email, password, next: '/settings' }).toString(),
    });

  it('shows a form with Email, Password and Sign in, and one sentence for any wrong pair', async () => {
    const page = await f.get('/login');
    assert.match(page.body, /<label for="email">Email<\/label>/);
    assert.match(page.body, /<input id="email" name="email" type="email"/);
    assert.match(page.body, /<label for="password">Password<\/label>/);
    assert.match(page.body, /<input id="password" name="password" type="password"/);
    assert.match(page.body, /<button class="primary">Sign in<\/button>/);
    const wrongPassword = await login('bob@acme.test', 'not his password');
    const unknown = await login('nobody@acme.test', PASSWORD);
    for (const res of [wrongPassword, unknown]) {
      assert.equal(res.status, 401);
      assert.equal(res.headers['set-cookie'], undefined);
      assert.match(res.body, new RegExp(`<p class="problem" role="alert">${WRONG_CREDENTIALS}</p>`));
    }
    const strip = (html: string) => html.replace(/value="[^"]*@acme\.test"/, '');
    assert.equal(strip(wrongPassword.body), strip(unknown.body), 'nothing tells the two apart');
  });

  it('sets an HttpOnly, SameSite=Lax session cookie bound to a row, and leads to next', async () => {
    const res = await login('bob@acme.test', PASSWORD);
    assert.equal(res.status, 303);
    assert.equal(res.headers.location, '/settings');
    const cookie = String(res.headers['set-cookie']);
    assert.match(cookie, /^tandem_session=tss_[A-Za-z0-9_-]{43};/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    assert.doesNotMatch(cookie, /Secure/, 'not over plain http');
    const session = cookie.split(';')[0]!;
    const settings = await f.get('/settings', { cookie: session });
    assert.equal(settings.status, 200);
    const me = JSON.parse((await f.get('/api/me', { cookie: session })).body) as { name: string };
    assert.equal(me.name, 'Bob Stone');

    // Signing out deletes the row: the same cookie, replayed, no longer signs anyone in.
    const out = await f.send('/logout', { headers: { cookie: session, origin } });
    assert.equal(out.status, 303);
    const replayed = await f.get('/settings', { cookie: session });
    assert.equal(replayed.status, 302);
    assert.equal(replayed.headers.location, '/login?next=%2Fsettings');
    assert.equal((await f.get('/api/me', { cookie: session })).status, 401);
  });

  it('ends the old session when a browser signs in again', async () => {
    const first = String((await login('bob@acme.test', PASSWORD)).headers['set-cookie']).split(';')[0]!;
    const again = await login('bob@acme.test', PASSWORD, { cookie: first });
    const second = String(again.headers['set-cookie']).split(';')[0]!;
    assert.notEqual(second, first);
    assert.equal((await f.get('/api/me', { cookie: first })).status, 401);
    assert.equal((await f.get('/api/me', { cookie: second })).status, 200);
  });

  it('marks the cookie Secure when PUBLIC_URL is https', async () => {
    const port = await freePort();
    const dataDir = mkdtempSync(join(tmpdir(), 'tandem-https-'));
    const server = await startOnFreePorts(f.h.services, dataDir, {
      PUBLIC_URL: 'https://tandem.example.test',
      PORT: String(port),
      PAGES_PORT: String(await freePort()),
    });
    try {
      const res = await fetch(`http://127.0.0.1:${port}/login`, {
        method: 'POST',
        headers: { ...form, origin: 'https://tandem.example.test' },
        body: new URLSearchParams({ email: 'bob@acme.test', password: PASSWORD }),
        redirect: 'manual',
      });
      assert.equal(res.status, 303);
      assert.match(res.headers.get('set-cookie') ?? '', /; Secure/);
    } finally {
      await server.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('lets a person of several workspaces choose one (a select labelled Workspace) and switch', async () => {
    const res = await login('ada@acme.test', PASSWORD);
    assert.equal(res.status, 303);
    assert.equal(res.headers.location, '/login/workspace?next=%2Fsettings');
    const session = String(res.headers['set-cookie']).split(';')[0]!;
    const chooser = await f.get('/login/workspace?next=%2Fsettings', { cookie: session });
    assert.match(
      chooser.body,
      /<label for="workspace">Workspace<\/label>\n<select id="workspace" name="workspace">/,
    );
    assert.match(chooser.body, />Acme<\/option>/);
    assert.match(chooser.body, />Side<\/option>/);
    const side =
      f.h.ids.Side?.id ?? (await f.h.services.accounts.memberships('ada@acme.test'))[1]!.workspaceId;
    const chosen = await f.send('/login/workspace', {
      headers: { ...form, origin, cookie: session },
      body: new URLSearchParams({ workspace: side, next: '/settings' }).toString(),
    });
    assert.equal(chosen.status, 303);
    assert.equal(chosen.headers.location, '/settings');
    const me = JSON.parse((await f.get('/api/me', { cookie: session })).body) as Record<string, unknown>;
    assert.deepEqual(me.workspace, { workspace_id: side, name: 'Side' });
    assert.equal((me.workspaces as unknown[]).length, 2);

    // The JSON API switches back; a workspace the account is not in is not found.
    const put = (id: string) =>
      f.send('/api/me/workspace', {
        method: 'PUT',
        headers: { 'content-type': 'application/json', origin, cookie: session },
        body: JSON.stringify({ workspace_id: id }),
      });
    assert.equal((await put(f.h.ids.Acme!.id)).status, 200);
    const other = await put(f.h.ids.Other!.id);
    assert.equal(other.status, 404);
    assert.equal((JSON.parse(other.body) as { message: string }).message, 'Workspace not found');
  });

  it('slows repeated failures down with 429 and Retry-After, whatever the e-mail', async () => {
    let last;
    for (let i = 0; i < 6; i++) last = await login('cy@acme.test', `guess ${i}`);
    assert.equal(last!.status, 429);
    assert.match(String(last!.headers['retry-after']), /^\d+$/);
    assert.match(last!.body, /Too many sign-in attempts; try again in \d+ seconds?\./);
    await f.h.services.deps.db.deleteFrom('sign_in_attempts').execute();
  });

  it('refuses cookie-authenticated changes from another origin, and takes them from the app', async () => {
    const session = await f.sessionCookie('bob@acme.test');
    const bob = f.h.actor('bob@acme.test');
    const made = await f.h.services.tokens.create(bob.personId, bob.workspaceId, ['documents:read'], 60_000);
    const revoke = (headers: Record<string, string>) =>
      f.send(`/settings/tokens/${made.tokenId}/revoke`, {
        headers: { cookie: session, ...form, ...headers },
      });
    const forged = await revoke({ origin: 'https://evil.example' });
    assert.equal(forged.status, 403);
    assert.match(forged.body, /did not come from Tandem’s own pages/);
    assert.ok(await f.h.services.tokens.verify(made.token), 'the token still works');
    const api = await f.send(`/api/tokens/${made.tokenId}`, {
      method: 'DELETE',
      headers: { cookie: session, origin: 'https://evil.example' },
    });
    assert.equal(api.status, 403);
    assert.ok(await f.h.services.tokens.verify(made.token), 'the token still works');

    const fromApp = await revoke({ origin });
    assert.equal(fromApp.status, 303);
    assert.equal(fromApp.headers.location, '/settings?done=token');
    assert.equal(await f.h.services.tokens.verify(made.token), null);
  });

  it('keeps credential management to signed-in browsers, and each person to their own', async () => {
    const ada = f.h.actor('ada@acme.test');
    const pat = await f.h.services.tokens.create(ada.personId, ada.workspaceId, ['documents:read'], 60_000);
    const byToken = await f.get('/api/tokens', { authorization: `Bearer ${pat.token}` });
    assert.equal(byToken.status, 403);
    assert.match(byToken.body, /Only a signed-in browser can do this/);
    const bob = await f.sessionCookie('bob@acme.test');
    const other = await f.send(`/api/tokens/${pat.tokenId}`, {
      method: 'DELETE',
      headers: { cookie: bob, origin },
    });
    assert.equal(other.status, 404);
    assert.ok(await f.h.services.tokens.verify(pat.token));
    const mine = JSON.parse(
      (await f.get('/api/tokens', { cookie: await f.sessionCookie('ada@acme.test') })).body,
    ) as {
      tokens: { token_id: string }[];
    };
    assert.ok(mine.tokens.some((t) => t.token_id === pat.tokenId));
  });

  it('changes a password after checking the current one, signing other browsers out', async () => {
    await f.h.services.accounts.setPassword('dee@acme.test', PASSWORD);
    const here = await f.sessionCookie('dee@acme.test');
    const elsewhere = await f.sessionCookie('dee@acme.test');
    const change = (current: string) =>
      f.send('/api/me/password', {
        headers: { 'content-type': 'application/json', origin, cookie: here },
        body: JSON.stringify({ current_password: current, new_password: 'a brand new one' }),
      });
    assert.equal((await change('not it')).status, 403);
    assert.equal((await change(PASSWORD)).status, 200);
    assert.equal((await f.get('/api/me', { cookie: here })).status, 200);
    assert.equal((await f.get('/api/me', { cookie: elsewhere })).status, 401);
    assert.equal(
      (await f.h.services.accounts.signIn('dee@acme.test', 'a brand new one', '10.9.0.1')).length,
      1,
    );
  });

  it('asks a person of several workspaces which one on the consent page, granting only there', async () => {
    const clientId = await registerClient(origin, REDIRECT, 'Two Workspace Client');
    const browser = fakeBrowser(origin);
    await signIn(browser, 'ada@acme.test', PASSWORD);
    const consent = await browser.follow(
      authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge: pkcePair().challenge }),
    );
    const html = await consent.text();
    assert.equal(consent.status, 200);
    assert.match(html, /<label for="workspace">Workspace<\/label>/);
    assert.match(html, /in the <strong>Acme<\/strong> workspace/);
    assert.deepEqual(listedScopes(html), ['Read your documents, pages and tables, and their comments']);
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!;
    const side = (await f.h.services.accounts.memberships('ada@acme.test')).find(
      (m) => m.workspace === 'Side',
    )!;

    // Choosing another workspace shows that workspace first; nothing is granted yet.
    const shown = await browser.post(action, {
      ...consentForm(html),
      workspace: side.workspaceId,
      decision: 'allow',
    });
    assert.equal(shown.status, 200);
    const again = await shown.text();
    assert.match(again, /in the <strong>Side<\/strong> workspace/);
    assert.equal((await f.h.services.grants.list(side.personId)).length, 0);
    const done = await browser.post(action, {
      ...consentForm(again),
      workspace: side.workspaceId,
      decision: 'allow',
    });
    assert.equal(done.status, 303);
    const apps = await f.h.services.grants.list(side.personId);
    assert.deepEqual(
      apps.map((a) => [a.client_name, a.scopes]),
      [['Two Workspace Client', ['documents:read']]],
    );
    assert.equal((await f.h.services.grants.list(f.h.actor('ada@acme.test').personId)).length, 0);
  });

  it('refuses a consent posted from another origin', async () => {
    const clientId = await registerClient(origin, REDIRECT);
    const browser = fakeBrowser(origin);
    await signIn(browser, 'bob@acme.test', PASSWORD);
    const consent = await browser.follow(
      authorizeUrl(origin, { clientId, redirectUri: REDIRECT, challenge: pkcePair().challenge }),
    );
    const html = await consent.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)![1]!;
    const forged = await fetch(new URL(action, origin), {
      method: 'POST',
      headers: { ...form, origin: 'https://evil.example', cookie: browser.jar.header() },
      body: new URLSearchParams({ ...consentForm(html), decision: 'allow' }),
      redirect: 'manual',
    });
    assert.equal(forged.status, 403);
    assert.equal((await f.h.services.grants.list(f.h.actor('bob@acme.test').personId)).length, 0);
  });
});
