import { Hono, type Context } from 'hono';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Services } from '../services.ts';
import { requestCredential } from './auth.ts';
import { jsonBodiesOnly } from './guards.ts';
import { mountRoutes, type AnyRoute } from './route.ts';
import { accountRoutes } from './routes/account.ts';
import { activityRoutes } from './routes/activity.ts';
import { agentRoutes } from './routes/agents.ts';
import { approvalRoutes } from './routes/approvals.ts';
import { automationRoutes } from './routes/automations.ts';
import { documentRoutes } from './routes/documents.ts';
import { documentVersionRoutes } from './routes/document-versions.ts';
import { draftRoutes } from './routes/drafts.ts';
import { personRoutes } from './routes/people.ts';
import { sharingRoutes } from './routes/sharing.ts';
import { threadStreams } from './thread-stream.ts';

/** Every route of the JSON API for people, in one list (mounted at `/api`). */
export const API_ROUTES: readonly AnyRoute[] = [
  ...activityRoutes,
  ...approvalRoutes,
  ...accountRoutes,
  ...automationRoutes,
  ...draftRoutes,
  ...documentRoutes,
  ...documentVersionRoutes,
  ...agentRoutes,
  ...personRoutes,
  ...sharingRoutes,
];

/** `/api`: the JSON API for people, by personal access token or the browser's session cookie. */
export function apiRoutes(
  services: Services,
  resourceMetadataUrl: string,
  /** Routes made for this server (the page viewer's, which sign links with its key). */
  more: readonly AnyRoute[] = [],
) {
  const api = new Hono<{ Variables: { credential: Credential } }>();
  const unauthenticated = (c: Context) => {
    c.header('WWW-Authenticate', `Bearer resource_metadata="${resourceMetadataUrl}"`);
    return c.json(
      {
        error: 'unauthenticated',
        message: 'Sign in at /login, or send Authorization: Bearer <token> (tandem token create).',
      },
      401,
    );
  };
  // Who is asking is settled first, so an anonymous request learns nothing else about the API.
  api.use('*', async (c, next) => {
    const credential = await requestCredential(services, c);
    if (!credential) return unauthenticated(c);
    c.set('credential', credential);
    await next();
  });
  api.use('*', jsonBodiesOnly());
  mountRoutes(api as unknown as Hono, '/api', [...API_ROUTES, ...more], services, async (c) =>
    c.get('credential'),
  );
  // Thread changes as they happen, for the app's comments (a server-sent stream, not JSON).
  api.get('/documents/:id/comments/stream', threadStreams(services));
  api.all('*', (c) =>
    c.json({ error: 'not_found', message: `No API route ${c.req.method} ${c.req.path}` }, 404),
  );
  return api;
}
