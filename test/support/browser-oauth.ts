import assert from 'node:assert/strict';
import type {
  OAuthClientProvider,
  OAuthDiscoveryState,
  OAuthClientMetadata,
} from '@modelcontextprotocol/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import type { RunningServer } from '../../src/server.ts';
import type { TestDatabase } from './databases.ts';
import { setup, type Harness } from './harness.ts';
import { startOnFreePorts } from './raw-http.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
export const BROWSER_SKIP = process.env.TANDEM_TEST_BROWSER === 'skip' ? 'TANDEM_TEST_BROWSER=skip' : false;

export const launchBrowser = (): Promise<Browser> =>
  chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });

type Stored<T extends keyof OAuthClientProvider> = NonNullable<
  Awaited<ReturnType<Extract<OAuthClientProvider[T], (...args: never[]) => unknown>>>
>;

/**
 * An MCP client's OAuth side, as a desktop client keeps it: client information, tokens and the
 * PKCE verifier in memory; "opening the browser" hands the authorization URL to `authorize`,
 * which drives Chromium and resolves with the redirect back (code or error, with iss).
 */
export class BrowserOAuthClient implements OAuthClientProvider {
  #info: Stored<'clientInformation'> | undefined;
  #tokens: Stored<'tokens'> | undefined;
  #verifier = '';
  #discovery: OAuthDiscoveryState | undefined;
  #pending: Promise<URL> | undefined;
  readonly redirectUrl: string;
  readonly clientMetadata: OAuthClientMetadata;
  readonly #authorize: (url: URL) => Promise<URL>;

  constructor(options: {
    redirectUrl: string;
    name: string;
    /** A Client ID Metadata Document's URL: the client skips registration. */
    clientId?: string;
    authorize: (url: URL) => Promise<URL>;
  }) {
    this.redirectUrl = options.redirectUrl;
    this.clientMetadata = {
      client_name: options.name,
      redirect_uris: [options.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
    if (options.clientId) this.#info = { client_id: options.clientId };
    this.#authorize = options.authorize;
  }

  clientInformation() {
    return this.#info;
  }
  saveClientInformation(info: Stored<'clientInformation'>) {
    this.#info = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: Stored<'tokens'>) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.#pending = this.#authorize(url);
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
  discoveryState() {
    return this.#discovery;
  }
  saveDiscoveryState(state: OAuthDiscoveryState) {
    this.#discovery = state;
  }

  /** The redirect back from the authorization the client last started. */
  async callback(): Promise<URL> {
    assert.ok(this.#pending, 'the client started no authorization');
    const url = await this.#pending;
    this.#pending = undefined;
    return url;
  }
}

/** What the person saw on the consent page, and the redirect back to the client. */
export interface BrowserAuthorization {
  callback: URL;
  /** The scopes listed under "It asks to", in the page's words; undefined when no consent page showed. */
  asked: string[] | undefined;
}

/**
 * A person at the browser: follows the authorization URL, signs in when asked (Email, Password,
 * Sign in), and answers the consent page (Allow or Deny). The redirect back to the client is
 * caught before it leaves the browser.
 */
export async function personAuthorizes(
  context: BrowserContext,
  url: URL,
  options: {
    redirectUrl: string;
    email: string;
    password: string;
    decision?: 'Allow' | 'Deny';
    screenshots?: { login?: string; consent?: string };
    onConsent?: (page: Page) => Promise<void>;
  },
): Promise<BrowserAuthorization> {
  const page = await context.newPage();
  let callback: URL | undefined;
  // The browser asking for the redirect URI is the way back, whether or not the route below
  // answers it (a navigation a page started by itself may go out past the route).
  const back = page.waitForRequest((r) => r.url().startsWith(options.redirectUrl), { timeout: 30_000 });
  back.catch(() => undefined);
  await page.route(`${options.redirectUrl}**`, async (route) => {
    callback = new URL(route.request().url());
    await route.fulfill({ status: 200, contentType: 'text/plain', body: 'You can close this window.' });
  });
  try {
    await page.goto(url.href);
    if (new URL(page.url()).pathname === '/login') {
      if (options.screenshots?.login)
        await page.screenshot({ path: options.screenshots.login, fullPage: true });
      await page.getByLabel('Email').fill(options.email);
      await page.getByLabel('Password').fill(options.password);
      await page.getByRole('button', { name: 'Sign in' }).click();
      // Past the sign-in pages (a connection request goes on from /login/continue by itself):
      // at the consent page, or back at the client.
      const consent = page.waitForURL((u) => u.pathname.startsWith('/consent/'), { timeout: 30_000 });
      consent.catch(() => undefined);
      const request = await Promise.race([back, consent.then(() => undefined)]);
      if (request) callback = new URL(request.url());
    }
    let asked: string[] | undefined;
    if (!callback && new URL(page.url()).pathname.startsWith('/consent/')) {
      asked = await page.getByRole('list', { name: 'It asks to' }).getByRole('listitem').allTextContents();
      await options.onConsent?.(page);
      if (options.screenshots?.consent)
        await page.screenshot({ path: options.screenshots.consent, fullPage: true });
      await page.getByRole('button', { name: options.decision ?? 'Allow' }).click();
      callback = new URL((await back).url());
    }
    if (!callback && page.url().startsWith(options.redirectUrl)) callback = new URL(page.url());
    assert.ok(callback, `the browser came back to the client (it is at ${page.url()})`);
    return { callback, asked };
  } finally {
    // Not awaited: a client's callback page that closes itself (mcp-remote's runs `window.close()`)
    // while it is being closed leaves Chromium never answering the close, which held the test until
    // its timeout (about 1 run in 6). The context closes whatever is left when the suite ends.
    void page.close().catch(() => undefined);
  }
}

/**
 * Hands a redirect the browser was kept from following to the client's own callback server,
 * waiting (at most 10 s) for it to listen. `taken` says whether the client has the code already
 * (a navigation the page started by itself may reach the client past the route, and a client that
 * took its code stops listening): then nothing is sent and the answer is undefined.
 */
export async function deliver(
  callback: URL,
  taken: () => boolean = () => false,
): Promise<Response | undefined> {
  const end = Date.now() + 10_000;
  for (;;) {
    if (taken()) return undefined;
    try {
      return await fetch(callback);
    } catch (error) {
      if (taken()) return undefined;
      if (Date.now() > end) throw error;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/**
 * For the suite it is called in: Tandem on free ports over `db`, Ada with a password to sign in
 * with, and a fresh Chromium context of `browser()`; all closed after the suite.
 */
export function tandemForBrowser(db: TestDatabase, browser: () => Browser, password: string) {
  const made = {} as { h: Harness; server: RunningServer; context: BrowserContext };
  let dataDir: string | undefined;
  before(async () => {
    made.h = await setup(db);
    dataDir = mkdtempSync(join(tmpdir(), 'tandem-browser-client-'));
    made.server = await startOnFreePorts(made.h.services, dataDir);
    await made.h.services.accounts.setPassword('ada@acme.test', password);
    made.context = await browser().newContext();
  });
  after(async () => {
    await made.context?.close();
    await made.server?.close();
    await made.h?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });
  return made;
}
