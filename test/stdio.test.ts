import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { ImportResult } from '../src/domains/import/import.ts';
import { testFixture } from './support/fixture.ts';
import { IMPLEMENTED_TOOLS } from './support/tools.ts';

const ROOT = resolve(import.meta.dirname, '..');
const BIN = join(ROOT, 'bin', 'tandem.js');

// Each server is a fresh Node; a shared compile cache keeps the starts quick.
const compileCache = mkdtempSync(join(tmpdir(), 'tandem-stdio-cache-'));

/** The environment a person would have, minus anything that would point Tandem elsewhere. */
function cleanEnv(dataDir: string): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/^(TANDEM_|DATABASE_URL$|REDIS_URL$|PORT$|HOST$|PUBLIC_URL$|PAGES_ORIGIN$|LOG_LEVEL$)/.test(key))
      continue;
    env[key] = value;
  }
  env.NODE_COMPILE_CACHE = compileCache;
  env.TANDEM_DATA = dataDir;
  return env;
}

interface Text {
  type: string;
  text?: string;
}

describe('MCP over stdio (tandem mcp)', () => {
  let dataDir: string;
  let ids: ImportResult['workspaces'][string];
  const clients: Client[] = [];

  const connect = async (...args: string[]) => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', ...args],
      env: cleanEnv(dataDir),
      cwd: ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'stdio-tests', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };

  const text = (result: { content?: unknown }) =>
    ((result.content ?? []) as Text[]).map((c) => c.text ?? '').join('\n');

  const artifactRow = (id: string) => {
    const db = new DatabaseSync(join(dataDir, 'tandem.sqlite'), { readOnly: true });
    try {
      return db.prepare('SELECT owner_id, version, content FROM artifacts WHERE id = ?').get(id) as
        { owner_id: string; version: number; content: string } | undefined;
    } finally {
      db.close();
    }
  };

  before(() => {
    dataDir = mkdtempSync(join(tmpdir(), 'tandem-stdio-'));
    const fixtureFile = join(dataDir, 'fixture.json');
    writeFileSync(fixtureFile, JSON.stringify(testFixture));
    const imported = spawnSync(process.execPath, [BIN, 'import', fixtureFile], {
      cwd: ROOT,
      env: cleanEnv(dataDir),
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(imported.status, 0, imported.stderr);
    ids = (JSON.parse(imported.stdout) as ImportResult).workspaces.Acme!;
  });

  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(compileCache, { recursive: true, force: true });
  });

  it('lists exactly the implemented tools', async () => {
    const client = await connect('--user', 'ada@acme.test');
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      IMPLEMENTED_TOOLS,
    );
  });

  it('acts as the person named by --user', async () => {
    const ada = await connect('--user', 'ada@acme.test');
    const read = await ada.callTool({ name: 'read_page', arguments: { page_id: ids.artifacts.landing } });
    assert.notEqual(read.isError, true, text(read));
    assert.equal((read.structuredContent as { role: string }).role, 'owner');
    assert.match(text(read), /^# Landing \(version 1\)/);

    const created = await ada.callTool({
      name: 'create_page',
      arguments: { title: 'From stdio', html: '<p>stdio</p>' },
    });
    assert.notEqual(created.isError, true, text(created));
    const pageId = (created.structuredContent as { page_id: string }).page_id;
    const row = artifactRow(pageId);
    assert.equal(row?.owner_id, ids.users['ada@acme.test']);
    assert.equal(row?.content, '<p>stdio</p>');

    // Bob holds only an explicit commenter role on Ada's page; the same call shows his role.
    const bob = await connect('--user', 'bob@acme.test');
    const bobRead = await bob.callTool({ name: 'read_page', arguments: { page_id: ids.artifacts.landing } });
    assert.equal((bobRead.structuredContent as { role: string }).role, 'commenter');
    const bobSeesAdas = await bob.callTool({ name: 'read_page', arguments: { page_id: pageId } });
    assert.equal(bobSeesAdas.isError, true);
  });

  it('with --scopes documents:read still lists every implemented tool but refuses write_page', async () => {
    const client = await connect('--user', 'ada@acme.test', '--scopes', 'documents:read');
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      IMPLEMENTED_TOOLS,
    );

    const pageId = ids.artifacts.landing!;
    const before = artifactRow(pageId);
    const refused = await client.callTool({
      name: 'write_page',
      arguments: { page_id: pageId, html: '<p>overwritten</p>', expected_version: before!.version },
    });
    assert.equal(refused.isError, true);
    const message = text(refused);
    assert.ok(message.startsWith('Tool failed: '), message);
    assert.match(message, /documents:write/);
    assert.deepEqual(artifactRow(pageId), before);

    const read = await client.callTool({ name: 'read_page', arguments: { page_id: pageId } });
    assert.notEqual(read.isError, true, text(read));
  });
});
