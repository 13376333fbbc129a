import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  Client,
  InsufficientScopeError,
  SdkHttpError,
  StreamableHTTPClientTransport,
  type ClientOptions,
} from '@modelcontextprotocol/client';
import type { Scope } from '../src/domains/workspace/actor.ts';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';
import { startTestServer } from './support/http-server.ts';
import { IMPLEMENTED_TOOLS } from './support/tools.ts';

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';

/** The client settings that make it speak one protocol revision or the other. */
const REVISIONS: { version: string; era: 'modern' | 'legacy'; options: ClientOptions }[] = [
  { version: MODERN, era: 'modern', options: { versionNegotiation: { mode: { pin: MODERN } } } },
  {
    version: LEGACY,
    era: 'legacy',
    options: { versionNegotiation: { mode: 'legacy' }, supportedProtocolVersions: [LEGACY] },
  },
];

/** Splits `Bearer a="1", b="2"` into its scheme and parameters. */
function parseChallenge(header: string | null): { scheme: string; params: Record<string, string> } {
  assert.ok(header, 'the response has no WWW-Authenticate header');
  const scheme = header.split(/\s+/, 1)[0]!;
  const params: Record<string, string> = {};
  for (const m of header.slice(scheme.length).matchAll(/([A-Za-z_]+)="([^"]*)"/g)) params[m[1]!] = m[2]!;
  return { scheme, params };
}

/** A JSON-RPC tools/call shaped the way the client sends it on each revision. */
function toolsCallRequest(
  version: string,
  token: string | undefined,
  name: string,
  args: Record<string, unknown>,
) {
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': version,
  };
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const params: Record<string, unknown> = { name, arguments: args };
  if (version === MODERN) {
    headers['mcp-method'] = 'tools/call';
    headers['mcp-name'] = name;
    params._meta = {
      'io.modelcontextprotocol/protocolVersion': MODERN,
      'io.modelcontextprotocol/clientInfo': { name: 'raw-http', version: '1.0.0' },
      'io.modelcontextprotocol/clientCapabilities': {},
    };
  }
  return {
    method: 'POST',
    headers,
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
  };
}

/** The JSON-RPC message of a response, whether sent as JSON or as one server-sent event. */
async function rpcBody(response: Response): Promise<{ result?: Record<string, unknown>; error?: unknown }> {
  const text = await response.text();
  if ((response.headers.get('content-type') ?? '').includes('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).trim())
      .find((line) => line.startsWith('{'));
    assert.ok(data, `no JSON-RPC message in the event stream: ${text}`);
    return JSON.parse(data);
  }
  return JSON.parse(text);
}

for (const db of DATABASES) {
  describe(`MCP over HTTP on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let dataDir: string;
    let mcpUrl: URL;
    const clients: Client[] = [];

    const tokenFor = async (email: string, scopes: Scope[], ttlMs: number | null = 3_600_000) => {
      const actor = h.actor(email);
      return (await h.services.tokens.create(actor.personId, actor.workspaceId, scopes, ttlMs)).token;
    };

    const connect = async (token: string, options: ClientOptions = {}) => {
      const client = new Client({ name: 'http-tests', version: '1.0.0' }, options);
      const transport = new StreamableHTTPClientTransport(mcpUrl, {
        authProvider: { token: async () => token },
      });
      await client.connect(transport);
      clients.push(client);
      return client;
    };

    const pageVersion = async (pageId: string) =>
      (
        await h.services.deps.db
          .selectFrom('artifacts')
          .select('version')
          .where('id', '=', pageId)
          .executeTakeFirstOrThrow()
      ).version;

    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-http-'));
      server = await startTestServer(h.services, dataDir);
      mcpUrl = new URL('/mcp', server.url);
    });
    after(async () => {
      await Promise.allSettled(clients.map((c) => c.close()));
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    for (const revision of REVISIONS) {
      it(`lists every implemented tool and reads a page with a bearer token, speaking ${revision.version}`, async () => {
        const token = await tokenFor('ada@acme.test', ['documents:read', 'documents:write']);
        const client = await connect(token, revision.options);
        assert.equal(client.getNegotiatedProtocolVersion(), revision.version);
        assert.equal(client.getProtocolEra(), revision.era);

        const listed = (await client.listTools()) as Awaited<ReturnType<Client['listTools']>> & {
          ttlMs?: number;
        };
        const { tools } = listed;
        assert.deepEqual(
          tools.map((t) => t.name),
          IMPLEMENTED_TOOLS,
        );
        // How long the list may be kept rides on the 2026-07-28 result; older revisions have no field for it.
        if (revision.era === 'modern') assert.equal(listed.ttlMs, 3_600_000);
        // Each tool has an icon the app serves.
        const icon = new URL(tools.find((t) => t.name === 'read_page')!.icons![0]!.src);
        assert.equal(icon.href, new URL('/icons/page.svg', server.url).href);
        const svg = await fetch(icon);
        assert.equal(svg.status, 200);
        assert.equal(svg.headers.get('content-type'), 'image/svg+xml');
        assert.match(await svg.text(), /^<svg /);

        const result = await client.callTool({
          name: 'read_page',
          arguments: { page_id: acme(h).artifacts.landing },
        });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        const page = result.structuredContent as Record<string, unknown>;
        assert.equal(page.page_id, acme(h).artifacts.landing);
        assert.equal(page.title, 'Landing');
        assert.equal(page.html, '<h1>Hi</h1>\n<p>Welcome</p>\n<p>Welcome</p>\n');
        assert.equal(page.version, 1);
        assert.equal(page.role, 'owner');
      });
    }

    it('answers a request without a token with 401 and a Bearer challenge naming the resource metadata', async () => {
      const response = await fetch(
        mcpUrl,
        toolsCallRequest(MODERN, undefined, 'read_page', { page_id: acme(h).artifacts.landing }),
      );
      assert.equal(response.status, 401);
      const { scheme, params } = parseChallenge(response.headers.get('www-authenticate'));
      assert.equal(scheme, 'Bearer');
      assert.equal(
        params.resource_metadata,
        new URL('/.well-known/oauth-protected-resource/mcp', server.url).href,
      );
      const body = await response.text();
      assert.ok(!body.includes('Landing'), 'an unauthenticated request must not see page content');
    });

    it('refuses a client connecting without a token', async () => {
      const client = new Client({ name: 'http-tests', version: '1.0.0' });
      await assert.rejects(client.connect(new StreamableHTTPClientTransport(mcpUrl)), (error: unknown) => {
        assert.ok(error instanceof SdkHttpError, `expected SdkHttpError, got ${String(error)}`);
        assert.equal(error.status, 401);
        return true;
      });
      await client.close();
    });

    it('answers an unknown or malformed token with 401', async () => {
      const real = await tokenFor('ada@acme.test', ['documents:read']);
      // Same shape and length as a real token, but never issued; then one that is not a token at all.
      const forged = `tdm_${'A'.repeat(real.length - 4)}`;
      for (const token of [forged, 'not-a-token', `${real}x`]) {
        const response = await fetch(
          mcpUrl,
          toolsCallRequest(MODERN, token, 'read_page', { page_id: acme(h).artifacts.landing }),
        );
        assert.equal(response.status, 401, `token ${token.slice(0, 8)}… should be refused`);
        const { scheme, params } = parseChallenge(response.headers.get('www-authenticate'));
        assert.equal(scheme, 'Bearer');
        assert.equal(params.error, 'invalid_token');
      }
    });

    it('accepts a token until it expires, then answers 401', async () => {
      const ttl = 1500;
      const issuedAt = Date.now();
      const token = await tokenFor('ada@acme.test', ['documents:read'], ttl);
      const args = { page_id: acme(h).artifacts.landing };
      const fresh = await fetch(mcpUrl, toolsCallRequest(MODERN, token, 'read_page', args));
      assert.equal(fresh.status, 200);
      const ok = await rpcBody(fresh);
      assert.equal((ok.result?.structuredContent as Record<string, unknown>).version, 1);

      await new Promise((resolve) => setTimeout(resolve, issuedAt + ttl + 100 - Date.now()));
      const stale = await fetch(mcpUrl, toolsCallRequest(MODERN, token, 'read_page', args));
      assert.equal(stale.status, 401);
      assert.equal(parseChallenge(stale.headers.get('www-authenticate')).params.error, 'invalid_token');
    });

    for (const version of [MODERN, LEGACY]) {
      it(`challenges a read-only token calling write_page with 403 insufficient_scope (${version} request)`, async () => {
        const token = await tokenFor('ada@acme.test', ['documents:read']);
        const pageId = acme(h).artifacts.landing!;

        // The same request shape is accepted for a tool the token may use.
        const control = await fetch(
          mcpUrl,
          toolsCallRequest(version, token, 'read_page', { page_id: pageId }),
        );
        assert.equal(control.status, 200);
        assert.equal(
          ((await rpcBody(control)).result?.structuredContent as Record<string, unknown>).page_id,
          pageId,
        );

        const response = await fetch(
          mcpUrl,
          toolsCallRequest(version, token, 'write_page', {
            page_id: pageId,
            html: '<p>overwritten</p>',
            expected_version: 1,
          }),
        );
        assert.equal(response.status, 403);
        const header = response.headers.get('www-authenticate');
        const { scheme, params } = parseChallenge(header);
        assert.equal(scheme, 'Bearer');
        assert.equal(params.error, 'insufficient_scope');
        // The scopes the token holds and the one it lacks: re-authorizing for them adds only the new one.
        assert.equal(params.scope, 'documents:read documents:write');
        assert.equal(
          params.resource_metadata,
          new URL('/.well-known/oauth-protected-resource/mcp', server.url).href,
        );

        // The challenge's metadata document is really served, and the page was not touched.
        const metadata = await fetch(params.resource_metadata!);
        assert.equal(metadata.status, 200);
        assert.equal(await pageVersion(pageId), 1);
      });
    }

    it('answers a call in one JSON body on either revision; keeps no sessions (GET, DELETE 405); takes a notification (202)', async () => {
      const token = await tokenFor('ada@acme.test', ['documents:read']);
      const pageId = acme(h).artifacts.landing!;
      for (const version of [MODERN, LEGACY]) {
        const response = await fetch(
          mcpUrl,
          toolsCallRequest(version, token, 'read_page', { page_id: pageId }),
        );
        assert.equal(response.status, 200, version);
        assert.equal(response.headers.get('content-type'), 'application/json', version);
        const body = (await response.json()) as {
          id: number;
          result: { structuredContent: { page_id: string } };
        };
        assert.equal(body.id, 7);
        assert.equal(body.result.structuredContent.page_id, pageId);
      }
      const auth = { authorization: `Bearer ${token}`, 'mcp-protocol-version': LEGACY };
      for (const method of ['GET', 'DELETE']) {
        const refused = await fetch(mcpUrl, { method, headers: { ...auth, accept: 'text/event-stream' } });
        assert.equal(refused.status, 405, method);
        assert.equal(refused.headers.get('allow'), 'POST');
        assert.deepEqual(await refused.json(), {
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Method not allowed.' },
          id: null,
        });
      }
      const notified = await fetch(mcpUrl, {
        method: 'POST',
        headers: {
          ...auth,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      });
      assert.equal(notified.status, 202);
    });

    for (const revision of REVISIONS) {
      it(`surfaces the scope challenge to a client speaking ${revision.version} as InsufficientScopeError`, async () => {
        const token = await tokenFor('ada@acme.test', ['documents:read']);
        const client = await connect(token, revision.options);
        const pageId = acme(h).artifacts.landing!;
        await assert.rejects(
          client.callTool({
            name: 'write_page',
            arguments: { page_id: pageId, html: '<p>overwritten</p>', expected_version: 1 },
          }),
          (error: unknown) => {
            assert.ok(
              error instanceof InsufficientScopeError,
              `expected InsufficientScopeError, got ${String(error)}`,
            );
            assert.equal(error.requiredScope, 'documents:read documents:write');
            assert.equal(error.resourceMetadataUrl?.pathname, '/.well-known/oauth-protected-resource/mcp');
            return true;
          },
        );
        assert.equal(await pageVersion(pageId), 1);
        // A refused call does not spoil the connection for what the token allows.
        const read = await client.callTool({ name: 'read_page', arguments: { page_id: pageId } });
        assert.notEqual(read.isError, true);
      });
    }

    it('serves the protected-resource metadata for /mcp', async () => {
      const response = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', server.url));
      assert.equal(response.status, 200);
      assert.match(response.headers.get('content-type') ?? '', /application\/json/);
      const metadata = (await response.json()) as { resource: string; scopes_supported: string[] };
      assert.ok(metadata.resource.endsWith('/mcp'), `resource is ${metadata.resource}`);
      assert.equal(metadata.resource, mcpUrl.href);
      // Every scope; the 401 challenge names the one to start with, the rest come by step-up.
      assert.deepEqual(metadata.scopes_supported, [
        'automations:read',
        'automations:write',
        'documents:read',
        'documents:write',
      ]);
    });

    it('acts as the person behind the token', async () => {
      const bob = h.actor('bob@acme.test');
      const ada = h.actor('ada@acme.test');
      for (const revision of REVISIONS) {
        const client = await connect(
          await tokenFor('bob@acme.test', ['documents:read', 'documents:write']),
          revision.options,
        );
        const result = await client.callTool({
          name: 'create_page',
          arguments: { title: `Bob's page ${revision.version}`, html: '<p>by Bob</p>' },
        });
        assert.notEqual(result.isError, true, JSON.stringify(result.content));
        const pageId = (result.structuredContent as { page_id: string }).page_id;
        const row = await h.services.deps.db
          .selectFrom('artifacts')
          .select(['owner_id', 'workspace_id', 'title', 'content'])
          .where('id', '=', pageId)
          .executeTakeFirstOrThrow();
        assert.equal(row.owner_id, bob.personId);
        assert.notEqual(row.owner_id, ada.personId);
        assert.equal(row.workspace_id, bob.workspaceId);
        assert.equal(row.content, '<p>by Bob</p>');
        const own = await client.callTool({ name: 'read_page', arguments: { page_id: pageId } });
        assert.equal((own.structuredContent as { role: string }).role, 'owner');

        // Ada cannot see Bob's user-scoped page: it really belongs to Bob.
        const adaClient = await connect(
          await tokenFor('ada@acme.test', ['documents:read']),
          revision.options,
        );
        const seen = await adaClient.callTool({ name: 'read_page', arguments: { page_id: pageId } });
        assert.equal(seen.isError, true);
      }
    });

    it('stores only the SHA-256 of each token, never the token itself', async () => {
      const token = await tokenFor('cy@acme.test', ['documents:read']);
      const rows = await h.services.deps.db.selectFrom('tokens').selectAll().execute();
      assert.ok(rows.length > 0);
      const digest = createHash('sha256').update(token).digest('hex');
      assert.equal(rows.filter((r) => r.hash === digest).length, 1);
      const secretPart = token.replace(/^tdm_/, '');
      for (const row of rows) {
        const stored = JSON.stringify(row);
        assert.ok(!stored.includes(token), 'a tokens row contains the token text');
        assert.ok(!stored.includes(secretPart), 'a tokens row contains the random part of the token');
      }
    });
  });
}
