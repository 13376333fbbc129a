import {
  createMcpHandler,
  getOAuthProtectedResourceMetadataUrl,
  hostHeaderValidationResponse,
  isJsonContentType,
  isLegacyRequest,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import type { Credential } from '../domains/auth/credentials.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import { SCOPES } from '../domains/workspace/actor.ts';
import { buildMcpServer } from '../mcp/registry.ts';
import { addLogContext, log } from '../observability/log.ts';
import type { Services } from '../services.ts';
import { MCP_MAX_BODY } from './guards.ts';
import { FIRST_SCOPE } from './scopes.ts';

const DAY = 86_400_000;

const quoted = (value: string) => value.replace(/["\\]/g, '');

/** `/mcp` over Streamable HTTP: personal access tokens or OAuth access tokens bound to `/mcp`. */
export function mcpHttp(services: Services, resourceUrl: URL, allowedHosts: string[], issuer: string) {
  const resourceMetadataUrl = getOAuthProtectedResourceMetadataUrl(resourceUrl);
  const resource = resourceUrl.href;

  /** 401 with where to find the authorization server and which scope to start with. */
  function unauthorized(hadToken: boolean): Response {
    const error = hadToken
      ? 'error="invalid_token", error_description="The token is unknown, expired, revoked or not for this resource", '
      : '';
    return Response.json(
      {
        error: 'invalid_token',
        error_description: hadToken
          ? 'The token is unknown, expired, revoked or not issued for this resource.'
          : 'Connect with OAuth (this URL is all a client needs) or send Authorization: Bearer <token>.',
      },
      {
        status: 401,
        headers: {
          'WWW-Authenticate': `Bearer ${error}scope="${FIRST_SCOPE}", resource_metadata="${resourceMetadataUrl}"`,
        },
      },
    );
  }

  async function authenticate(request: Request): Promise<AuthInfo | Response> {
    const header = request.headers.get('authorization');
    if (!header) return unauthorized(false);
    const token = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
    const credential: Credential | null = token ? await services.credentials.bearer(token, resource) : null;
    if (!credential || !token) return unauthorized(true);
    addLogContext({ person: credential.actor.personId, workspace: credential.actor.workspaceId });
    return {
      token,
      clientId: credential.clientId ?? credential.credentialId,
      scopes: SCOPES.filter((s) => credential.actor.scopes.has(s)),
      // Personal access tokens without an expiry are treated as valid for another day at each check.
      expiresAt: Math.floor((credential.expiresAt ?? Date.now() + DAY) / 1000),
      resource: credential.kind === 'oauth' ? resourceUrl : undefined,
      resourceMetadataUrl,
      extra: {
        actor: {
          ...credential.actor,
          // The activity history names what each call came through.
          via: {
            kind: credential.kind,
            id: credential.kind === 'oauth' ? (credential.clientId ?? null) : credential.credentialId,
          },
        },
      },
    };
  }

  const factory: McpServerFactory = (ctx) => {
    const actor = ctx.authInfo?.extra?.actor as Actor | undefined;
    if (!actor) throw new Error('an MCP request reached the server without a verified caller');
    const only = ctx.requestInfo ? calledTool.get(ctx.requestInfo) : undefined;
    return buildMcpServer(services, actor, { iconOrigin: resourceUrl.origin, only });
  };
  // The 2026-07-28 revision answers in one JSON body unless a message comes before the result;
  // 2025-era requests are answered here (`answerLegacy`), in one JSON body too.
  const handler = createMcpHandler(factory, {
    legacy: 'reject',
    onerror: logMcpError,
    maxRequestBodySize: MCP_MAX_BODY,
  });
  const answerLegacy = legacyAnswerer(factory);

  return {
    resourceMetadataUrl,
    async fetch(request: Request): Promise<Response> {
      const badHost = hostHeaderValidationResponse(request, allowedHosts);
      if (badHost) return badHost;
      const auth = await authenticate(request);
      if (auth instanceof Response) return auth;
      const { forward, parsedBody } = await readMessage(request);
      const options = { authInfo: auth, ...(parsedBody === undefined ? {} : { parsedBody }) };
      // A POST of another media type is the handler's to refuse (415) before reading anything.
      const legacy =
        (forward.method !== 'POST' || isJsonContentType(forward.headers.get('content-type'))) &&
        (await isLegacyRequest(forward, parsedBody, { maxRequestBodySize: MCP_MAX_BODY }));
      const response = legacy ? await answerLegacy(forward, options) : await handler.fetch(forward, options);
      return withGrantedScopes(response, auth.scopes);
    },
    metadata() {
      return {
        resource,
        authorization_servers: [issuer],
        // Every scope this resource knows; which to ask for first is the 401 challenge's to say.
        scopes_supported: [...SCOPES],
        bearer_methods_supported: ['header'],
        resource_name: 'Tandem',
      };
    },
    close: () => handler.close(),
  };
}

/**
 * 2025-era (stateless) requests: each POST is served by a server of its own, as the SDK's fallback
 * does, but answered in one JSON body rather than an event stream. No tool sends a message before
 * its result (Tasks are polled), and a client must take either answer; a stream only adds framing,
 * a keep-alive timer and a second body to pass through, on both sides, for every call.
 * GET and DELETE (sessions) are refused as the fallback refuses them: this endpoint keeps none.
 */
function legacyAnswerer(factory: McpServerFactory) {
  return async (
    request: Request,
    options: { authInfo: AuthInfo; parsedBody?: unknown },
  ): Promise<Response> => {
    if (request.method !== 'POST')
      return Response.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null },
        { status: 405, headers: { Allow: 'POST' } },
      );
    const server = await factory({ era: 'legacy', authInfo: options.authInfo, requestInfo: request });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      maxRequestBodySize: MCP_MAX_BODY,
    });
    const teardown = () => {
      void transport.close().catch(() => {});
      void server.close().catch(() => {});
    };
    // A client that goes away before the answer leaves nothing open.
    request.signal.addEventListener('abort', teardown, { once: true });
    let answered = false;
    try {
      await server.connect(transport);
      const response = await transport.handleRequest(request, options);
      answered = true;
      return response;
    } catch (error) {
      logMcpError(error instanceof Error ? error : new Error(String(error)));
      return Response.json(
        {
          jsonrpc: '2.0',
          error: { code: -32603, message: 'Internal server error' },
          id: requestId(options.parsedBody),
        },
        { status: 500 },
      );
    } finally {
      request.signal.removeEventListener('abort', teardown);
      // An exchange that answered holds nothing open (no stream, no timer, no pending request):
      // the server and its transport are dropped as they are. Closing them would only have the
      // SDK build a "Connection closed" error, stack and all, for every call.
      if (!answered) teardown();
    }
  };
}

/** The id of a single JSON-RPC request, to answer an error with; null when there is none. */
function requestId(body: unknown): string | number | null {
  const id = (body as { id?: unknown } | null | undefined)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** The tool a request calls, for the requests whose body says so (see `readMessage`). */
const calledTool = new WeakMap<Request, string>();

/**
 * Reads a JSON-RPC POST's body once, up front, when its length is declared and within
 * MCP_MAX_BODY, and notes the tool a `tools/call` names: the server built for that request then
 * registers that tool alone, whichever protocol revision the client speaks. Anything else (no
 * declared length, another media type, a body that is not JSON) reaches the SDK as it came, to be
 * read, bounded and answered there.
 */
async function readMessage(request: Request): Promise<{ forward: Request; parsedBody?: unknown }> {
  const length = Number(request.headers.get('content-length') ?? NaN);
  const json = /^application\/json\s*(;|$)/i.test(request.headers.get('content-type') ?? '');
  if (request.method !== 'POST' || !json || !(length >= 0 && length <= MCP_MAX_BODY))
    return { forward: request };
  const text = await request.text();
  let parsedBody: unknown;
  try {
    parsedBody = JSON.parse(text);
  } catch {
    return { forward: new Request(request, { body: text }) };
  }
  const message = parsedBody as { method?: unknown; params?: { name?: unknown } } | null;
  if (message?.method === 'tools/call' && typeof message.params?.name === 'string')
    calledTool.set(request, message.params.name);
  return { forward: request, parsedBody };
}

/**
 * What the MCP transport reports. A request it refused for the client's own fault (headers that
 * disagree with the body, a wrong media type, a malformed batch) was answered 4xx and is one info
 * line without a stack; anything else is the server's fault and logged as an error.
 */
const CLIENT_FAULT =
  /^(Rejected inbound request|Rejected 2025-era request|Not Acceptable|Unsupported Media Type|Invalid Request|Bad Request|Method not allowed|Invalid event ID|Conflict|Session not found|Parse error)/;

export function logMcpError(error: Error): void {
  if (CLIENT_FAULT.test(error.message)) log.info({ refused: error.message }, 'mcp request refused');
  else log.error({ err: error }, 'mcp request failed');
}

/**
 * A tool call outside the token's scopes is answered 403 `insufficient_scope` by the SDK with the
 * scope the tool needs; the challenge here names the token's scopes too, so re-authorizing for
 * it keeps what the client has and adds the one it lacks.
 */
function withGrantedScopes(response: Response, granted: readonly string[]): Response {
  const challenge = response.headers.get('www-authenticate');
  if (response.status !== 403 || !challenge || !/error="insufficient_scope"/.test(challenge)) return response;
  const needed = /scope="([^"]*)"/.exec(challenge)?.[1]?.split(' ').filter(Boolean) ?? [];
  const union = SCOPES.filter((s) => granted.includes(s) || needed.includes(s));
  const headers = new Headers(response.headers);
  headers.set('WWW-Authenticate', challenge.replace(/scope="[^"]*"/, `scope="${quoted(union.join(' '))}"`));
  return new Response(response.body, { status: 403, statusText: response.statusText, headers });
}
