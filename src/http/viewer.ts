import { Hono } from 'hono';
import type { Services } from '../services.ts';
import type { Config } from '../config.ts';
import type { PageFrame } from './routes/pages.ts';
import type { PageLinkSigner } from './page-links.ts';
import { sanitizePage } from './sanitize.ts';

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

/**
 * How the app frames a page version: a link signed for ten minutes to the pages origin, and the
 * sandbox the frame carries (the app's `/pages/{id}` route shows it; see `routes/pages.ts`).
 */
export function pageFrame(config: Pick<Config, 'pagesOrigin'>, signer: PageLinkSigner): PageFrame {
  return (pageId, version) => ({
    src: config.pagesOrigin + signer.sign(pageId, version),
    sandbox: FRAME_SANDBOX,
  });
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
