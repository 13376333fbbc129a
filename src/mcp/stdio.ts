import { INVALID_REQUEST } from '@modelcontextprotocol/server';
import { serveStdio, StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import type { Actor } from '../domains/workspace/actor.ts';
import { log } from '../observability/log.ts';
import type { Services } from '../services.ts';
import { MAX_MESSAGE_BYTES, MessageLines } from './message-lines.ts';
import { buildMcpServer } from './registry.ts';

/** The answer to a message too large to read: an error for its id, so the client stops waiting. */
export function oversizedAnswer(id: string | number | null, bytes: number): string {
  const message = `Message too large: it is ${bytes.toLocaleString('en')} bytes, and tandem mcp reads at most ${MAX_MESSAGE_BYTES.toLocaleString('en')} (32 MiB) per message. Nothing in it was done; send less in each call.`;
  return `${JSON.stringify({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } })}\n`;
}

/**
 * MCP over this process's stdin and stdout, acting as one person. Messages pass through
 * `MessageLines` first: one too large is answered with an error and skipped as it streams
 * past, and the connection reads the next one as usual.
 */
export function serveMcpStdio(services: Services, actor: Actor): Promise<void> {
  return new Promise((resolve) => {
    const lines = new MessageLines(MAX_MESSAGE_BYTES, (id, bytes) => {
      // Whole lines, like the transport's own writes, so the two never interleave within a message.
      process.stdout.write(oversizedAnswer(id, bytes));
    });
    process.stdin.pipe(lines);
    // Every line reaching the transport is within the limit; its own buffer need not stop any.
    const transport = new StdioServerTransport(lines, process.stdout, { maxBufferSize: Infinity });
    const handle = serveStdio(
      () => buildMcpServer(services, { ...actor, via: { kind: 'local', id: null } }),
      {
        transport,
        onerror: (error) => log.error({ err: error }, 'mcp message failed'),
      },
    );
    process.stdin.once('end', () => {
      void handle.close().then(resolve);
    });
  });
}
