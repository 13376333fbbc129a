import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';
import { buildMcpServer } from './registry.ts';

/** MCP over this process's stdin and stdout, acting as one person. */
export function serveMcpStdio(services: Services, actor: Actor): Promise<void> {
  return new Promise((resolve) => {
    const handle = serveStdio(() => buildMcpServer(services, actor), {
      onerror: (error) => console.error('mcp:', error.message),
    });
    process.stdin.once('end', () => {
      void handle.close().then(resolve);
    });
  });
}
