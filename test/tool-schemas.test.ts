import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { InMemoryTransport } from '@modelcontextprotocol/server';
import { buildMcpServer, TOOLS } from '../src/mcp/registry.ts';
import { renderToolSchemas } from '../src/mcp/tool.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';

const SNAPSHOT = join(import.meta.dirname, 'snapshots', 'tools.json');
const UPDATE = process.env.UPDATE_SNAPSHOTS === '1';

/** The tools that only read; every other tool writes. */
const READ_ONLY = new Set([
  'list_automations',
  'read_automation',
  'describe_capabilities',
  'read_page',
  'read_comments',
  'read_document',
  'list_documents',
  'get_document_versions',
]);
/** The tools that replace content wholesale. */
const DESTRUCTIVE = new Set(['write_page', 'edit_document']);
/** The only tool whose repeated call changes nothing further. */
const IDEMPOTENT = new Set(['resolve_comment']);

interface AdvertisedTool {
  name: string;
  title?: string;
  description?: string;
  annotations?: Record<string, unknown>;
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
}

/** What tools/list advertises, as a real client receives it. */
async function advertisedTools(h: Harness): Promise<AdvertisedTool[]> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const server = buildMcpServer(h.services, h.actor('ada@acme.test'));
  await server.connect(serverSide);
  const client = new Client({ name: 'schema-tests', version: '1.0.0' });
  await client.connect(clientSide as unknown as Parameters<Client['connect']>[0]);
  try {
    const { tools } = await client.listTools();
    return tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      annotations: t.annotations as Record<string, unknown> | undefined,
      inputSchema: t.inputSchema as Record<string, unknown>,
      outputSchema: t.outputSchema as Record<string, unknown> | undefined,
    }));
  } finally {
    await client.close();
    await server.close();
  }
}

describe('tool schemas as tools/list advertises them', () => {
  let h: Harness;
  let tools: AdvertisedTool[];
  before(async () => {
    h = await setup(DATABASES[0]!);
    tools = await advertisedTools(h);
  });
  after(() => h.close());

  it('advertises every tool of the registry, in order', () => {
    assert.deepEqual(
      tools.map((t) => t.name),
      TOOLS.map((t) => t.name),
    );
  });

  it('matches the committed snapshot', async () => {
    const rendered = JSON.parse(JSON.stringify(tools)) as AdvertisedTool[];
    if (UPDATE) {
      mkdirSync(dirname(SNAPSHOT), { recursive: true });
      writeFileSync(SNAPSHOT, JSON.stringify(rendered, null, 2) + '\n');
      return;
    }
    assert.ok(existsSync(SNAPSHOT), `${SNAPSHOT} is missing; run with UPDATE_SNAPSHOTS=1 to create it`);
    const committed = JSON.parse(readFileSync(SNAPSHOT, 'utf8')) as AdvertisedTool[];
    assert.deepEqual(
      rendered,
      committed,
      'tools/list changed; if the change is intended, run with UPDATE_SNAPSHOTS=1 and commit test/snapshots/tools.json',
    );
  });

  it('sends the schemas that renderToolSchemas renders, with title and description from the registry', () => {
    for (const tool of TOOLS) {
      const wire = tools.find((t) => t.name === tool.name)!;
      const { inputSchema, outputSchema } = renderToolSchemas(tool);
      assert.deepEqual(wire.inputSchema, inputSchema, `${tool.name} inputSchema`);
      assert.deepEqual(wire.outputSchema, outputSchema, `${tool.name} outputSchema`);
      assert.equal(wire.title, tool.title);
      assert.equal(wire.description, tool.description);
      assert.ok(wire.description && wire.description.length > 20, `${tool.name} needs a real description`);
    }
  });

  it('fits in 4,000 tokens (o200k_base) with every output schema, icons included', async () => {
    const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const server = buildMcpServer(h.services, h.actor('ada@acme.test'), {
      iconOrigin: 'http://127.0.0.1:8787',
    });
    await server.connect(serverSide);
    const client = new Client({ name: 'schema-tests', version: '1.0.0' });
    await client.connect(clientSide as unknown as Parameters<Client['connect']>[0]);
    const { tools: listed } = await client.listTools();
    await client.close();
    await server.close();
    assert.ok(listed.every((t) => t.outputSchema && t.icons?.length === 1));
    const tokens = countTokens(JSON.stringify(listed));
    assert.ok(tokens <= 4000, `tools/list is ${tokens} tokens`);
  });

  it('annotates each tool as the spec says', () => {
    assert.ok(tools.some((t) => READ_ONLY.has(t.name)));
    for (const tool of tools) {
      const a = tool.annotations;
      assert.ok(a, `${tool.name} has no annotations`);
      assert.equal(a.title, undefined, `${tool.name}: the title is sent once, at the top of the tool`);
      assert.ok(tool.title, `${tool.name} has a title`);
      assert.equal(a.readOnlyHint, READ_ONLY.has(tool.name), `${tool.name} readOnlyHint`);
      assert.equal(a.destructiveHint, DESTRUCTIVE.has(tool.name), `${tool.name} destructiveHint`);
      // A read leaves idempotentHint out (false, the default); every write states it.
      if (a.readOnlyHint) assert.equal(a.idempotentHint, undefined, `${tool.name} idempotentHint`);
      else assert.equal(a.idempotentHint, IDEMPOTENT.has(tool.name), `${tool.name} idempotentHint`);
      assert.equal(a.openWorldHint, false, `${tool.name} openWorldHint`);
      if (a.readOnlyHint)
        assert.equal(a.destructiveHint, false, `${tool.name}: a read cannot be destructive`);
    }
    for (const name of ['read_page', 'read_comments']) {
      assert.equal(tools.find((t) => t.name === name)?.annotations?.readOnlyHint, true, name);
    }
    assert.equal(tools.find((t) => t.name === 'write_page')?.annotations?.destructiveHint, true);
  });

  it('advertises the spec-checked fields with their types and lists the required ones', () => {
    const props = (name: string) =>
      tools.find((t) => t.name === name)!.inputSchema as {
        properties: Record<string, { type?: string; enum?: string[] }>;
        required?: string[];
      };
    assert.equal(props('create_page').properties.title?.type, 'string');
    assert.equal(props('create_page').properties.html?.type, 'string');
    assert.deepEqual(props('create_page').properties.scope?.enum, ['user', 'pod', 'org']);
    assert.deepEqual([...(props('create_page').required ?? [])].sort(), ['html', 'title']);
    assert.equal(props('write_page').properties.expected_version?.type, 'integer');
    assert.deepEqual([...(props('write_page').required ?? [])].sort(), [
      'expected_version',
      'html',
      'page_id',
    ]);
    assert.equal(props('add_comment').properties.body_markdown?.type, 'string');
    assert.ok(props('add_comment').required?.includes('body_markdown'));
    assert.equal(props('resolve_comment').properties.resolved?.type, 'boolean');
    assert.ok(props('resolve_comment').required?.includes('resolved'));
  });
});

for (const db of DATABASES) {
  describe(`wrong-typed values of spec-checked fields on ${db.name}`, () => {
    let h: Harness;
    before(async () => {
      h = await setup(db);
    });
    after(() => h.close());

    const notStrings: unknown[] = [42, true, { text: 'x' }, ['x']];

    it('are answered in the spec’s own words, never with a generic validation error, and change nothing', async () => {
      const ada = await h.as('ada@acme.test');
      const page = acme(h).artifacts.landing!;
      const thread = await ada.call('add_comment', { document_id: page, body_markdown: 'Typed thread' });
      assert.equal(thread.isError, false, thread.text);
      const threadId = thread.structured!.thread_id as string;

      const cases: { tool: string; field: string; base: Record<string, unknown>; values: unknown[] }[] = [
        {
          tool: 'create_page',
          field: 'title',
          base: { title: 'T', html: '<p>x</p>' },
          values: [...notStrings, null],
        },
        {
          tool: 'create_page',
          field: 'html',
          base: { title: 'T', html: '<p>x</p>' },
          values: [...notStrings, null],
        },
        { tool: 'create_page', field: 'scope', base: { title: 'T', html: '<p>x</p>' }, values: notStrings },
        {
          tool: 'write_page',
          field: 'html',
          base: { page_id: page, html: '<p>x</p>', expected_version: 1 },
          values: [...notStrings, null],
        },
        {
          tool: 'write_page',
          field: 'expected_version',
          base: { page_id: page, html: '<p>x</p>', expected_version: 1 },
          values: ['1', true, { v: 1 }, [1], null, 1.5, -1],
        },
        {
          tool: 'add_comment',
          field: 'body_markdown',
          base: { document_id: page, body_markdown: 'hi' },
          values: [...notStrings, null],
        },
        {
          tool: 'resolve_comment',
          field: 'resolved',
          base: { document_id: page, thread_id: threadId, resolved: true },
          values: ['true', 1, { yes: true }, [true], null],
        },
      ];

      const count = async (table: 'artifacts' | 'comments' | 'threads') =>
        Number(
          (
            await h.services.deps.db
              .selectFrom(table)
              .select((eb) => eb.fn.countAll<number>().as('n'))
              .executeTakeFirstOrThrow()
          ).n,
        );
      const before = {
        artifacts: await count('artifacts'),
        comments: await count('comments'),
        threads: await count('threads'),
      };

      for (const { tool, field, base, values } of cases) {
        for (const value of values) {
          const label = `${tool} with ${field} = ${JSON.stringify(value)}`;
          const result = await ada.call(tool, { ...base, [field]: value });
          assert.equal(result.isError, true, `${label} should be refused`);
          assert.ok(!result.text.includes('Input validation error'), `${label} answered: ${result.text}`);
          assert.ok(result.text.startsWith('Tool failed: '), `${label} answered: ${result.text}`);
          assert.ok(result.text.includes(field), `${label} should name ${field}: ${result.text}`);
        }
      }

      assert.deepEqual(
        {
          artifacts: await count('artifacts'),
          comments: await count('comments'),
          threads: await count('threads'),
        },
        before,
      );
      const landing = await ada.call('read_page', { page_id: page });
      assert.equal(landing.structured?.version, 1);
      const threads = await ada.call('read_comments', { document_id: page });
      assert.deepEqual(
        (threads.structured?.threads as { thread_id: string; status: string }[]).map((t) => [
          t.thread_id,
          t.status,
        ]),
        [[threadId, 'open']],
      );
    });
  });
}
