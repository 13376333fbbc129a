/**
 * The app's own pages: the server serves the web app on each (`src/http/web.ts`) and the app's
 * router draws one component per route (`web/src/app.tsx`), from the JSON API. Reading one
 * changes nothing, so they are the only places on the app's origin that text people write (a
 * rendered document) may link to.
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
export type AppRoute = (typeof APP_ROUTES)[number];

const PATTERNS = APP_ROUTES.map(
  (route) => new RegExp(`^${route.replace(/:[a-z_]+/g, '[^/]+')}${route === '/' ? '' : '/?'}$`),
);

/** Whether a path (decoded, without query or fragment) is one of the app's pages. */
export const isAppPage = (path: string) => PATTERNS.some((p) => p.test(path));
