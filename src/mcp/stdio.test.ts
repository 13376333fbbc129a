import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ImportResult } from '../domains/import/import.ts';
import { testFixture } from '../../test/support/fixture.ts';
import { MAX_ARGUMENT_CHARS } from './arguments.ts';
import { MAX_MESSAGE_BYTES } from './message-lines.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'bin', 'tandem.js');
/** Long enough for a 30 MB message to be read and answered on a busy machine. */
const ANSWER_WITHIN_MS = 30_000;

interface Reply {
  id: string | number | null;
  result?: { isError?: boolean; structuredContent?: Record<string, unknown>; content?: { text: string }[] };
  error?: { code: number; message: string };
}

/** `tandem mcp` spoken to line by line, as a client writes to it. */
class RawClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffered = '';
  private readonly waiting = new Map<string, (reply: Reply) => void>();
  private readonly arrived = new Map<string, Reply>();

  constructor(env: Record<string, string>) {
    this.child = spawn(process.execPath, [BIN, 'mcp', '--user', 'ada@acme.test'], { cwd: ROOT, env });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text: string) => {
      this.buffered += text;
      for (let at = this.buffered.indexOf('\n'); at >= 0; at = this.buffered.indexOf('\n')) {
        const reply = JSON.parse(this.buffered.slice(0, at)) as Reply;
        this.buffered = this.buffered.slice(at + 1);
        const key = JSON.stringify(reply.id);
        const waiter = this.waiting.get(key);
        if (waiter) waiter(reply);
        else this.arrived.set(key, reply);
      }
    });
  }

  send(message: string | Buffer): void {
    this.child.stdin.write(message);
    this.child.stdin.write('\n');
  }

  /** The reply with this id, or a failure naming it once ANSWER_WITHIN_MS pass without one. */
  reply(id: string | number | null): Promise<Reply> {
    const key = JSON.stringify(id);
    const ready = this.arrived.get(key);
    if (ready) {
      this.arrived.delete(key);
      return Promise.resolve(ready);
    }
    return new Promise((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no reply with id ${key}`)), ANSWER_WITHIN_MS);
      this.waiting.set(key, (reply) => {
        clearTimeout(timer);
        this.waiting.delete(key);
        done(reply);
      });
    });
  }

  async call(id: number, name: string, args: Record<string, unknown>): Promise<Reply> {
    this.send(
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } }),
    );
    return this.reply(id);
  }

  async open(): Promise<void> {
    this.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      }),
    );
    assert.ok((await this.reply(0)).result, 'initialize is answered');
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  }

  /** Ends its input, as a client closing does; a server that does not exit then is stopped. */
  close(): Promise<void> {
    if (this.child.exitCode !== null) return Promise.resolve();
    return new Promise((done) => {
      const timer = setTimeout(() => this.child.kill(), 5_000);
      this.child.once('exit', () => {
        clearTimeout(timer);
        done();
      });
      this.child.stdin.end();
    });
  }
}

describe('tandem mcp with messages past its limit', () => {
  let dataDir: string;
  let env: Record<string, string>;
  let ids: ImportResult['workspaces'][string];
  let client: RawClient;

  before(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'tandem-stdio-limit-'));
    env = { ...(process.env as Record<string, string>), TANDEM_DATA: dataDir };
    for (const key of ['DATABASE_URL', 'REDIS_URL', 'PORT', 'HOST', 'PUBLIC_URL']) delete env[key];
    const fixtureFile = join(dataDir, 'fixture.json');
    writeFileSync(fixtureFile, JSON.stringify(testFixture));
    const imported = spawnSync(process.execPath, [BIN, 'import', fixtureFile], {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 20_000,
    });
    assert.equal(imported.status, 0, imported.stderr);
    ids = (JSON.parse(imported.stdout) as ImportResult).workspaces.Acme!;
    client = new RawClient(env);
    await client.open();
  });

  after(async () => {
    await client?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers a message over 32 MiB with an error for its id, then serves the next call', async () => {
    const huge = JSON.stringify({
      jsonrpc: '2.0',
      method: 'tools/call',
      params: { name: 'read_page', arguments: { page_id: 'x'.repeat(MAX_MESSAGE_BYTES) } },
      id: 7,
    });
    client.send(huge);
    const refused = await client.reply(7);
    assert.equal(refused.error?.code, -32600);
    assert.equal(
      refused.error?.message,
      `Message too large: it is ${Buffer.byteLength(huge).toLocaleString('en')} bytes, and tandem mcp reads at most 33,554,432 (32 MiB) per message. Nothing in it was done; send less in each call.`,
    );

    const page = await client.call(8, 'read_page', { page_id: ids.artifacts.landing });
    assert.equal(page.result?.structuredContent?.page_id, ids.artifacts.landing);
  });

  it('answers with id null when the oversized message has no id to read, and keeps going', async () => {
    client.send(Buffer.alloc(MAX_MESSAGE_BYTES + 1, 'z'));
    const refused = await client.reply(null);
    assert.match(refused.error?.message ?? '', /^Message too large: it is 33,554,433 bytes/);
    const page = await client.call(9, 'read_page', { page_id: ids.artifacts.landing });
    assert.equal(page.result?.structuredContent?.page_id, ids.artifacts.landing);
  });

  it('takes the largest call the tools accept: arguments of 10,000,000 three-byte characters', async () => {
    const content = '中'.repeat(MAX_ARGUMENT_CHARS - 1000);
    const r = await client.call(10, 'edit_document', {
      document_id: ids.artifacts.roadmap,
      mode: 'append',
      content_markdown: content,
    });
    assert.notEqual(r.result?.isError, true, JSON.stringify(r.result?.content));
    assert.equal(r.result?.structuredContent?.stop_reason, 'cap');
    assert.equal(r.result?.structuredContent?.written_chars, 60_000);
  });
});
