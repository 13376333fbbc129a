import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { createEngine, type Engine, type EngineOptions } from '../../src/engine/engine.ts';
import { WEB_DIST } from '../../src/http/web.ts';
import type { RunningServer } from '../../src/server.ts';
import type { ServiceOptions } from '../../src/services.ts';
import type { TestDatabase } from './databases.ts';
import { setup, type Harness } from './harness.ts';
import { startOnFreePorts } from './raw-http.ts';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
export const SKIP_BROWSER = process.env.TANDEM_TEST_BROWSER === 'skip' ? 'TANDEM_TEST_BROWSER=skip' : false;
const PASSWORD = 'correct horse battery staple';

/** The app must be built (npm install does it); say how rather than fail on a missing file. */
export function requireBuiltApp(): void {
  assert.ok(
    existsSync(join(WEB_DIST, 'index.html')),
    `The web app is not built (${WEB_DIST}); run npm run build:web (npm install does it too).`,
  );
}

export interface WebApp {
  h: Harness;
  server: RunningServer;
  engine: Engine;
  browser: Browser;
  url(path: string): string;
  /** A browser context signed in as this person through the sign-in page. */
  signedIn(email: string, viewport?: { width: number; height: number }): Promise<BrowserContext>;
  close(): Promise<void>;
}

/**
 * The real server (app and pages origins, run engine) over the test fixture on one database,
 * and Debian's Chromium to drive it. Everyone in the fixture gets the same password. The engine
 * takes `engineOptions` (stand-ins for outside connector calls, say), the services `serviceOptions`
 * (the model @Builder drafts with from a sentence, say).
 */
export async function openWebApp(
  db: TestDatabase,
  engineOptions: EngineOptions = {},
  serviceOptions?: ServiceOptions,
  /** The server's environment beyond the defaults (TANDEM_HTTP_ALLOW for local stand-ins, say). */
  serverEnv: Record<string, string> = {},
): Promise<WebApp> {
  requireBuiltApp();
  const h = await setup(db, serviceOptions);
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-web-'));
  const server = await startOnFreePorts(h.services, dataDir, serverEnv);
  // The engine runs on its own, as in `tandem serve`; it looks for work itself on both databases.
  const engine = createEngine(h.services, { leaseMs: 5000, pollMs: 100, dispatch: 'poll', ...engineOptions });
  await engine.start();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
  const contexts: BrowserContext[] = [];
  const withPassword = new Set<string>();
  return {
    h,
    server,
    engine,
    browser,
    url: (path) => new URL(path, server.url).toString(),
    async signedIn(email, viewport = { width: 1280, height: 800 }) {
      if (!withPassword.has(email)) {
        await h.services.accounts.setPassword(email, PASSWORD);
        withPassword.add(email);
      }
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      const page = await context.newPage();
      await signIn(page, server.url, email);
      await page.close();
      return context;
    },
    async close() {
      await Promise.allSettled(contexts.map((c) => c.close()));
      await browser.close();
      await engine.stop();
      await server.close();
      await h.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in through the sign-in page, as a person would, and waits for Home. */
export async function signIn(page: Page, appUrl: string, email: string, next = '/'): Promise<void> {
  await page.goto(new URL(`/login?next=${encodeURIComponent(next)}`, appUrl).toString());
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((u) => u.pathname === next);
}

/** Opens a page of the app in a new tab of the context and waits for its heading. */
export async function open(context: BrowserContext, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.getByRole('heading', { level: 1 }).first().waitFor();
  return page;
}

/** The visible text of the main region, with the parts that name the address taken out. */
export async function mainText(page: Page): Promise<string> {
  return (await page.locator('main').innerText()).replace(/\s+/g, ' ').trim();
}
