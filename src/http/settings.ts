import { Hono, type Context } from 'hono';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Services } from '../services.ts';
import { requestCredential } from './auth.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { workspaceSelect } from './login.ts';
import { clientAddress } from './client-address.ts';
import { SCOPE_IN_WORDS } from './scopes.ts';

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

function section(id: string, title: string, body: string): string {
  return `<section aria-labelledby="${id}"><h2 id="${id}">${title}</h2>${body}</section>`;
}

/** What the page says after a change (Post/Redirect/Get, so reloading repeats nothing). */
const NOTICES = {
  app: 'The app was disconnected.',
  token: 'The token was revoked.',
  password: 'Your password was changed; other browsers were signed out.',
};

const revokeButton = (action: string) =>
  `<form method="post" action="${escapeHtml(action)}"><button>Revoke</button></form>`;

/**
 * `/settings`: the signed-in person's password, connected apps and access tokens, each app and
 * token with `Revoke`. Every change is a form POST from this page (same-origin checked) and
 * goes through the same domain calls as the JSON API.
 */
export function settingsRoutes(services: Services) {
  const app = new Hono();

  /** The browser's session, or the answer that sends it to sign in first. */
  async function signedIn(c: Context): Promise<Credential | Response> {
    const credential = await requestCredential(services, c);
    if (credential?.kind === 'session') return credential;
    return c.redirect('/login?next=%2Fsettings', 303);
  }

  async function page(credential: Credential, notice?: string): Promise<string> {
    const { actor } = credential;
    const [{ me, workspaces }, apps, tokens] = await Promise.all([
      services.accounts.whoIs(actor.personId),
      services.grants.list(actor.personId),
      services.tokens.list(actor.personId),
    ]);
    const switcher =
      workspaces.length > 1
        ? `<form method="post" action="/settings/workspace" class="row">${workspaceSelect(workspaces, me.workspaceId)}<button>Switch</button></form>`
        : '';
    const password = `<form method="post" action="/settings/password" class="stack">
<label for="current_password">Current password</label>
<input id="current_password" name="current_password" type="password" autocomplete="current-password" required>
<label for="new_password">New password</label>
<input id="new_password" name="new_password" type="password" autocomplete="new-password" minlength="8" required>
<button>Change password</button>
</form>`;
    const appList = apps.length
      ? `<ul class="items">${apps
          .map(
            (
              a,
            ) => `<li><div><strong>${escapeHtml(a.client_name)}</strong> <span class="note">${escapeHtml(a.redirect_host)} · connected ${day(a.created_at)}</span>
<br><span class="note">${a.scopes.map((s) => escapeHtml(SCOPE_IN_WORDS[s])).join('; ')}</span></div>${revokeButton(`/settings/apps/${a.grant_id}/revoke`)}</li>`,
          )
          .join('')}</ul>`
      : '<p class="note">No apps are connected. An MCP client connects by signing you in here.</p>';
    const tokenList = tokens.length
      ? `<ul class="items">${tokens
          .map(
            (t) =>
              `<li><div><code>${escapeHtml(t.token_id)}</code> <span class="note">${escapeHtml(t.scopes.join(', '))} · made ${day(t.created_at)} · ${t.expires_at === null ? 'never expires' : `expires ${day(t.expires_at)}`}</span></div>${revokeButton(`/settings/tokens/${t.token_id}/revoke`)}</li>`,
          )
          .join('')}</ul>`
      : '<p class="note">No personal access tokens. Make one with <code>tandem token create</code>.</p>';
    return `<h1>Settings</h1>
<p>Signed in as ${escapeHtml(me.name)} (${escapeHtml(me.email)}) in ${escapeHtml(me.workspace)}.</p>
${notice ? `<p role="status">${escapeHtml(notice)}</p>` : ''}${switcher}
${section('password-heading', 'Password', password)}
${section('apps-heading', 'Connected apps', appList)}
${section('tokens-heading', 'Access tokens', tokenList)}
<form method="post" action="/logout"><button>Sign out</button></form>`;
  }

  app.get('/settings', async (c) => {
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    const done = c.req.query('done');
    const notice = done && Object.hasOwn(NOTICES, done) ? NOTICES[done as keyof typeof NOTICES] : undefined;
    return c.html(htmlPage('Settings', await page(credential, notice)));
  });

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
