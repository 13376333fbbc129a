import { Hono } from 'hono';
import { collabTickets, type CollabTickets } from '../collab/tickets.ts';
import { collabTicket } from '../contract/documents.ts';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Services } from '../services.ts';
import { requestCredential } from './auth.ts';
import { jsonBodiesOnly } from './guards.ts';
import { defineRoute, mountRoutes } from './route.ts';

const tickets = new WeakMap<Services, CollabTickets>();
const ticketsOf = (services: Services) => {
  let made = tickets.get(services);
  if (!made) tickets.set(services, (made = collabTickets(services.deps.db)));
  return made;
};

/**
 * `POST /api/collab/tickets` `{"document_id"}` → `{ticket, expires_at}`: a one-minute ticket that
 * opens one document on the live socket (`/collab`) once, for a signed-in browser (whose cookie
 * the socket never sees); each connection asks for a ticket of its own. Only for a document the
 * person can open; anything else is not found.
 */
export const collabTicketRoutes = [
  defineRoute({
    ...collabTicket,
    // Below this app's mount point, /api/collab.
    path: '/tickets',
    description: 'a ticket for the live-editing socket: one connection to one document, within a minute',
    scopes: ['documents:read'],
    bodyHint: 'Send JSON: {"document_id": "..."}',
    handler: async ({ services, actor, credential, body }) => {
      const { documentId } = await services.documents.live.access(actor, body.document_id);
      return ticketsOf(services).issue(actor, documentId, credential);
    },
  }),
];

/** The ticket route, mounted at `/api/collab`, authenticated as the rest of the JSON API is. */
export function collabTicketApp(services: Services) {
  const app = new Hono<{ Variables: { credential: Credential } }>();
  app.use('*', async (c, next) => {
    const credential = await requestCredential(services, c);
    if (!credential) {
      return c.json(
        { error: 'unauthenticated', message: 'Sign in at /login, or send Authorization: Bearer <token>.' },
        401,
      );
    }
    c.set('credential', credential);
    await next();
  });
  app.use('*', jsonBodiesOnly());
  mountRoutes(app as unknown as Hono, '/api/collab', collabTicketRoutes, services, async (c) =>
    c.get('credential'),
  );
  return app;
}
