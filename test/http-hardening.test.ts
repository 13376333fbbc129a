import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Scope } from '../src/domains/workspace/actor.ts';
import type { RunningServer } from '../src/server.ts';
import { openAppFixture, PASSWORD, type AppFixture } from './support/app-fixture.ts';
import { acme, type Harness } from './support/harness.ts';
import { rawRequest, type RawRequest } from './support/raw-http.ts';

describe('the app origin against cross-site requests, open redirects, missing scopes and bad queries', () => {
  let f: AppFixture;
  let h: Harness;
  let server: RunningServer;
  let appOrigin: string;
  before(async () => {
    f = await openAppFixture();
    ({ h, server, appOrigin } = f);
  });
  after(async () => {
    await f?.close();
  });
  const tokenFor = (email: string, scopes?: Scope[]) => f.tokenFor(email, scopes);
  const send = (path: string, options?: RawRequest) => f.send(path, options);
  const get = (path: string, headers?: Record<string, string>) => f.get(path, headers);
  const pendingApproval = () => f.pendingApproval();
  const approvalStatus = (id: string) => f.approvalStatus(id);
  const approve = (id: string, headers: Record<string, string>, body = '{"decision":"approve"}') =>
    send(`/api/approvals/${id}`, { headers, body });

  describe('cross-site requests', () => {
    it('refuses a cookie-authenticated POST from another origin, or from nowhere said, with 403', async () => {
      const id = await pendingApproval();
      const session = await f.sessionCookie('ada@acme.test');
      const port = new URL(server.url).port;
      const refused: [string, Record<string, string>][] = [
        ['another site', { origin: 'https://evil.example' }],
        ['another port of the same host', { origin: `http://127.0.0.1:${Number(port) + 7}` }],
        ['https on the same host and port', { origin: `https://127.0.0.1:${port}` }],
        ['an opaque origin', { origin: 'null' }],
        ['no Origin and no Sec-Fetch-Site', {}],
        ['Sec-Fetch-Site cross-site', { 'sec-fetch-site': 'cross-site' }],
        ['Sec-Fetch-Site same-site', { 'sec-fetch-site': 'same-site' }],
        ['Sec-Fetch-Site none', { 'sec-fetch-site': 'none' }],
        [
          'a foreign Origin even with Sec-Fetch-Site same-origin',
          { origin: 'https://evil.example', 'sec-fetch-site': 'same-origin' },
        ],
        // DNS rebinding: the attacker's name points at this server, so Host and Origin agree.
        ['a rebound host name', { host: `evil.example:${port}`, origin: `http://evil.example:${port}` }],
      ];
      for (const [label, headers] of refused) {
        const res = await approve(id, { cookie: session, 'content-type': 'application/json', ...headers });
        assert.equal(res.status, 403, label);
        const body = JSON.parse(res.body) as { error: string; message: string };
        assert.equal(body.error, 'cross_site', label);
        assert.match(body.message, /own pages/, label);
      }
      assert.equal(await approvalStatus(id), 'pending');

      const sameOrigin = await approve(id, {
        cookie: session,
        'content-type': 'application/json',
        origin: appOrigin,
      });
      assert.equal(sameOrigin.status, 200, sameOrigin.body);
      assert.equal(await approvalStatus(id), 'approved');
    });

    it('accepts Sec-Fetch-Site: same-origin without Origin, and the request’s own allowed host', async () => {
      const session = await f.sessionCookie('ada@acme.test');
      const first = await pendingApproval();
      const fetchMetadata = await approve(first, {
        cookie: session,
        'content-type': 'application/json',
        'sec-fetch-site': 'same-origin',
      });
      assert.equal(fetchMetadata.status, 200, fetchMetadata.body);

      // Opened as http://localhost:PORT while PUBLIC_URL names 127.0.0.1: the same server, its own origin.
      const second = await pendingApproval();
      const port = new URL(server.url).port;
      const viaLocalhost = await approve(second, {
        cookie: session,
        'content-type': 'application/json',
        host: `localhost:${port}`,
        origin: `http://localhost:${port}`,
      });
      assert.equal(viaLocalhost.status, 200, viaLocalhost.body);
    });

    it('exempts bearer-token requests, which a browser cannot forge across sites', async () => {
      const id = await pendingApproval();
      const res = await approve(id, {
        authorization: `Bearer ${await tokenFor('ada@acme.test')}`,
        'content-type': 'application/json',
        origin: 'https://evil.example',
      });
      assert.equal(res.status, 200, res.body);
    });

    it('refuses a cross-site sign-in (login CSRF) and sets no cookie', async () => {
      await f.withPassword('ada@acme.test');
      const form = new URLSearchParams({ email: 'ada@acme.test', password: PASSWORD, next: '/' }).toString();
      const type = { 'content-type': 'application/x-www-form-urlencoded' };
      const attempts: Record<string, string>[] = [
        { origin: 'https://evil.example' },
        {},
        { 'sec-fetch-site': 'cross-site' },
      ];
      for (const headers of attempts) {
        const res = await send('/login', { headers: { ...type, ...headers }, body: form });
        assert.equal(res.status, 403, JSON.stringify(headers));
        assert.equal(res.headers['set-cookie'], undefined);
        assert.match(res.body, /own pages/);
      }
      const ok = await send('/login', { headers: { ...type, origin: appOrigin }, body: form });
      assert.equal(ok.status, 303);
      assert.match(String(ok.headers['set-cookie']), /tandem_session=/);
    });

    it('signs out only by POST /logout from the app’s own pages', async () => {
      const session = await f.sessionCookie('ada@acme.test');
      // The app (drawn by its script) signs out with the same POST form; its page has no link that does.
      const home = await get('/', { cookie: session });
      assert.equal(home.status, 200);
      assert.ok(!home.body.includes('href="/logout"'), 'no link signs out');

      const page = await get('/logout', { cookie: session });
      assert.equal(page.status, 200);
      assert.equal(page.headers['set-cookie'], undefined, 'GET /logout does not sign out');
      assert.match(page.body, /<form method="post" action="\/logout"><button>Sign out<\/button><\/form>/);

      const forged = await send('/logout', {
        headers: { cookie: session, origin: 'https://evil.example' },
      });
      assert.equal(forged.status, 403);
      assert.equal(forged.headers['set-cookie'], undefined);

      const out = await send('/logout', { headers: { cookie: session, origin: appOrigin } });
      assert.equal(out.status, 303);
      assert.equal(out.headers.location, '/login');
      assert.match(String(out.headers['set-cookie']), /tandem_session=;.*Max-Age=0/);
    });

    it('forbids framing every app page, and leaves the pages origin its own policy', async () => {
      const session = await f.sessionCookie('ada@acme.test');
      await pendingApproval();
      const paths = [
        '/',
        '/login',
        '/login?next=/pages/x',
        '/logout',
        `/pages/${acme(h).artifacts.landing}`,
        '/pages/pg_unknown',
        `/automations/${f.automationIds[0]}`,
        '/automations/aut_unknown',
      ];
      for (const path of paths) {
        const res = await get(path, { cookie: session });
        assert.match(res.headers['content-type'] ?? '', /text\/html/, path);
        assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/, path);
        assert.equal(res.headers['x-frame-options'], 'DENY', path);
      }
      // The app's page viewer frames the link its API gives out.
      const frame = await get(`/api/pages/${acme(h).artifacts.landing}`, { cookie: session });
      const src = (JSON.parse(frame.body) as { frame?: { src?: string } }).frame?.src;
      assert.ok(src, 'the viewer frames the page');
      const framed = await rawRequest(src, { method: 'GET' });
      assert.equal(framed.status, 200);
      assert.match(
        String(framed.headers['content-security-policy']),
        new RegExp(`frame-ancestors ${appOrigin}`),
      );
      assert.equal(framed.headers['x-frame-options'], undefined);
    });
  });

  describe('where a sign-in may lead', () => {
    before(() => f.withPassword('ada@acme.test'));
    const signIn = async (next: string) => {
      const res = await send('/login', {
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: appOrigin },
        body: new URLSearchParams({ email: 'ada@acme.test', password: PASSWORD, next }).toString(),
      });
      assert.equal(res.status, 303, `${JSON.stringify(next)}: ${res.body}`);
      return String(res.headers.location);
    };

    it('never leaves the app, however next is written', async () => {
      const nasty = [
        '/\\127.0.0.1:9902/x',
        '/\t/evil.example',
        '/\n/evil.example',
        '/\r\n/evil.example',
        '\t//evil.example',
        '//evil.example',
        '///evil.example',
        '/\\evil.example',
        '\\\\evil.example',
        '\\/evil.example',
        '/.//evil.example',
        '/..//evil.example',
        '/%2F/../..//evil.example',
        '//evil.example/%2F..',
        'https://evil.example/',
        'https:evil.example',
        'https:/evil.example',
        'http://127.0.0.1:9902/x',
        'javascript:alert(1)',
        'JaVaScRiPt:alert(1)',
        'java\tscript:alert(1)',
        'data:text/html,<script>alert(1)</script>',
        ' //evil.example',
        '//evil.example\u3002',
        '/\u2028/evil.example',
      ];
      for (const next of nasty) {
        const location = await signIn(next);
        const resolved = new URL(location, server.url);
        assert.equal(resolved.origin, appOrigin, `${JSON.stringify(next)} led to ${location}`);
        assert.ok(!location.startsWith('//'), `${JSON.stringify(next)} led to ${location}`);
        assert.ok(!/[\\\t\r\n]/.test(location), `${JSON.stringify(next)} led to ${JSON.stringify(location)}`);
      }
      for (const next of [
        '//evil.example',
        '/\\127.0.0.1:9902/x',
        '/\t/evil.example',
        'https://evil.example/',
      ]) {
        assert.equal(await signIn(next), '/', JSON.stringify(next));
      }
      // %2F%2F is a path on the app, not a host: it stays on the app, still encoded.
      assert.equal(await signIn('%2F%2Fevil.example'), '/%2F%2Fevil.example');
    });

    it('keeps a path on the app, its query and fragment', async () => {
      assert.equal(await signIn('/pages/pg_1?x=1&y=%2F#top'), '/pages/pg_1?x=1&y=%2F#top');
      assert.equal(await signIn(`${appOrigin}/automations/aut_1`), '/automations/aut_1');
      assert.equal(await signIn(''), '/');
    });

    it('puts only a safe next into the sign-in form', async () => {
      const page = await get(`/login?next=${encodeURIComponent('/\\evil.example')}`);
      assert.match(page.body, /name="next" value="\/"/);
      const good = await get(`/login?next=${encodeURIComponent('/pages/pg_1')}`);
      assert.match(good.body, /name="next" value="\/pages\/pg_1"/);
    });
  });

  describe('scopes on every route', () => {
    it('needs documents:read for a page and for notifications', async () => {
      const automationsOnly = await tokenFor('ada@acme.test', ['automations:read']);
      const page = await get(`/api/pages/${acme(h).artifacts.landing}`, {
        authorization: `Bearer ${automationsOnly}`,
      });
      assert.equal(page.status, 403);
      assert.match(page.body, /documents:read/);
      assert.ok(!page.body.includes('Landing'), 'the refusal shows nothing of the page');
      const notifications = await get('/api/notifications', { authorization: `Bearer ${automationsOnly}` });
      assert.equal(notifications.status, 403);
      assert.deepEqual(JSON.parse(notifications.body), {
        error: 'insufficient_scope',
        message: 'This needs the documents:read scope.',
      });

      const reader = await tokenFor('ada@acme.test', ['documents:read']);
      assert.equal(
        (await get(`/api/pages/${acme(h).artifacts.landing}`, { authorization: `Bearer ${reader}` })).status,
        200,
      );
      assert.equal((await get('/api/notifications', { authorization: `Bearer ${reader}` })).status, 200);
    });

    it('needs documents:read and automations:read for the activity history', async () => {
      for (const scopes of [['automations:read'], ['documents:read']] as Scope[][]) {
        const res = await get('/api/activity', {
          authorization: `Bearer ${await tokenFor('ada@acme.test', scopes)}`,
        });
        assert.equal(res.status, 403, scopes.join());
        assert.deepEqual(JSON.parse(res.body), {
          error: 'insufficient_scope',
          message: 'This needs the documents:read and automations:read scopes.',
        });
      }
      const both = await tokenFor('ada@acme.test', ['documents:read', 'automations:read']);
      assert.equal((await get('/api/activity', { authorization: `Bearer ${both}` })).status, 200);
    });
  });

  describe('query parameters', () => {
    it('answers a bad limit with 400 naming it and what it must be', async () => {
      const bearer = { authorization: `Bearer ${await tokenFor('ada@acme.test')}` };
      const params: Record<string, string> = {
        '/api/activity': 'limit, tool, outcome, before, via',
        '/api/notifications': 'limit',
      };
      for (const path of ['/api/activity', '/api/notifications']) {
        for (const query of ['abc', '0', '101', '-1', '1.5', '', '1e2', '0x10', '%205', '5&limit=6']) {
          const res = await get(`${path}?limit=${query}`, bearer);
          assert.equal(res.status, 400, `${path}?limit=${query}`);
          const body = JSON.parse(res.body) as { error: string; message: string };
          assert.equal(body.error, 'invalid_argument');
          assert.equal(
            body.message,
            query === '5&limit=6' ? 'limit must be given once' : 'limit must be an integer from 1 to 100',
          );
        }
        const unknown = await get(`${path}?limt=5`, bearer);
        assert.equal(unknown.status, 400);
        assert.equal(
          (JSON.parse(unknown.body) as { message: string }).message,
          `Unknown query parameter limt; GET ${path} takes ${params[path]}`,
        );
        for (const limit of ['1', '100', '007']) {
          const res = await get(`${path}?limit=${limit}`, bearer);
          assert.equal(res.status, 200, `${path}?limit=${limit}`);
        }
        assert.equal((await get(path, bearer)).status, 200);
      }
      const session = await get('/api/sessions/cnv_x?limit=5', bearer);
      assert.equal(session.status, 400);
      assert.equal(
        (JSON.parse(session.body) as { message: string }).message,
        'Unknown query parameter limit; GET /api/sessions/{id} takes none',
      );
    });

    it('returns at most limit rows', async () => {
      const ada = await h.as('ada@acme.test');
      for (let i = 0; i < 3; i++) await ada.call('read_page', { page_id: acme(h).artifacts.landing });
      const res = await get('/api/activity?limit=2', {
        authorization: `Bearer ${await tokenFor('ada@acme.test')}`,
      });
      assert.equal((JSON.parse(res.body) as { activity: unknown[] }).activity.length, 2);
    });
  });
});
