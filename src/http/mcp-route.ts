import {
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  hostHeaderValidationResponse,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import type { Actor } from '../domains/workspace/actor.ts';
import { SCOPES } from '../domains/workspace/actor.ts';
import { buildMcpServer } from '../mcp/registry.ts';
import type { Services } from '../services.ts';

const DAY = 86_400_000;

/** `/mcp` over Streamable HTTP: bearer personal access tokens, a scope challenge per tool. */
export function mcpHttp(services: Services, resourceUrl: URL, allowedHosts: string[]) {
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resourceUrl);
  const gate = requireBearerAuth({
    resourceMetadataUrl,
    verifier: {
      async verifyAccessToken(token: string): Promise<AuthInfo> {
        const verified = await services.tokens.verify(token);
        if (!verified)
          throw new OAuthError(OAuthErrorCode.InvalidToken, 'The token is unknown or has expired');
        return {
          token,
          clientId: verified.tokenId,
          scopes: [...verified.actor.scopes],
          // Tokens without an expiry are treated as valid for another day at each check.
          expiresAt: Math.floor((verified.expiresAt ?? Date.now() + DAY) / 1000),
          extra: { actor: verified.actor },
        };
      },
    },
  });
  const handler = createMcpHandler(
    (ctx) => {
      const actor = ctx.authInfo?.extra?.actor as Actor | undefined;
      if (!actor) throw new Error('an MCP request reached the server without a verified caller');
      return buildMcpServer(services, actor);
    },
    { onerror: (error) => console.error('mcp:', error.message) },
  );
  return {
    resourceMetadataUrl,
    async fetch(request: Request): Promise<Response> {
      const badHost = hostHeaderValidationResponse(request, allowedHosts);
      if (badHost) return badHost;
      const auth = await gate(request);
      if (auth instanceof Response) return auth;
      return handler.fetch(request, { authInfo: auth });
    },
    metadata() {
      return {
        resource: resourceUrl.href,
        resource_name: 'Tandem',
        scopes_supported: [...SCOPES],
        bearer_methods_supported: ['header'],
      };
    },
    close: () => handler.close(),
  };
}
