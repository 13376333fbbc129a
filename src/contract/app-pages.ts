/**
 * The app's own pages: each serves the web app, which draws the page from the JSON API. Reading
 * one changes nothing, so they are the only places on the app's origin that text people write
 * (a rendered document) may link to.
 */
export const APP_ROUTES = [
  '/',
  '/documents',
  '/documents/:id',
  '/pages/:id',
  '/automations',
  '/automations/:id',
  '/automations/drafts/:id',
  '/sessions/:id',
  '/notifications',
  '/activity',
  '/settings',
] as const;

const PATTERNS = APP_ROUTES.map(
  (route) => new RegExp(`^${route.replace(/:[a-z_]+/g, '[^/]+')}${route === '/' ? '' : '/?'}$`),
);

/** Whether a path (decoded, without query or fragment) is one of the app's pages. */
export const isAppPage = (path: string) => PATTERNS.some((p) => p.test(path));
