import { Hono } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import type { Config } from '../config.ts';
import type { Membership } from '../domains/auth/accounts.ts';
import { DomainError } from '../errors.ts';
import type { Services } from '../services.ts';
import { requestCredential, SESSION_COOKIE } from './auth.ts';
import { statusOf } from './errors.ts';
import { escapeHtml, htmlPage } from './html.ts';
import { clientAddress } from './client-address.ts';
import { CONSENT_PATH } from './oauth/paths.ts';

const SIGN_OUT_FORM = '<form method="post" action="/logout"><button>Sign out</button></form>';

/**
 * Where a sign-in may lead: `next` resolved against the app origin exactly as a browser resolves
 * a link (WHATWG URL parsing: backslashes, tabs and newlines, `//`, other schemes), accepted only
 * when the result is on the app origin; anything else leads to `/`. The answer is the path, query
 * and fragment of the resolved URL, never a form a browser could read as another host.
 */
export function safeNext(next: string | undefined, appOrigin: string): string {
  if (!next) return '/';
  let target: URL;
  try {
    target = new URL(next, `${appOrigin}/`);
  } catch {
    return '/';
  }
  if (target.origin !== appOrigin) return '/';
  const path = `${target.pathname}${target.search}${target.hash}`;
  // `/.//host` normalises to `//host`, which a Location header would read as another host.
  return path.startsWith('//') ? '/' : path;
}

const field = (form: Record<string, unknown>, name: string) =>
  typeof form[name] === 'string' ? (form[name] as string) : '';

function signInForm(next: string, email = '', problem?: string): string {
  return `<h1>Sign in to Tandem</h1>
${problem ? `<p class="problem" role="alert">${escapeHtml(problem)}</p>` : ''}
<form method="post" action="/login" class="stack">
<input type="hidden" name="next" value="${escapeHtml(next)}">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" value="${escapeHtml(email)}" required${email ? '' : ' autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required${email ? ' autofocus' : ''}>
<button class="primary">Sign in</button>
</form>`;
}

/**
 * Where a signed-in form goes next. A connection request's consent page may end at once at the
 * app's own redirect URI (nothing new to allow), and a browser holds every redirect after a form
 * post to the form's `form-action 'self'`; so such a sign-in goes on by a GET from a page of its
 * own, which starts a fresh navigation the client's redirect is allowed in.
 */
function afterForm(next: string): string {
  return next.startsWith(`${CONSENT_PATH}/`) ? `/login/continue?next=${encodeURIComponent(next)}` : next;
}

/** The select a person in several workspaces chooses one with (at sign-in and on the consent page). */
export function workspaceSelect(workspaces: Membership[], current: string): string {
  const options = workspaces
    .map(
      (w) =>
        `<option value="${escapeHtml(w.workspaceId)}"${w.workspaceId === current ? ' selected' : ''}>${escapeHtml(w.workspace)}</option>`,
    )
    .join('');
  return `<label for="workspace">Workspace</label>\n<select id="workspace" name="workspace">${options}</select>`;
}

/** Sign-in with e-mail and password, choosing a workspace, and signing out (Home is the web app). */
export function signInRoutes(services: Services, config: Config) {
  const app = new Hono();
  const publicUrl = new URL(config.publicUrl);
  const appOrigin = publicUrl.origin;
  const secure = publicUrl.protocol === 'https:';

  app.get('/login', (c) => c.html(htmlPage('Sign in', signInForm(safeNext(c.req.query('next'), appOrigin)))));

  app.post('/login', async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(field(form, 'next') || undefined, appOrigin);
    const email = field(form, 'email').trim();
    let memberships: Membership[];
    try {
      memberships = await services.accounts.signIn(email, field(form, 'password'), clientAddress(c));
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      const retry = error.data?.retry_after_seconds;
      if (typeof retry === 'number') c.header('Retry-After', String(retry));
      return c.html(htmlPage('Sign in', signInForm(next, email, error.message)), statusOf(error.code));
    }
    const first = memberships[0]!;
    // A browser that signs in again leaves its old session behind: it ends here.
    const previous = getCookie(c, SESSION_COOKIE);
    const stale = previous ? await services.sessions.verify(previous) : null;
    if (stale) await services.sessions.revoke(stale.sessionId).catch(() => undefined);
    const session = await services.sessions.create(first);
    setCookie(c, SESSION_COOKIE, session.secret, {
      httpOnly: true,
      sameSite: 'Lax',
      path: '/',
      secure,
      expires: new Date(session.expiresAt),
    });
    if (memberships.length > 1) return c.redirect(`/login/workspace?next=${encodeURIComponent(next)}`, 303);
    return c.redirect(afterForm(next), 303);
  });

  // A person in several workspaces picks the one this browser acts in.
  app.get('/login/workspace', async (c) => {
    const next = safeNext(c.req.query('next'), appOrigin);
    const credential = await requestCredential(services, c);
    if (credential?.kind !== 'session') return c.redirect(`/login?next=${encodeURIComponent(next)}`);
    const { workspaces } = await services.accounts.whoIs(credential.actor.personId);
    return c.html(
      htmlPage(
        'Choose a workspace',
        `<h1>Choose a workspace</h1>
<form method="post" action="/login/workspace" class="stack">
<input type="hidden" name="next" value="${escapeHtml(next)}">
${workspaceSelect(workspaces, credential.actor.workspaceId)}
<button class="primary">Continue</button>
</form>`,
      ),
    );
  });

  app.post('/login/workspace', async (c) => {
    const form = await c.req.parseBody();
    const next = safeNext(field(form, 'next') || undefined, appOrigin);
    const credential = await requestCredential(services, c);
    if (credential?.kind !== 'session') return c.redirect(`/login?next=${encodeURIComponent(next)}`, 303);
    await services.sessions.switchWorkspace(credential.credentialId, field(form, 'workspace'));
    return c.redirect(afterForm(next), 303);
  });

  // The GET continuation after a sign-in form (see afterForm): it moves on by itself (Refresh),
  // and names where to in a link for a browser that does not follow a refresh.
  app.get('/login/continue', (c) => {
    const next = safeNext(c.req.query('next'), appOrigin);
    c.header('Cache-Control', 'no-store');
    c.header('Refresh', `0;url=${next}`);
    return c.html(
      htmlPage('Signed in', `<h1>Signed in</h1><p><a href="${escapeHtml(next)}">Continue</a></p>`),
    );
  });

  // Signing out changes state, so only a POST from the app's own pages does it.
  app.get('/logout', async (c) => {
    const credential = await requestCredential(services, c);
    return c.html(
      htmlPage(
        'Sign out',
        credential
          ? `<h1>Sign out of Tandem</h1>${SIGN_OUT_FORM}`
          : '<h1>Sign out of Tandem</h1><p>You are not signed in. <a href="/login">Sign in</a>.</p>',
      ),
    );
  });

  app.post('/logout', async (c) => {
    const secret = getCookie(c, SESSION_COOKIE);
    const session = secret ? await services.sessions.verify(secret) : null;
    if (session) await services.sessions.revoke(session.sessionId).catch(() => undefined);
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure });
    return c.redirect('/login', 303);
  });

  return app;
}
