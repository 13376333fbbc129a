import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { chromium, type Browser, type BrowserContext, type Frame, type Page } from 'playwright-core';
import { loadConfig } from '../src/config.ts';
import { sanitizePage } from '../src/http/sanitize.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import {
  allVectorsPage,
  FIRED,
  harmlessText,
  payload,
  vectorPage,
  XSS_VECTORS,
  type XssVector,
} from './support/xss-vectors.ts';
import { until } from './support/instances.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
/** Tabs open at once; the machine has few cores, so more only adds contention. */
const TABS = 6;
/** How long after the hover and click a vector has to fire (animations, SMIL, javascript: navigations). */
const SETTLE_MS = 120;
const APP_HOST = '127.0.0.1';
/**
 * The app for the sandbox-only run listens on this second loopback address: startServer always
 * listens on the port PAGES_ORIGIN names, which there belongs to the raw stand-in on 127.0.0.1.
 */
const SECOND_HOST = '127.0.0.2';

const LIVE = XSS_VECTORS.filter((v) => v.live);
/**
 * The sandbox control: every third live vector, a spread over all kinds, leaving out autofocus,
 * which browsers never honour inside a cross-origin frame.
 */
const FRAME_CONTROLS = LIVE.filter((v) => !/\bautofocus\b/.test(v.html)).filter((_, i) => i % 3 === 0);

/** Everything that shows a payload ran, from any page, popup or frame of a browser context. */
class Detector {
  readonly events: string[] = [];

  watch(context: BrowserContext): void {
    context.on('console', (message) => {
      const text = message.text();
      if (message.type() === 'log' && text.startsWith(FIRED)) {
        this.record(text.slice(FIRED.length), `console in ${message.location().url || 'a frame'}`);
      }
    });
    context.on('dialog', (dialog) => {
      this.record(dialog.message(), `${dialog.type()} dialog`);
      dialog.dismiss().catch(() => {});
    });
    context.on('request', (request) => {
      const id = xssPath(request.url());
      if (id !== null) this.record(id, `request ${request.url()}`);
    });
  }

  record(id: string, how: string): void {
    this.events.push(`${id}: ${how}`);
  }

  /** The vector ids that fired, each with how. */
  fired(): Map<string, string[]> {
    const byId = new Map<string, string[]>();
    for (const event of this.events) {
      const [id, how] = event.split(/: (.*)/s) as [string, string];
      byId.set(id, [...(byId.get(id) ?? []), how]);
    }
    return byId;
  }

  assertNothingFired(where: string): void {
    const fired = this.fired();
    const named = [...fired].map(
      ([id, how]) => `  #${id} ${vectorName(id)}: ${[...new Set(how)].join('; ')}`,
    );
    assert.equal(fired.size, 0, `payloads ran ${where}:\n${named.join('\n')}`);
  }

  /** Whether vector `id` has logged its line and opened its dialog. */
  hasFired(id: number): boolean {
    const how = this.fired().get(String(id)) ?? [];
    return how.some((h) => h.startsWith('console')) && how.some((h) => h.endsWith('dialog'));
  }

  /**
   * For controls: pokes again until vector `v` has fired or `ms` have passed, since on a busy
   * machine a click can land before a fresh frame takes input, or a navigation outlast the settle.
   * The wait is long because a vector that fires ends it at once; only a broken detector waits it out.
   */
  async untilFired(v: XssVector, again: () => Promise<void>, ms = 15_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!this.hasFired(v.id) && Date.now() < deadline) await again();
  }

  /** Every one of `vectors` ran its payload: the console line and the dialog, at least. */
  assertAllFired(vectors: readonly XssVector[], where: string): void {
    const missing = vectors.filter((v) => !this.hasFired(v.id));
    assert.deepEqual(
      missing.map((v) => `#${v.id} ${v.name}`),
      [],
      `these vectors did not fire ${where}, so the detector cannot be trusted for them`,
    );
  }
}

function xssPath(url: string): string | null {
  try {
    const match = /^\/xss\/([^/?#]+)/.exec(new URL(url).pathname);
    return match ? decodeURIComponent(match[1]!) : null;
  } catch {
    return null;
  }
}

function vectorName(id: string): string {
  return XSS_VECTORS.find((v) => String(v.id) === id)?.name ?? '';
}

/**
 * Runs `visit` over `items` in a few tabs of `context`. A tab that a live vector closed or
 * crashed is replaced and its item visited once more; every tab finishes before the first real
 * failure is reported, so one failure is not hidden behind the others' "target closed".
 */
async function inTabs<T>(
  context: BrowserContext,
  items: readonly T[],
  visit: (page: Page, item: T) => Promise<void>,
  tabs = TABS,
) {
  const queue = [...items];
  const closed = (error: unknown) => /has been closed|Target closed|crashed/i.test(String(error));
  const results = await Promise.allSettled(
    Array.from({ length: Math.min(tabs, queue.length) }, async () => {
      let page = await context.newPage();
      try {
        for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
          try {
            await visit(page, item);
          } catch (error) {
            if (!closed(error) || !page.isClosed()) throw error;
            page = await context.newPage();
            await visit(page, item);
          }
        }
      } finally {
        await page.close().catch(() => {});
      }
    }),
  );
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
  const first = failed.find((r) => !closed(r.reason)) ?? failed[0];
  if (first) throw first.reason;
}

/**
 * Navigates, first settling the tab on a blank page so a navigation the last vector started (a
 * form, a link) cannot land on top of this one, and retrying when one still gets in the way.
 */
async function open(page: Page, url: string) {
  for (let attempt = 0; ; attempt++) {
    try {
      await page.goto('about:blank', { waitUntil: 'load' }).catch(() => {});
      return await page.goto(url, { waitUntil: 'load' });
    } catch (error) {
      if (attempt >= 4 || !/ERR_ABORTED|interrupted by another navigation/.test(String(error))) throw error;
      await page.waitForLoadState('load').catch(() => {});
      await new Promise((resolve) => setTimeout(resolve, 100 * (attempt + 1)));
    }
  }
}

/** The text and visibility of `#ok-<id>` in a document. */
async function harmlessIn(
  target: Page | Frame,
  id: number,
): Promise<{ text: string; visible: boolean } | null> {
  return target.evaluate((selector) => {
    const el = document.querySelector<HTMLElement>(selector);
    return el
      ? { text: el.innerText.trim(), visible: el.checkVisibility({ visibilityProperty: true }) }
      : null;
  }, `#ok-${id}`);
}

/**
 * The harmless content of `v` is shown in `target`. A frame the shell has just loaded again can be
 * laid out a moment later, so the check waits (up to 5 s) for the paragraph to show before asserting.
 */
async function assertHarmless(target: Page | Frame, v: XssVector, where: string) {
  await target
    .waitForFunction(
      (selector) =>
        document.querySelector<HTMLElement>(selector)?.checkVisibility({ visibilityProperty: true }),
      `#ok-${v.id}`,
      { timeout: 5_000 },
    )
    .catch(() => {});
  assert.deepEqual(
    await harmlessIn(target, v.id),
    { text: harmlessText(v.id), visible: true },
    `the harmless content of #${v.id} ${v.name} is not shown ${where}`,
  );
}

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}

/**
 * Moves the pointer onto the middle of `box` (the viewport when absent) and clicks there, which
 * hovers, enters and clicks whatever covers it, then gives timers and navigations a moment.
 */
async function poke(page: Page, box?: Box) {
  const { x, y, width, height } = box ?? {
    x: 0,
    y: 0,
    ...(page.viewportSize() ?? { width: 800, height: 600 }),
  };
  // From a corner to the middle, so every poke moves the mouse over the page before it clicks.
  await page.mouse.move(x + 2, y + 2).catch(() => {});
  await page.mouse.click(x + width / 2, y + height / 2).catch(() => {});
  await page.waitForTimeout(SETTLE_MS);
}

interface Shell {
  title: string | null;
  frames: number;
  sandbox: string | null;
  src: string | null;
  box: Box;
}

/** What the frame shell shows, read in one go. */
function readShell(page: Page): Promise<Shell> {
  return page.evaluate(() => {
    const iframe = document.querySelector('iframe');
    const rect = iframe?.getBoundingClientRect();
    return {
      title: document.querySelector('main h1')?.textContent ?? null,
      frames: document.querySelectorAll('iframe').length,
      sandbox: iframe?.getAttribute('sandbox') ?? null,
      src: iframe?.getAttribute('src') ?? null,
      box: { x: rect?.x ?? 0, y: rect?.y ?? 0, width: rect?.width ?? 0, height: rect?.height ?? 0 },
    };
  });
}

/** The one frame directly inside the shell page. */
function childFrame(page: Page): Frame {
  const frames = page.mainFrame().childFrames();
  assert.equal(frames.length, 1, `expected one frame in the shell at ${page.url()}`);
  return frames[0]!;
}

/**
 * Resolves once a frame of the page has loaded a document from `origin`: the app draws its frame
 * after the page's data arrives, so the frame shows up a moment after the shell has loaded.
 */
async function frameShown(page: Page, origin: string): Promise<Frame> {
  const frame = await page.waitForEvent('framenavigated', {
    predicate: (f) => f.parentFrame() !== null && f.url().startsWith(`${origin}/`),
  });
  await frame.waitForLoadState('load');
  return frame;
}

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** A plain local HTTP server with no policy headers; requests to /xss/ are handed to `onXss`. */
async function localServer(
  host: string,
  onXss: (id: string, url: string) => void,
  handle: Handler,
): Promise<{ server: Server; origin: string }> {
  const server = createServer((req, res) => {
    const url = req.url ?? '/';
    const id = xssPath(`http://local${url}`);
    if (id !== null) {
      onXss(id, url);
      res.writeHead(204).end();
      return;
    }
    handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, resolve);
  });
  return { server, origin: `http://${host}:${(server.address() as AddressInfo).port}` };
}

function sendHtml(res: ServerResponse, html: string | undefined) {
  if (html === undefined) {
    res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found');
    return;
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(html);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

/** A port free on `host`, as the OS hands one out. */
async function freePort(host: string): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen(0, host, resolve);
  });
  const { port } = probe.address() as AddressInfo;
  await closeServer(probe);
  return port;
}

/** The real server on free ports; with no PAGES_ORIGIN the pages origin is PORT+1. */
async function startOnFreePorts(
  h: Harness,
  dataDir: string,
  host: string,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePort(host);
    try {
      return await startServer(
        loadConfig({ TANDEM_DATA: dataDir, PORT: String(port), HOST: host, LOG_LEVEL: 'error', ...env }),
        h.services,
      );
    } catch (error) {
      if (attempt >= 5 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
}

/** A browser context signed in to `server` by its session cookie. */
async function signedIn(browser: Browser, h: Harness, server: RunningServer, detector: Detector) {
  const [ada] = await h.services.accounts.memberships('ada@acme.test');
  const { secret } = await h.services.sessions.create(ada!);
  // A token for fetching the same pages outside the browser.
  const { token } = await h.services.tokens.create(
    ada!.personId,
    ada!.workspaceId,
    ['documents:read'],
    3_600_000,
  );
  const context = await browser.newContext();
  await context.addCookies([{ name: 'tandem_session', value: secret, url: server.url }]);
  detector.watch(context);
  return { context, token };
}

const titleFor = (v: XssVector) => `Vector ${v.id} "><img src="x:" onerror="${payload(`title-${v.id}`)}">`;

interface StoredPage {
  vector: XssVector;
  pageId: string;
  title: string;
}

const SKIP = process.env.TANDEM_TEST_BROWSER === 'skip' ? 'TANDEM_TEST_BROWSER=skip' : false;

describe('the page viewer in a browser', { skip: SKIP }, () => {
  let browser: Browser;
  let h: Harness;
  let dataDir: string;
  let stored: StoredPage[];
  let allInOne: StoredPage;

  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, args: LAUNCH_ARGS });
    h = await setup(DATABASES[0]!);
    dataDir = await mkdtemp(join(tmpdir(), 'tandem-viewer-'));
    const ada = await h.as('ada@acme.test');
    const create = async (vector: XssVector, title: string, html: string): Promise<StoredPage> => {
      const r = await ada.call('create_page', { title, html });
      assert.equal(r.isError, false, r.text);
      return { vector, pageId: String(r.structured?.page_id), title };
    };
    stored = [];
    for (const v of XSS_VECTORS) stored.push(await create(v, titleFor(v), vectorPage(v)));
    allInOne = await create(XSS_VECTORS[0]!, 'Every vector at once', allVectorsPage());
    const read = await ada.call('read_page', { page_id: stored[0]!.pageId });
    assert.equal(read.structured?.html, vectorPage(XSS_VECTORS[0]!), 'pages are stored verbatim');
  });

  after(async () => {
    await browser?.close();
    await h?.close();
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  it(`has at least 60 vectors, each with a unique id`, () => {
    assert.ok(XSS_VECTORS.length >= 60, `only ${XSS_VECTORS.length} vectors`);
    assert.equal(new Set(XSS_VECTORS.map((v) => v.id)).size, XSS_VECTORS.length);
    assert.ok(LIVE.length >= 40 && FRAME_CONTROLS.length >= 15, 'too few live vectors to prove the detector');
  });

  describe('end to end: stored pages opened through /pages/{id}', () => {
    let server: RunningServer;
    let context: BrowserContext;
    const detector = new Detector();

    before(async () => {
      server = await startOnFreePorts(h, dataDir, APP_HOST);
      assert.equal(new URL(server.pagesUrl).port, String(Number(new URL(server.url).port) + 1));
      ({ context } = await signedIn(browser, h, server, detector));
    });
    after(async () => {
      await context?.close();
      await server?.close();
    });

    /** Opens the shell for `page` and checks the frame, its policy and the harmless content. */
    async function openViewer(tab: Page, page: StoredPage): Promise<{ frame: Frame; shell: Shell }> {
      const [viewResponse, shellResponse] = await Promise.all([
        tab.waitForResponse((r) => r.url().startsWith(`${server.pagesUrl}/view/`)),
        open(tab, `${server.url}/pages/${encodeURIComponent(page.pageId)}`),
        frameShown(tab, server.pagesUrl),
      ]);
      assert.equal(shellResponse?.status(), 200, `GET /pages/${page.pageId}`);
      await tab.waitForFunction(
        (origin) => document.querySelector('iframe')?.getAttribute('src')?.startsWith(origin) === true,
        server.pagesUrl,
      );
      const shell = await readShell(tab);
      assert.equal(shell.title, page.title, 'the title is shown as text');
      assert.equal(shell.frames, 1);
      const sandbox = (shell.sandbox ?? '').split(/\s+/);
      assert.ok(shell.sandbox !== null, 'the frame is sandboxed');
      assert.ok(!sandbox.includes('allow-scripts'), `sandbox="${shell.sandbox}" allows scripts`);
      assert.ok(!sandbox.includes('allow-same-origin'), `sandbox="${shell.sandbox}" allows same-origin`);
      assert.equal(new URL(shell.src ?? '').origin, server.pagesUrl, 'the frame loads from the pages origin');

      assert.equal(viewResponse.status(), 200);
      const csp = viewResponse.headers()['content-security-policy'] ?? '';
      assert.match(csp, /(^|;)\s*script-src 'none'\s*(;|$)/, `the /view policy is ${csp}`);

      const frame = childFrame(tab);
      assert.equal(new URL(frame.url()).origin, server.pagesUrl);
      return { frame, shell };
    }

    it('runs no vector, and shows each page’s harmless content', async () => {
      await inTabs(context, stored, async (tab, page) => {
        const { frame, shell } = await openViewer(tab, page);
        await assertHarmless(frame, page.vector, 'through the viewer');
        await poke(tab, shell.box);
      });
      detector.assertNothingFired('through the real viewer');
    });

    it('runs nothing from a page holding every vector at once', async () => {
      const tab = await context.newPage();
      try {
        const { frame, shell } = await openViewer(tab, allInOne);
        for (const v of XSS_VECTORS) await assertHarmless(frame, v, 'in the page holding every vector');
        await poke(tab, shell.box);
      } finally {
        await tab.close();
      }
      detector.assertNothingFired('through the real viewer, all vectors in one page');
    });
  });

  describe('the sanitiser alone: its output in a page with no sandbox and no policy', () => {
    let local: { server: Server; origin: string };
    const detector = new Detector();
    const clean = new Map<number, string>();
    const raw = new Map<number, string>();

    before(async () => {
      for (const v of XSS_VECTORS) {
        clean.set(v.id, await sanitizePage(vectorPage(v)));
        raw.set(v.id, vectorPage(v));
      }
      local = await localServer(
        APP_HOST,
        (id, url) => detector.record(id, `server saw ${url}`),
        (req, res) => {
          const match = /^\/(clean|raw)\/(\d+)/.exec(req.url ?? '');
          sendHtml(res, match ? (match[1] === 'clean' ? clean : raw).get(Number(match[2])) : undefined);
        },
      );
    });
    after(async () => {
      if (local) await closeServer(local.server);
    });

    async function visitAll(kind: 'clean' | 'raw', vectors: readonly XssVector[]) {
      const context = await browser.newContext();
      detector.watch(context);
      try {
        await inTabs(context, vectors, async (tab, v) => {
          await open(tab, `${local.origin}/${kind}/${v.id}`);
          await assertHarmless(tab, v, `in the ${kind} page`);
          await poke(tab);
          if (kind === 'raw') await detector.untilFired(v, () => poke(tab));
        });
      } finally {
        await context.close();
      }
    }

    it('control: raw vectors loaded this way do fire', async () => {
      await visitAll('raw', LIVE);
      detector.assertAllFired(LIVE, 'as raw top-level pages');
    });

    it('runs no vector once sanitised, and keeps the harmless content', async () => {
      detector.events.length = 0;
      await visitAll('clean', XSS_VECTORS);
      detector.assertNothingFired('from sanitised output with no sandbox and no policy');
    });
  });

  describe('the sandbox alone: raw vectors with no policy, through the real frame shell', () => {
    let rawPages: { server: Server; origin: string };
    let server: RunningServer;
    let context: BrowserContext;
    const detector = new Detector();
    const rawById = new Map<string, string>();
    const pageFor = new Map<number, StoredPage>();

    before(async () => {
      for (const page of stored) {
        rawById.set(page.pageId, vectorPage(page.vector));
        pageFor.set(page.vector.id, page);
      }
      rawById.set(allInOne.pageId, allVectorsPage());
      // Stands in for the pages origin: serves each page's stored source as is, with no headers.
      rawPages = await localServer(
        APP_HOST,
        (id, url) => detector.record(id, `raw pages server saw ${url}`),
        (req, res) => {
          const match = /^\/view\/([^/?#]+)/.exec(req.url ?? '');
          sendHtml(res, match ? rawById.get(decodeURIComponent(match[1]!)) : undefined);
        },
      );
      server = await startOnFreePorts(h, dataDir, SECOND_HOST, { PAGES_ORIGIN: rawPages.origin });
      assert.equal(server.pagesUrl, rawPages.origin);
      ({ context } = await signedIn(browser, h, server, detector));
    });
    after(async () => {
      await context?.close();
      await server?.close();
      if (rawPages) await closeServer(rawPages.server);
    });

    const viewed = (tab: Page) => frameShown(tab, rawPages.origin);

    /**
     * Opens the app's viewer for `page`. For the control, the frame's sandbox attribute is then
     * taken out and the frame loaded again (a sandbox applies from the frame's next navigation).
     */
    async function visit(tab: Page, page: StoredPage, control = false) {
      const [, response] = await Promise.all([
        viewed(tab),
        open(tab, `${server.url}/pages/${encodeURIComponent(page.pageId)}`),
      ]);
      assert.equal(response?.status(), 200);
      if (control) {
        await Promise.all([
          viewed(tab),
          tab.evaluate(() => {
            const frame = document.querySelector('iframe')!;
            frame.removeAttribute('sandbox');
            frame.setAttribute('src', frame.getAttribute('src')!);
          }),
        ]);
      }
      // The app may draw its frame again as its data settles: wait until the shell and its one
      // frame both point at the raw stand-in before reading them.
      await tab.waitForFunction(
        (origin) => document.querySelector('iframe')?.getAttribute('src')?.startsWith(`${origin}/`) === true,
        rawPages.origin,
      );
      await until(
        () => tab.mainFrame().childFrames()[0]?.url().startsWith(`${rawPages.origin}/`) === true,
        'the shell’s frame shows the raw stand-in',
      );
      const shell = await readShell(tab);
      assert.equal(new URL(shell.src ?? '').origin, rawPages.origin, 'the shell frames the raw stand-in');
      assert.equal(shell.sandbox === null, control, 'only the control frame is without its sandbox');
      const frame = childFrame(tab);
      assert.equal(
        new URL(frame.url()).origin,
        rawPages.origin,
        `#${page.vector.id}: the frame shows ${frame.url()}`,
      );
      // The control proves the detector: its live vectors may hide or move the page's content, so
      // only the sandboxed frame is held to showing it.
      if (!control) await assertHarmless(frame, page.vector, 'in the raw frame');
      await poke(tab, shell.box);
      // Hidden tabs run no CSS animations and show no dialogs: the control's one tab is brought to
      // the front before every poke.
      if (control)
        await detector.untilFired(page.vector, async () => {
          await tab.bringToFront();
          await poke(tab, shell.box);
        });
    }

    it('runs no raw vector inside the sandboxed frame', async () => {
      await inTabs(context, [...stored, allInOne], (tab, page) => visit(tab, page));
      detector.assertNothingFired('from raw pages in the sandboxed frame');
    });

    it('control: the same shell without the sandbox attribute lets them fire', async () => {
      detector.events.length = 0;
      const shellContext = (await signedIn(browser, h, server, detector)).context;
      try {
        const pages = FRAME_CONTROLS.map((v) => pageFor.get(v.id)!);
        // One tab: a vector that fires once on being shown (an animation) must not lose the front,
        // and a hidden tab shows no dialog.
        await inTabs(shellContext, pages, (tab, page) => visit(tab, page, true), 1);
      } finally {
        await shellContext.close();
      }
      detector.assertAllFired(FRAME_CONTROLS, 'in the shell without its sandbox attribute');
    });
  });
});
