import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  Client,
  OAuthError,
  StreamableHTTPClientTransport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import type { Browser, BrowserContext } from 'playwright-core';
import type { RunningServer } from '../src/server.ts';
import {
  BROWSER_SKIP,
  BrowserOAuthClient,
  launchBrowser,
  personAuthorizes,
  tandemForBrowser,
  type BrowserAuthorization,
} from './support/browser-oauth.ts';
import { DATABASES } from './support/databases.ts';
import type { Harness } from './support/harness.ts';
import { mcpCall, serveClientDocument } from './support/oauth.ts';

const PASSWORD = 'correct horse battery';
const REDIRECT = 'http://127.0.0.1:5999/callback';
/** Screenshots of the pages people see, for looking at (TANDEM_SCREENSHOTS=dir keeps them). */
const SHOTS = process.env.TANDEM_SCREENSHOTS;

const READ_WORDS = 'Read your documents, pages and tables, and their comments';
const WRITE_WORDS = 'Create and change documents and pages, and comment on them';

type ToolResult = { content?: { type: string; text?: string }[]; isError?: boolean };
const textOf = (r: ToolResult) => (r.content ?? []).map((c) => c.text ?? '').join('\n');

describe('MCP clients connect through OAuth in a browser', { skip: BROWSER_SKIP }, () => {
  let browser: Browser;
  before(async () => {
    browser = await launchBrowser();
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
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
      before(() => ({ h, server, context } = made));

      const shot = (name: string) => (SHOTS && db.name === 'sqlite' ? join(SHOTS, `${name}.png`) : undefined);

      /** An MCP client whose "browser" is Chromium with Ada at the keyboard. */
      function oauthClient(name: string, options: { clientId?: string; decision?: 'Allow' | 'Deny' } = {}) {
        const seen: BrowserAuthorization[] = [];
        const provider = new BrowserOAuthClient({
          redirectUrl: REDIRECT,
          name,
          ...(options.clientId ? { clientId: options.clientId } : {}),
          authorize: async (url) => {
            const done = await personAuthorizes(context, url, {
              redirectUrl: REDIRECT,
              email: 'ada@acme.test',
              password: PASSWORD,
              decision: options.decision ?? 'Allow',
              screenshots: { login: shot('sign-in'), consent: shot(`consent-${seen.length + 1}`) },
            });
            seen.push(done);
            return done.callback;
          },
        });
        return { provider, seen };
      }

      /** Connects as a client would: a 401, the browser, the code exchanged, then connected. */
      async function connect(provider: BrowserOAuthClient) {
        const url = new URL('/mcp', server.url);
        const first = new Client({ name: 'oauth-test', version: '1.0.0' });
        const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
        await assert.rejects(first.connect(transport), UnauthorizedError);
        await transport.finishAuth((await provider.callback()).searchParams);
        const client = new Client({ name: 'oauth-test', version: '1.0.0' });
        const connected = new StreamableHTTPClientTransport(url, { authProvider: provider });
        await client.connect(connected);
        return { client, transport: connected };
      }

      it('a client with a Client ID Metadata Document signs Ada in and acts as her; step-up asks only for documents:write', async () => {
        const doc = await serveClientDocument((id) => ({
          client_id: id,
          client_name: 'Metadata Desktop',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
        }));
        try {
          const { provider, seen } = oauthClient('Metadata Desktop', { clientId: doc.clientId });
          const { client, transport } = await connect(provider);
          assert.deepEqual(seen[0]?.asked, [READ_WORDS]);
          assert.equal(provider.tokens()?.scope, 'documents:read');

          const mine = (await client.callTool({
            name: 'list_documents',
            arguments: { scope: 'mine' },
          })) as ToolResult;
          assert.match(textOf(mine), /Private plan/, 'Ada’s own private document: the client acts as Ada');

          // create_page needs documents:write: 403, the browser again, consent for that scope alone.
          const create = { name: 'create_page', arguments: { title: 'From the desktop', html: '<p>Hi</p>' } };
          await assert.rejects(client.callTool(create), UnauthorizedError);
          const stepUp = await provider.callback();
          assert.deepEqual(seen[1]?.asked, [WRITE_WORDS], 'the consent page lists only the new scope');
          await transport.finishAuth(stepUp.searchParams);
          assert.equal(provider.tokens()?.scope, 'documents:read documents:write');
          const made = (await client.callTool(create)) as ToolResult;
          assert.equal(made.isError, undefined, textOf(made));
          assert.match(textOf(made), /Created page From the desktop/);
          await client.close();
        } finally {
          await doc.close();
        }
      });

      it('a client sending Ada back to another of its redirect URIs is asked about again, the page naming where', async () => {
        const other = 'http://localhost:5998/callback';
        const doc = await serveClientDocument((id) => ({
          client_id: id,
          client_name: 'Two Homes',
          redirect_uris: [REDIRECT, other],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
        }));
        try {
          const first = oauthClient('Two Homes', { clientId: doc.clientId });
          const { client } = await connect(first.provider);
          assert.deepEqual(first.seen[0]?.asked, [READ_WORDS]);
          await client.close();

          // The same client (the same document), the same scope, the other redirect URI.
          const named: string[] = [];
          const seen: BrowserAuthorization[] = [];
          const provider = new BrowserOAuthClient({
            redirectUrl: other,
            name: 'Two Homes',
            clientId: doc.clientId,
            authorize: async (url) => {
              const done = await personAuthorizes(context, url, {
                redirectUrl: other,
                email: 'ada@acme.test',
                password: PASSWORD,
                onConsent: async (page) => {
                  named.push((await page.getByRole('note').textContent()) ?? '');
                },
              });
              seen.push(done);
              return done.callback;
            },
          });
          const again = await connect(provider);
          assert.deepEqual(seen[0]?.asked, [READ_WORDS], 'the consent page showed again');
          assert.match(
            named[0] ?? '',
            /can send you back to 2 different addresses\. This time it is localhost:5998/,
          );
          assert.equal(seen[0]?.callback.origin, 'http://localhost:5998');
          await again.client.close();
        } finally {
          await doc.close();
        }
      });

      it('a client registering itself (DCR) gets a token that works and acts as Ada', async () => {
        const { provider, seen } = oauthClient('Registered Editor');
        const { client } = await connect(provider);
        assert.ok(provider.clientInformation()?.client_id, 'the client registered');
        assert.deepEqual(seen[0]?.asked, [READ_WORDS]);
        const read = (await client.callTool({
          name: 'read_document',
          arguments: { document_id: h.ids.Acme!.artifacts.plan },
        })) as ToolResult;
        assert.match(textOf(read), /Draft\./);
        await client.close();
      });

      it('signed out with the grant still held, signing in goes straight back to the client, no consent shown', async () => {
        const doc = await serveClientDocument((id) => ({
          client_id: id,
          client_name: 'Second Machine',
          redirect_uris: [REDIRECT],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
          application_type: 'native',
        }));
        try {
          const first = oauthClient('Second Machine', { clientId: doc.clientId });
          (await connect(first.provider)).client.close();
          assert.deepEqual(first.seen[0]?.asked, [READ_WORDS]);

          // Another machine: no tokens, nobody signed in in its browser; Ada's grant stands.
          await context.clearCookies();
          const again = oauthClient('Second Machine', { clientId: doc.clientId });
          const { client } = await connect(again.provider);
          assert.equal(again.seen[0]?.asked, undefined, 'no consent page: nothing new was asked');
          assert.equal(again.provider.tokens()?.scope, 'documents:read');
          const read = (await client.callTool({
            name: 'read_document',
            arguments: { document_id: h.ids.Acme!.artifacts.plan },
          })) as ToolResult;
          assert.match(textOf(read), /Draft\./);
          await client.close();
        } finally {
          await doc.close();
        }
      });

      it('Deny sends the client back with access_denied', async () => {
        const { provider } = oauthClient('Denied App', { decision: 'Deny' });
        const url = new URL('/mcp', server.url);
        const transport = new StreamableHTTPClientTransport(url, { authProvider: provider });
        await assert.rejects(
          new Client({ name: 'deny', version: '1.0.0' }).connect(transport),
          UnauthorizedError,
        );
        const callback = await provider.callback();
        assert.equal(callback.searchParams.get('error'), 'access_denied');
        await assert.rejects(transport.finishAuth(callback.searchParams), (error: unknown) => {
          assert.ok(error instanceof OAuthError);
          assert.equal(error.code, 'access_denied');
          return true;
        });
      });

      it('/settings lists the connected apps and tokens, and Revoke ends them at once', async () => {
        const { provider } = oauthClient('Revocable App');
        const { client } = await connect(provider);
        await client.close();
        const ada = h.actor('ada@acme.test');
        const pat = await h.services.tokens.create(
          ada.personId,
          ada.workspaceId,
          ['documents:read'],
          3_600_000,
        );

        const page = await context.newPage();
        await page.goto(`${server.url}/settings`);
        if (shot('settings')) await page.screenshot({ path: shot('settings')!, fullPage: true });
        const apps = page.getByRole('region', { name: 'Connected apps' });
        const app = apps.getByRole('listitem').filter({ hasText: 'Revocable App' });
        await assert.doesNotReject(app.waitFor());
        assert.match((await app.textContent()) ?? '', /127\.0\.0\.1:5999/);
        await app.getByRole('button', { name: 'Revoke' }).click();
        // Revoking asks first.
        await page
          .getByRole('dialog', { name: 'Disconnect Revocable App?' })
          .getByRole('button', { name: 'Revoke' })
          .click();
        await apps.getByRole('status').waitFor();
        assert.equal(await apps.getByRole('listitem').filter({ hasText: 'Revocable App' }).count(), 0);
        const revoked = await mcpCall(server.url, provider.tokens()!.access_token);
        assert.equal(revoked.status, 401, 'the app’s token stopped working at once');

        const tokens = page.getByRole('region', { name: 'Access tokens' });
        // A token made on the command line has no name: it is shown by the end of its id.
        const unnamed = `Unnamed token ${pat.tokenId.slice(-6)}`;
        const row = tokens.getByRole('listitem').filter({ hasText: unnamed });
        await row.getByRole('button', { name: 'Revoke' }).click();
        await page
          .getByRole('dialog', { name: `Revoke ${unnamed}?` })
          .getByRole('button', { name: 'Revoke' })
          .click();
        await tokens.getByRole('status').waitFor();
        assert.equal(await tokens.getByRole('listitem').filter({ hasText: unnamed }).count(), 0);
        assert.equal(await h.services.tokens.verify(pat.token), null);
        await page.close();
      });
    });
  }
});
