import { Hono } from 'hono';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import type { Config } from '../config.ts';
import type { PageLinkSigner } from './page-links.ts';
import { sanitizePage } from './sanitize.ts';
import { requestActor } from './auth.ts';
import { escapeHtml, htmlPage } from './html.ts';

/** The sandbox for viewed pages: no scripts, no same-origin, only popups for links. */
export const FRAME_SANDBOX = 'allow-popups allow-popups-to-escape-sandbox';

/** What a viewed page may load: pictures, media, styles and fonts; never scripts, plugins or forms. */
export function pageCsp(appOrigin: string): string {
  return [
    "default-src 'none'",
    'img-src * data: blob:',
    'media-src * data: blob:',
    "style-src * 'unsafe-inline'",
    'font-src * data:',
    "script-src 'none'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${appOrigin}`,
    `sandbox ${FRAME_SANDBOX}`,
  ].join('; ');
}

/** `GET /pages/{id}` on the app: the page's frame, its source from the pages origin. */
export function viewerRoutes(services: Services, config: Config, signer: PageLinkSigner) {
  const app = new Hono();
  app.get('/pages/:id', async (c) => {
    const actor = await requestActor(services, c);
    if (!actor) return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`);
    let page;
    try {
      page = await services.pages.read(actor, c.req.param('id'));
    } catch (error) {
      if (error instanceof DomainError) {
        const status = error.code === 'not_found' ? 404 : 409;
        return c.html(htmlPage('Page', `<p class="note">${escapeHtml(error.message)}</p>`), status);
      }
      throw error;
    }
    const src = config.pagesOrigin + signer.sign(page.page_id, page.version);
    const body = `<header><h1>${escapeHtml(page.title)}</h1><span>version ${page.version}</span></header>
<iframe title="${escapeHtml(page.title)}" sandbox="${FRAME_SANDBOX}" referrerpolicy="no-referrer" src="${escapeHtml(src)}"></iframe>`;
    c.header(
      'Content-Security-Policy',
      `default-src 'none'; style-src 'unsafe-inline'; frame-src ${config.pagesOrigin}; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    );
    return c.html(htmlPage(page.title, body, { frame: true }));
  });
  return app;
}

/** The pages origin: serves one signed page version, sanitised, under a strict policy. */
export function pagesOriginApp(services: Services, config: Config, signer: PageLinkSigner) {
  const app = new Hono();
  const appOrigin = new URL(config.publicUrl).origin;
  app.get('/view/:id', async (c) => {
    const id = c.req.param('id');
    const version = Number(c.req.query('v'));
    const exp = Number(c.req.query('exp'));
    const sig = c.req.query('sig') ?? '';
    if (!signer.verify(id, version, exp, sig))
      return c.text('This link has expired; reload the page in Tandem.', 403);
    const source = await services.pages.sourceAt(id, version);
    if (!source) return c.text('Not found', 404);
    c.header('Content-Security-Policy', pageCsp(appOrigin));
    c.header('X-Content-Type-Options', 'nosniff');
    c.header('Referrer-Policy', 'no-referrer');
    c.header('Cache-Control', 'private, max-age=600');
    return c.html(await sanitizePage(source.html));
  });
  app.all('*', (c) => c.text('Not found', 404));
  return app;
}
