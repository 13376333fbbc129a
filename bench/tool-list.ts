/**
 * What `tools/list` costs a conversation: the list a client loads into a model's context, as the
 * client receives it, in characters and in o200k_base tokens (the tokenizer of current OpenAI
 * models, from the gpt-tokenizer package).
 *
 *   node bench/tool-list.ts        (part of npm run bench)
 */
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { buildMcpServer } from '../src/mcp/registry.ts';
import type { Services } from '../src/services.ts';

/** tools/list as a client receives it, served by the real registry (no tool runs, so no storage). */
export async function listedTools(): Promise<{ tools: Record<string, unknown>[]; ttlMs?: number }> {
  const actor = { personId: 'p', workspaceId: 'w', scopes: new Set(SCOPES) };
  const server = buildMcpServer({} as Services, actor, { iconOrigin: 'http://127.0.0.1:8787' });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new Client({ name: 'bench', version: '1.0.0' });
  await client.connect(clientSide as unknown as Parameters<Client['connect']>[0]);
  const result = (await client.listTools()) as { tools: Record<string, unknown>[]; ttlMs?: number };
  await client.close();
  await server.close();
  return result;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { tools } = await listedTools();
  const text = JSON.stringify(tools);
  const tokens = countTokens(text);
  console.log(
    `tools/list: ${tools.length} tools, ${text.length.toLocaleString('en')} characters, ${tokens.toLocaleString('en')} tokens (o200k_base)`,
  );
  const rows = tools
    .map((t) => [t.name as string, countTokens(JSON.stringify(t))] as const)
    .sort((a, b) => b[1] - a[1]);
  for (const [name, n] of rows) console.log(`  ${name.padEnd(24)} ${String(n).padStart(6)} tokens`);
  console.log(`goal: ≤ 4,000 tokens with output schemas kept: ${tokens <= 4000 ? 'met' : 'NOT met'}`);
}
