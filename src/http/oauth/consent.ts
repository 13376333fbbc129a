import type { HttpBindings } from '@hono/node-server';
import { Hono, type Context } from 'hono';
import type { Interaction } from 'oidc-provider';
import type { Membership } from '../../domains/auth/accounts.ts';
import type { Credential } from '../../domains/auth/credentials.ts';
import { grantedScopes } from '../../domains/auth/grants.ts';
import { SCOPES, type Scope } from '../../domains/workspace/actor.ts';
import type { Services } from '../../services.ts';
import { requestCredential } from '../auth.ts';
import { appPageCsp } from '../guards.ts';
import { escapeHtml, htmlPage } from '../html.ts';
import { workspaceSelect } from '../login.ts';
import { SCOPE_IN_WORDS } from '../scopes.ts';
import { CONSENT_PATH } from './paths.ts';
import type { AuthorizationServer } from './provider.ts';

type Env = { Bindings: HttpBindings };

interface Request {
  interaction: Interaction;
  /** Where the browser goes back to (the client's registered redirect URI, already checked). */
  redirectUri: string;
  clientId: string;
  clientName: string;
  redirectHost: string;
  /** How many redirect URIs the client has: with several, which one this is matters. */
  redirectCount: number;
  resource: string;
  /** The Tandem scopes the client asked for, and the OpenID ones (granted as asked). */
  requested: Scope[];
  oidcScopes: string[];
}

const isScope = (s: string): s is Scope => (SCOPES as readonly string[]).includes(s);

/**
 * The consent page's policy: its form posts here, and the redirects that follow end at the
 * client, so the client's redirect origin (or app scheme) is a permitted form target too.
 */
function consentCsp(redirectUri: string): string {
  const target = URL.parse(redirectUri);
  const source = !target
    ? ''
    : target.protocol === 'http:' || target.protocol === 'https:'
      ? ` ${target.origin}`
      : ` ${target.protocol}`;
  return appPageCsp().replace("form-action 'self'", `form-action 'self'${source}`);
}

/**
 * What this person already granted the client in one workspace for this redirect URI, and what
 * the request adds (everything it asks for, when the redirect URI is new).
 */
async function standing(services: Services, server: AuthorizationServer, request: Request, personId: string) {
  const grantId = await services.grants.find(personId, request.clientId, request.redirectUri);
  const grant = grantId ? await server.provider.Grant.find(grantId) : undefined;
  const granted = grant ? grantedScopes(grant as unknown as Record<string, unknown>, request.resource) : [];
  const missing = request.requested.filter((s) => !granted.includes(s));
  return { grant, granted, missing };
}

function consentPage(
  uid: string,
  request: Request,
  me: Membership,
  workspaces: Membership[],
  missing: Scope[],
  grantedBefore: boolean,
): string {
  const who = `<strong>${escapeHtml(me.name)}</strong> (${escapeHtml(me.email)})`;
  const host = `<strong>${escapeHtml(request.redirectHost)}</strong>`;
  const returnsTo =
    request.redirectCount > 1
      ? `<p class="redirect warning" id="redirect" role="note"><strong>This app can send you back to ${request.redirectCount} different addresses.</strong> This time it is ${host} (<code>${escapeHtml(request.redirectUri)}</code>). Allow only if that is where you expect to go back to.</p>`
      : `<p class="redirect" id="redirect">After you answer you go back to ${host} (<code>${escapeHtml(request.redirectUri)}</code>).</p>`;
  const chooser =
    workspaces.length > 1
      ? `<div class="stack">${workspaceSelect(workspaces, me.workspaceId)}</div>
<p class="note">Choosing another workspace shows what the app would get there before anything is allowed.</p>`
      : '';
  return `<h1>Connect ${escapeHtml(request.clientName)} to Tandem?</h1>
<p><strong>${escapeHtml(request.clientName)}</strong> (${escapeHtml(request.redirectHost)}) wants to act as ${who} in the <strong>${escapeHtml(me.workspace)}</strong> workspace.</p>
${returnsTo}
<form method="post" action="${CONSENT_PATH}/${escapeHtml(uid)}">
<input type="hidden" name="workspace_shown" value="${escapeHtml(me.workspaceId)}">
<input type="hidden" name="redirect_shown" value="${escapeHtml(request.redirectUri)}">
<input type="hidden" name="scopes_shown" value="${escapeHtml(missing.join(' '))}">
${chooser}
<h2 id="asked">It asks to</h2>
<ul aria-labelledby="asked">${missing.map((s) => `<li>${escapeHtml(SCOPE_IN_WORDS[s])}</li>`).join('')}</ul>
${grantedBefore ? '<p class="note">You allowed this app other things before; Settings lists everything it may do.</p>' : ''}
<p class="row"><button name="decision" value="allow" class="primary">Allow</button> <button name="decision" value="deny">Deny</button></p>
</form>`;
}

/**
 * `/consent/{uid}`: where every authorization request lands. It signs the person in (through
 * `/login`), lets a person of several workspaces choose one, and asks only for the scopes this
 * client does not hold yet; with nothing new to ask it goes straight back to the client.
 */
export function consentRoutes(services: Services, authorizationServer: () => Promise<AuthorizationServer>) {
  const app = new Hono<Env>();

  async function load(c: Context<Env>, server: AuthorizationServer): Promise<Request | Response> {
    const { provider } = server;
    let interaction: Interaction;
    try {
      interaction = await provider.interactionDetails(c.env.incoming, c.env.outgoing);
    } catch {
      return expired(c);
    }
    if (interaction.uid !== c.req.param('uid')) return expired(c);
    const params = interaction.params as Record<string, string | undefined>;
    const client = await provider.Client.find(params.client_id ?? '');
    if (!client) return expired(c);
    const asked = (params.scope ?? '').split(' ').filter(Boolean);
    return {
      interaction,
      clientId: client.clientId,
      clientName: client.clientName ?? client.clientId,
      redirectUri: params.redirect_uri ?? '',
      redirectHost: URL.parse(params.redirect_uri ?? '')?.host ?? '',
      redirectCount: client.redirectUris?.length ?? 1,
      resource: params.resource ?? server.resource,
      requested: SCOPES.filter((s) => asked.includes(s)),
      oidcScopes: asked.filter((s) => !isScope(s) && (s === 'openid' || s === 'offline_access')),
    };
  }

  function expired(c: Context<Env>) {
    return c.html(
      htmlPage(
        'Could not connect',
        '<h1>This request has expired</h1><p class="problem" role="alert">Go back to the app and connect again.</p>',
      ),
      400,
    );
  }

  async function signedIn(c: Context<Env>): Promise<Credential | Response> {
    const credential = await requestCredential(services, c);
    if (credential?.kind === 'session') return credential;
    return c.redirect(`/login?next=${encodeURIComponent(c.req.path)}`, 303);
  }

  /** Finishes the interaction and sends the browser back to the authorization server. */
  async function finish(c: Context<Env>, server: AuthorizationServer, result: Record<string, unknown>) {
    const to = await server.provider.interactionResult(c.env.incoming, c.env.outgoing, result, {
      mergeWithLastSubmission: false,
    });
    return c.redirect(to, 303);
  }

  async function allow(c: Context<Env>, server: AuthorizationServer, request: Request, me: Membership) {
    const { grant: existing, missing } = await standing(services, server, request, me.personId);
    const grant =
      existing ?? new server.provider.Grant({ accountId: me.personId, clientId: request.clientId });
    if (missing.length) grant.addResourceScope(request.resource, missing.join(' '));
    if (request.oidcScopes.length) grant.addOIDCScope(request.oidcScopes.join(' '));
    const grantId = await grant.save();
    await services.grants.label(grantId, {
      client_name: request.clientName,
      redirect_host: request.redirectHost,
      redirect_uri: request.redirectUri,
    });
    return finish(c, server, { login: { accountId: me.personId, remember: false }, consent: { grantId } });
  }

  app.get(`${CONSENT_PATH}/:uid`, async (c) => {
    const server = await authorizationServer();
    const request = await load(c, server);
    if (request instanceof Response) return request;
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    if (request.requested.length === 0) {
      return finish(c, server, {
        error: 'invalid_scope',
        error_description: `ask for at least one of ${SCOPES.join(', ')}`,
      });
    }
    const { me, workspaces } = await services.accounts.whoIs(credential.actor.personId);
    const { missing, granted } = await standing(services, server, request, me.personId);
    if (missing.length === 0) return allow(c, server, request, me);
    c.header('Content-Security-Policy', consentCsp(request.redirectUri));
    return c.html(
      htmlPage(
        'Connect an app',
        consentPage(request.interaction.uid, request, me, workspaces, missing, granted.length > 0),
      ),
    );
  });

  app.post(`${CONSENT_PATH}/:uid`, async (c) => {
    const server = await authorizationServer();
    const request = await load(c, server);
    if (request instanceof Response) return request;
    const credential = await signedIn(c);
    if (credential instanceof Response) return credential;
    const form = await c.req.parseBody();
    const text = (name: string) => (typeof form[name] === 'string' ? (form[name] as string) : '');
    if (text('decision') !== 'allow') {
      return finish(c, server, {
        error: 'access_denied',
        error_description: 'The person did not allow access',
      });
    }
    const { me: current, workspaces } = await services.accounts.whoIs(credential.actor.personId);
    const me = workspaces.find((w) => w.workspaceId === (text('workspace') || current.workspaceId));
    if (!me) return expired(c);
    const { missing, granted } = await standing(services, server, request, me.personId);
    const shown = text('scopes_shown').split(' ');
    // Allow grants exactly what the person read: another workspace, or more than was listed, or
    // another redirect URI than the page named, is shown first.
    const unseen = missing.some((s) => !shown.includes(s));
    const elsewhere = text('redirect_shown') !== request.redirectUri;
    if (unseen || elsewhere || (text('workspace_shown') !== me.workspaceId && missing.length > 0)) {
      c.header('Content-Security-Policy', consentCsp(request.redirectUri));
      return c.html(
        htmlPage(
          'Connect an app',
          consentPage(request.interaction.uid, request, me, workspaces, missing, granted.length > 0),
        ),
      );
    }
    return allow(c, server, request, me);
  });

  return app;
}
