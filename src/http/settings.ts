import { Hono, type Context } from 'hono';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Services } from '../services.ts';
import { requestCredential } from './auth.ts';
import { clientAddress } from './client-address.ts';

/**
 * Plain form posts for `/settings` (revoking an app or a token, changing the password, switching
 * workspace), kept for pages and scripts that post forms; `/settings` itself is a page of the web
 * app, which does the same through the JSON API. Each goes through the same domain calls and comes
 * back to `/settings` (Post/Redirect/Get).
 */
export function settingsRoutes(services: Services) {
  const app = new Hono();

  /** The browser's session, or the answer that sends it to sign in first. */
  async function signedIn(c: Context): Promise<Credential | Response> {
    const credential = await requestCredential(services, c);
    if (credential?.kind === 'session') return credential;
    return c.redirect('/login?next=%2Fsettings', 303);
  }

  app.post('/settings/apps/:id/revoke', async (c) => {
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    await services.grants.revoke(c.req.param('id'), credential.actor.personId);
    return c.redirect('/settings?done=app', 303);
  });

  app.post('/settings/tokens/:id/revoke', async (c) => {
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    await services.tokens.revoke(c.req.param('id'), credential.actor.personId);
    return c.redirect('/settings?done=token', 303);
  });

  app.post('/settings/password', async (c) => {
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    const form = await c.req.parseBody();
    const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '');
    await services.accounts.changePassword(
      credential.email!,
      text('current_password'),
      text('new_password'),
      clientAddress(c),
    );
    await services.sessions.revokeOthers(credential.email!, credential.credentialId);
    return c.redirect('/settings?done=password', 303);
  });

  app.post('/settings/workspace', async (c) => {
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    const form = await c.req.parseBody();
    await services.sessions.switchWorkspace(credential.credentialId, String(form.workspace ?? ''));
    return c.redirect('/settings', 303);
  });

  return app;
}
