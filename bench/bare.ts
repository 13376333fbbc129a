/**
 * The baselines: a bare MCP server with one no-op tool (no auth, no storage) on the same SDK and
 * HTTP stack as Tandem. `stream` is the SDK's default, which answers a 2025-era call with an event
 * stream; `json` answers it in one JSON body, as Tandem's `/mcp` does (see `src/http/mcp-route.ts`),
 * so the two together tell the SDK's default from what Tandem itself adds.
 */
import { serve } from '@hono/node-server';
import {
  createMcpHandler,
  isLegacyRequest,
  McpServer,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { z } from 'zod';

export type Answer = 'stream' | 'json';

export interface Bare {
  url: string;
  close(): Promise<void>;
}

export async function serveBare(port: number, answer: Answer): Promise<Bare> {
  // Schemas built once, as Tandem's are, so neither side pays for schema construction per call.
  const inputSchema = z.object({});
  const outputSchema = z.object({ ok: z.boolean() });
  const build = () => {
    const s = new McpServer({ name: 'bare', version: '1.0.0' });
    s.registerTool('noop', { inputSchema, outputSchema }, async () => ({
      content: [{ type: 'text', text: 'ok' }],
      structuredContent: { ok: true },
    }));
    return s;
  };
  const handler = createMcpHandler(build, answer === 'json' ? { legacy: 'reject' } : {});
  const json = async (request: Request): Promise<Response> => {
    const body = request.method === 'POST' ? ((await request.json()) as unknown) : undefined;
    if (!(await isLegacyRequest(request, body))) return handler.fetch(request, { parsedBody: body });
    const server = build();
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    // As Tandem's: an exchange that answered is dropped, not closed.
    return transport.handleRequest(request, { parsedBody: body });
  };
  const server = serve({
    fetch: answer === 'json' ? json : (request) => handler.fetch(request),
    port,
    hostname: '127.0.0.1',
  });
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    async close() {
      await handler.close();
      server.close();
    },
  };
}
