import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { importFixture, type ImportResult } from '../../src/domains/import/import.ts';
import { SCOPES, type Actor, type Scope } from '../../src/domains/workspace/actor.ts';
import { buildMcpServer, TOOLS } from '../../src/mcp/registry.ts';
import type { ServiceOptions, Services } from '../../src/services.ts';
import type { TestDatabase } from './databases.ts';
import { testFixture } from './fixture.ts';

export interface CallResult {
  text: string;
  structured: Record<string, unknown> | undefined;
  isError: boolean;
}

export interface ToolCaller {
  call(name: string, args?: Record<string, unknown>): Promise<CallResult>;
  close(): Promise<void>;
}

/** The structured result of every call, success or refusal, must fit the tool's advertised output schema. */
export function assertFitsOutputSchema(name: string, structured: unknown): void {
  if (structured === undefined) return;
  const tool = TOOLS.find((t) => t.name === name);
  assert.ok(tool, `no tool named ${name}`);
  const parsed = tool.output.safeParse(structured);
  assert.ok(
    parsed.success,
    `${name} returned structuredContent outside its output schema: ${parsed.error?.message}`,
  );
}

/** A real MCP client connected in memory to a server acting as `actor`. */
export async function connect(services: Services, actor: Actor): Promise<ToolCaller> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = buildMcpServer(services, actor);
  await server.connect(serverSide);
  const client = new Client({ name: 'tandem-tests', version: '1.0.0' });
  await client.connect(clientSide as unknown as Parameters<Client['connect']>[0]);
  return {
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      const content = (result.content ?? []) as { type: string; text?: string }[];
      const text = content.map((c) => c.text ?? '').join('\n');
      const structured = result.structuredContent as Record<string, unknown> | undefined;
      assertFitsOutputSchema(name, structured);
      return { text, structured, isError: result.isError === true };
    },
    async close() {
      await client.close();
      await server.close();
    },
  };
}

export interface Harness {
  services: Services;
  ids: ImportResult['workspaces'];
  actor(email: string, scopes?: readonly Scope[]): Actor;
  as(email: string, scopes?: readonly Scope[]): Promise<ToolCaller>;
  close(): Promise<void>;
}

/** A fresh database of the given kind with the test fixture loaded. */
export async function setup(db: TestDatabase, options?: ServiceOptions): Promise<Harness> {
  const services = await db.open(options);
  const { workspaces: ids } = await importFixture(services.deps, testFixture);
  const callers: ToolCaller[] = [];
  const actor = (email: string, scopes: readonly Scope[] = SCOPES): Actor => {
    for (const ws of Object.values(ids)) {
      const personId = ws.users[email];
      if (personId) return { personId, workspaceId: ws.id, scopes: new Set(scopes) };
    }
    throw new Error(`no test person ${email}`);
  };
  return {
    services,
    ids,
    actor,
    async as(email, scopes) {
      const caller = await connect(services, actor(email, scopes));
      callers.push(caller);
      return caller;
    },
    async close() {
      await Promise.all(callers.map((c) => c.close()));
      await services.dispose();
    },
  };
}

export const acme = (h: Harness) => h.ids.Acme!;
export const other = (h: Harness) => h.ids.Other!;
