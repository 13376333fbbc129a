/** The authorization server's endpoints, below the issuer (`PUBLIC_URL`). */
export const OAUTH_ROUTES = {
  authorization: '/oauth/authorize',
  token: '/oauth/token',
  registration: '/oauth/register',
  revocation: '/oauth/revoke',
  jwks: '/oauth/jwks',
} as const;

/** Where every authorization request goes to be signed in and consented to. */
export const CONSENT_PATH = '/consent';

/** The paths the authorization server answers itself (it reads their bodies, at most 56 KiB). */
export const isAuthorizationServerPath = (path: string) =>
  path.startsWith('/oauth/') ||
  path === '/.well-known/oauth-authorization-server' ||
  path === '/.well-known/openid-configuration';
