import { randomBytes } from 'node:crypto';
import Provider, {
  errors,
  interactionPolicy,
  type Configuration,
  type KoaContextWithOIDC,
} from 'oidc-provider';
import { authorizationServerKeys } from '../../domains/auth/server-keys.ts';
import { SCOPES } from '../../domains/workspace/actor.ts';
import type { TokenAnswer } from '../../domains/auth/oauth-records.ts';
import type { Services } from '../../services.ts';
import { escapeHtml, htmlPage } from '../html.ts';
import { FIRST_SCOPE } from '../scopes.ts';
import { adapterFor } from './adapter.ts';
import { isLoopbackHost } from './cimd.ts';
import { CONSENT_PATH, OAUTH_ROUTES } from './paths.ts';

export const ACCESS_TOKEN_TTL_S = 3600;
const DAY_S = 86_400;

/**
 * What a registering client may send, a little above what MCP clients send (Claude, VS Code,
 * Cursor, mcp-remote and the Inspector register one to three redirect URIs well under 200
 * characters each, and a name of a few words; the whole request is under 1 KiB).
 */
export const REGISTRATION_LIMITS = { bytes: 5 * 1024, redirectUris: 5, uriChars: 512, nameChars: 100 };

/** A registration's metadata within REGISTRATION_LIMITS, or the sentence saying what is past them. */
function registrationProblem(body: Record<string, unknown>): string | undefined {
  const uris = body.redirect_uris;
  const { redirectUris, uriChars, nameChars } = REGISTRATION_LIMITS;
  if (Array.isArray(uris)) {
    if (uris.length > redirectUris) return `redirect_uris may hold at most ${redirectUris} URIs`;
    if (uris.some((u) => typeof u === 'string' && u.length > uriChars))
      return `redirect_uris may hold URIs of at most ${uriChars} characters`;
    // A code sent over plain http could be read on the way, unless it never leaves this machine.
    const plain = uris.find((u) => {
      const url = typeof u === 'string' ? URL.parse(u) : null;
      return url?.protocol === 'http:' && !isLoopbackHost(url.hostname);
    });
    if (plain)
      return `redirect_uris may use http only for localhost or a loopback address, not ${String(plain)}`;
  }
  for (const field of ['client_uri', 'logo_uri', 'tos_uri', 'policy_uri', 'jwks_uri', 'initiate_login_uri']) {
    const value = body[field];
    if (typeof value === 'string' && value.length > uriChars)
      return `${field} may be at most ${uriChars} characters`;
  }
  if (typeof body.client_name === 'string' && [...body.client_name].length > nameChars)
    return `client_name may be at most ${nameChars} characters`;
  return undefined;
}

/** Every authorization passes through Tandem's consent page, which knows who is signed in. */
function policy() {
  const { Check, Prompt, base } = interactionPolicy;
  const prompts = base();
  prompts.remove('login');
  prompts.add(
    new Prompt(
      { name: 'login', requestable: true },
      new Check('tandem_consent_page', 'the person has not been asked yet', (ctx) =>
        ctx.oidc.result?.login ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT,
      ),
    ),
    0,
  );
  return prompts;
}

/**
 * Tandem's own OAuth 2.1 authorization server (`oidc-provider`, certified and maintained), for
 * MCP clients: authorization code with PKCE S256 only, Client ID Metadata Documents and Dynamic
 * Client Registration (public clients), exact redirect URIs, `resource` defaulting to `/mcp`
 * with opaque access tokens bound to it, refresh tokens rotated on every use, RFC 7009 revocation.
 */
export async function createAuthorizationServer(services: Services, publicUrl: string) {
  const issuer = new URL(publicUrl).href.replace(/\/$/, '');
  const resource = `${issuer}/mcp`;
  const keys = await authorizationServerKeys(services.deps);
  const loopbackIssuer = isLoopbackHost(new URL(issuer).hostname);
  const Grant = () => provider.Grant;

  const configuration: Configuration = {
    adapter: adapterFor(services.oauth, { loopbackClients: loopbackIssuer }),
    jwks: keys.jwks as Configuration['jwks'],
    cookies: {
      keys: keys.cookieKeys,
      names: {
        session: 'tandem_oauth',
        interaction: 'tandem_oauth_interaction',
        resume: 'tandem_oauth_resume',
      },
      long: { httpOnly: true, sameSite: 'lax', signed: true },
      short: { httpOnly: true, sameSite: 'lax', signed: true },
    },
    routes: OAUTH_ROUTES,
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientAuthMethods: ['none', 'client_secret_basic', 'client_secret_post'],
    clientDefaults: {
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
      id_token_signed_response_alg: 'ES256',
    },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    allowOmittingSingleRegisteredRedirectUri: false,
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      userinfo: { enabled: false },
      introspection: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      // Access tokens are checked as bearer tokens at /mcp; a sender-constrained one would be weaker there.
      dPoP: { enabled: false },
      registration: {
        enabled: true,
        initialAccessToken: false,
        issueRegistrationAccessToken: false,
        // Called once per registration with its parsed metadata, before anything is stored.
        idFactory(ctx: KoaContextWithOIDC) {
          const problem = registrationProblem((ctx.oidc.body ?? {}) as Record<string, unknown>);
          if (problem) throw new errors.InvalidClientMetadata(problem);
          return randomBytes(16).toString('base64url');
        },
      },
      revocation: { enabled: true },
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async () => true,
        allowClient: async () => true,
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => resource,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, indicator) => {
          if (indicator !== resource)
            throw new errors.InvalidTarget(`this server issues tokens for ${resource} only`);
          return {
            scope: SCOPES.join(' '),
            audience: resource,
            accessTokenTTL: ACCESS_TOKEN_TTL_S,
            accessTokenFormat: 'opaque',
          };
        },
      },
    } as Configuration['features'],
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      Interaction: 15 * 60,
      Session: 60,
      Grant: 365 * DAY_S,
      RefreshToken: 30 * DAY_S,
      IdToken: 3600,
    },
    interactions: {
      url: async (_ctx, interaction) => `${CONSENT_PATH}/${interaction.uid}`,
      policy: policy(),
    },
    async findAccount(_ctx, sub) {
      const person = await services.deps.db
        .selectFrom('people')
        .select('id')
        .where('id', '=', sub)
        .executeTakeFirst();
      return person ? { accountId: person.id, claims: async () => ({ sub: person.id }) } : undefined;
    },
    // One grant per person (of one workspace), client and redirect URI, whatever browser asked:
    // consent lists only what it lacks, and another redirect URI is asked for afresh.
    async loadExistingGrant(ctx: KoaContextWithOIDC) {
      const chosen = ctx.oidc.result?.consent?.grantId;
      if (chosen) return Grant().find(chosen);
      const accountId = ctx.oidc.session?.accountId;
      const redirectUri = ctx.oidc.params?.redirect_uri;
      if (!accountId || !ctx.oidc.client || typeof redirectUri !== 'string') return undefined;
      const id = await services.grants.find(accountId, ctx.oidc.client.clientId, redirectUri);
      return id ? Grant().find(id) : undefined;
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    expiresWithSession: async () => false,
    clientBasedCORS: (_ctx, origin, client) =>
      origin !== 'null' && (client.redirectUris ?? []).some((uri) => URL.parse(uri)?.origin === origin),
    async renderError(ctx, out) {
      ctx.type = 'html';
      const reason = out.error_description ?? out.error ?? 'The request could not be completed.';
      ctx.body = htmlPage(
        'Could not connect',
        `<h1>The app could not be connected</h1><p class="problem" role="alert">${escapeHtml(String(reason))}</p>
<p class="note">Go back to the app and try connecting again.</p>`,
      );
    },
  };

  const provider = new Provider(issuer, configuration);
  // A client registers (or publishes) the scopes it starts with; that list would cap what it may
  // ask for later, and Tandem's scopes arrive one by one by step-up consent. So no client is
  // held to the scope it registered with: what it may do is what the person allowed.
  const schema = (provider.Client as unknown as { Schema: { prototype: { scopes(): void } } }).Schema;
  schema.prototype.scopes = function ignoreRegisteredScope(this: { scope?: string }) {
    delete this.scope;
  };
  // The app hands every request over as addressed to PUBLIC_URL (see `routes.ts`), so endpoint
  // URLs, cookies' Secure flag and the issuer agree whatever host or proxy it came through.
  provider.proxy = true;
  provider.use(async (ctx, next) => {
    // An authorization request without `scope` asks for the first scope, the one the 401
    // challenge names (OAuth lets the server choose a default; clients that omit it expect one).
    if (ctx.path === OAUTH_ROUTES.authorization && ctx.method === 'GET' && !ctx.query.scope) {
      const query = new URLSearchParams(ctx.querystring);
      query.set('scope', FIRST_SCOPE);
      ctx.querystring = query.toString();
    }
    // Registration is open to anyone, so a client running in a browser (the MCP Inspector) may
    // register from its own origin; the library answers CORS for its other endpoints itself.
    if (ctx.path === OAUTH_ROUTES.registration) {
      ctx.set('Access-Control-Allow-Origin', '*');
      if (ctx.method === 'OPTIONS') {
        ctx.set('Access-Control-Allow-Methods', 'POST');
        ctx.set('Access-Control-Allow-Headers', ctx.get('access-control-request-headers') || 'content-type');
        ctx.set('Access-Control-Max-Age', '3600');
        ctx.status = 204;
        return;
      }
    }
    await next();
    // A refresh token exchanged again within the retry window gets the answer its first exchange got.
    const params =
      ctx.path === OAUTH_ROUTES.token && ctx.status === 200
        ? (ctx.oidc?.params as Record<string, unknown> | undefined)
        : undefined;
    if (params?.grant_type === 'refresh_token' && typeof params.refresh_token === 'string') {
      ctx.body = await services.oauth.settleRefresh(params.refresh_token, ctx.body as TokenAnswer);
    }
    // The authorization server supports every Tandem scope (which to ask for first is the resource's to say).
    if (ctx.path === '/.well-known/oauth-authorization-server' && ctx.status === 200) {
      (ctx.body as Record<string, unknown>).scopes_supported = [...SCOPES];
    }
  });
  return { provider, issuer, resource };
}

export type AuthorizationServer = Awaited<ReturnType<typeof createAuthorizationServer>>;
