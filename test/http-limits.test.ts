import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Scope } from '../src/domains/workspace/actor.ts';
import type { RunningServer } from '../src/server.ts';
import { openAppFixture, PASSWORD, type AppFixture } from './support/app-fixture.ts';
import { acme, type Harness } from './support/harness.ts';
import type { RawRequest, RawResponse } from './support/raw-http.ts';

type Json = Record<string, unknown>;

const MB = 1024 * 1024;
const HUGE = 50 * MB;

describe('request bodies on the app origin', () => {
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
  const pendingApproval = () => f.pendingApproval();
  const approvalStatus = (id: string) => f.approvalStatus(id);
  const approve = (id: string, headers: Record<string, string>, body = '{"decision":"approve"}') =>
    send(`/api/approvals/${id}`, { headers, body });

  describe('request bodies are limited before they are read', () => {
    /** Refused quickly, long before 50 MB went over the wire, without the process growing by it. */
    const assertRefusedEarly = (res: RawResponse, rssBefore: number) => {
      assert.equal(res.status, 413, res.body.slice(0, 200));
      assert.ok(res.ms < 5000, `answered after ${Math.round(res.ms)} ms`);
      assert.ok(res.sent < HUGE / 2, `the server read ${(res.sent / MB).toFixed(1)} MB before answering`);
      const grew = (res.peakRss - rssBefore) / MB;
      assert.ok(grew < 30, `resident memory grew by ${grew.toFixed(1)} MB`);
    };

    for (const chunked of [false, true]) {
      const how = chunked ? 'a chunked body with no Content-Length' : 'a declared Content-Length';
      it(`refuses 50 MB at POST /login with 413, from ${how}`, async () => {
        const rss = process.memoryUsage.rss();
        const res = await send('/login', {
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: appOrigin },
          stream: { bytes: HUGE, chunked },
        });
        assertRefusedEarly(res, rss);
        assert.match(res.headers['content-type'] ?? '', /text\/html/);
        assert.match(res.body, /larger than 16 KiB/);
        assert.equal(res.headers['set-cookie'], undefined);
      });

      it(`refuses 50 MB at both hooks with 413, from ${how}`, async () => {
        for (const path of [`/hooks/github/${acme(h).id}`, `/hooks/connectors/${acme(h).id}/github`]) {
          const rss = process.memoryUsage.rss();
          const res = await send(path, {
            headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
            stream: { bytes: HUGE, chunked },
          });
          assertRefusedEarly(res, rss);
          const body = JSON.parse(res.body) as { error: string; message: string };
          assert.equal(body.error, 'too_large');
          assert.match(body.message, /larger than 5 MB/);
        }
      });

      it(`refuses 50 MB at POST /api/approvals/{id} with 413, from ${how}`, async () => {
        const id = await pendingApproval();
        const rss = process.memoryUsage.rss();
        const res = await send(`/api/approvals/${id}`, {
          headers: {
            'content-type': 'application/json',
            authorization: `Bearer ${await tokenFor('ada@acme.test')}`,
          },
          stream: { bytes: HUGE, chunked },
        });
        assertRefusedEarly(res, rss);
        assert.equal((JSON.parse(res.body) as Json).error, 'too_large');
        assert.equal(await approvalStatus(id), 'pending');
      });

      it(`refuses 50 MB at /mcp with a JSON-RPC 413, from ${how}`, async () => {
        const rss = process.memoryUsage.rss();
        const res = await send('/mcp', {
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            authorization: `Bearer ${await tokenFor('ada@acme.test')}`,
          },
          stream: { bytes: HUGE, chunked },
        });
        assertRefusedEarly(res, rss);
        const body = JSON.parse(res.body) as { jsonrpc: string; error: { message: string } };
        assert.equal(body.jsonrpc, '2.0');
        assert.match(body.error.message, /larger than 4 MiB/);
      });

      it(`refuses 50 MB sent anywhere else on the app origin, from ${how}`, async () => {
        const rss = process.memoryUsage.rss();
        const res = await send('/nowhere', { stream: { bytes: HUGE, chunked } });
        assertRefusedEarly(res, rss);
      });
    }

    it('accepts bodies just under each limit', async () => {
      await f.withPassword('ada@acme.test');
      // A sign-in form padded to just under 16 KiB still signs in.
      const fields = { email: 'ada@acme.test', password: PASSWORD, next: '/' };
      const form = new URLSearchParams({
        ...fields,
        pad: 'x'.repeat(16 * 1024 - new URLSearchParams(fields).toString().length - 10),
      });
      const login = await send('/login', {
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: appOrigin },
        body: form.toString(),
      });
      assert.ok(form.toString().length < 16 * 1024);
      assert.equal(login.status, 303, login.body);
      // A hook payload of 4.9 MB reaches the signature check.
      const payload = JSON.stringify({ event: 'x', data: 'y'.repeat(4_900_000) });
      const hook = await send(`/hooks/github/${acme(h).id}`, {
        headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' },
        body: payload,
      });
      assert.equal(hook.status, 401);
      const declared = await send(`/hooks/github/${acme(h).id}`, {
        headers: {
          'content-type': 'application/json',
          'x-hub-signature-256': `sha256=${createHmac('sha256', 'whsec-1').update('').digest('hex')}`,
        },
        stream: { bytes: 5_000_001, chunked: false },
      });
      assert.equal(declared.status, 413, 'one byte over 5 MB is refused');
    });

    it('hands a chunked body under the limit to the route whole', async () => {
      const token = await tokenFor('ada@acme.test');
      await f.withPassword('ada@acme.test');
      const login = await send('/login', {
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: appOrigin },
        body: new URLSearchParams({
          email: 'ada@acme.test',
          password: PASSWORD,
          next: '/pages/x',
        }).toString(),
        chunked: true,
      });
      assert.equal(login.status, 303, login.body);
      assert.equal(login.headers.location, '/pages/x');

      const id = await pendingApproval();
      const decided = await send(`/api/approvals/${id}`, {
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ decision: 'reject', note: 'sent in pieces' }),
        chunked: true,
      });
      assert.equal(decided.status, 200, decided.body);
      assert.equal((JSON.parse(decided.body) as Json).note, 'sent in pieces');

      const payload = JSON.stringify({ zen: 'Chunks.', hook_id: 1 });
      const ping = await send(`/hooks/github/${acme(h).id}`, {
        headers: {
          'content-type': 'application/json',
          'x-github-event': 'ping',
          'x-github-delivery': 'd-1',
          'x-hub-signature-256': `sha256=${createHmac('sha256', 'whsec-1').update(payload).digest('hex')}`,
        },
        body: payload,
        chunked: true,
      });
      assert.equal(ping.status, 200, ping.body);
    });

    it('lets the largest legal tool calls through /mcp', async () => {
      const client = new Client({ name: 'limits', version: '1.0.0' });
      const token = await tokenFor('ada@acme.test');
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
          authProvider: { token: async () => token },
        }),
      );
      try {
        // 60,000 characters, each escaped to six bytes in JSON: the largest document write.
        const markdown = '\u0001'.repeat(60_000);
        assert.ok(JSON.stringify(markdown).length > 350_000);
        const doc = await client.callTool({
          name: 'create_document',
          arguments: { title: 'Widest', content_markdown: markdown },
        });
        assert.notEqual(doc.isError, true, JSON.stringify(doc.content).slice(0, 200));
        // The largest page: 1,000,000 characters of HTML, each a three-byte character in UTF-8,
        // fits under the 4 MiB body limit.
        const html = `<p>${'€'.repeat(1_000_000 - 7)}</p>`;
        assert.equal(html.length, 1_000_000);
        const page = await client.callTool({ name: 'create_page', arguments: { title: 'Wide', html } });
        assert.notEqual(page.isError, true, JSON.stringify(page.content).slice(0, 200));
        assert.equal((page.structuredContent as { byte_size: number }).byte_size, Buffer.byteLength(html));
      } finally {
        await client.close();
      }
    });
  });

  describe('JSON only where JSON is meant', () => {
    it('refuses a POST to /api whose Content-Type is not application/json with 415', async () => {
      const id = await pendingApproval();
      const bearer = `Bearer ${await tokenFor('ada@acme.test')}`;
      for (const type of [
        'text/plain',
        'text/plain;charset=UTF-8',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/jsonp',
        undefined,
      ]) {
        const headers: Record<string, string> = { authorization: bearer };
        if (type) headers['content-type'] = type;
        const res = await approve(id, headers);
        assert.equal(res.status, 415, `Content-Type ${type}`);
        const body = JSON.parse(res.body) as { error: string; message: string };
        assert.equal(body.error, 'unsupported_media_type');
        assert.match(body.message, /application\/json/);
      }
      // The same form post from a signed-in browser on the app's own pages is refused too.
      const fromForm = await approve(id, {
        cookie: await f.sessionCookie('ada@acme.test'),
        origin: appOrigin,
        'content-type': 'text/plain',
      });
      assert.equal(fromForm.status, 415);
      assert.equal(await approvalStatus(id), 'pending', 'nothing was decided');

      const json = await approve(id, {
        authorization: bearer,
        'content-type': 'application/json; charset=utf-8',
      });
      assert.equal(json.status, 200, json.body);
      assert.equal(await approvalStatus(id), 'approved');
    });
  });
});
