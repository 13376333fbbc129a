/**
 * Agents: MCP SDK clients over Streamable HTTP through the proxy, each acting for a person with a
 * personal access token, calling reads, edits, comments, page writes and runs back to back. Every
 * write they were told succeeded is remembered, to be found exactly once at the end.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { Timings } from './stats.ts';
import { sleep } from './stats.ts';

type Result = Record<string, unknown>;

/** What one agent was told happened (acknowledged) and what it does not know (the call failed). */
export interface AgentLedger {
  edits: { documentId: string; marker: string; acked: boolean }[];
  comments: { documentId: string; marker: string; acked: boolean }[];
  pageWrites: { version: number; html: string }[];
  pageUnknown: number;
  runs: string[];
  runsUnknown: number;
}

export class Agent {
  readonly ledger: AgentLedger = {
    edits: [],
    comments: [],
    pageWrites: [],
    pageUnknown: 0,
    runs: [],
    runsUnknown: 0,
  };
  private client: Client | undefined;
  private stopped = false;
  private n = 0;
  calls = 0;
  failures = 0;
  errors = new Map<string, number>();

  private readonly url: string;
  private readonly token: string;
  readonly index: number;
  private readonly documents: string[];
  private readonly pageId: string;
  private readonly automationId: string;
  private readonly timings: Timings;
  private readonly thinkMs: number;

  constructor(
    url: string,
    token: string,
    index: number,
    documents: string[],
    pageId: string,
    automationId: string,
    timings: Timings,
    thinkMs: number,
  ) {
    this.url = url;
    this.token = token;
    this.index = index;
    this.documents = documents;
    this.pageId = pageId;
    this.automationId = automationId;
    this.timings = timings;
    this.thinkMs = thinkMs;
  }

  private async connected(): Promise<Client> {
    if (this.client) return this.client;
    const client = new Client({ name: `soak-agent-${this.index}`, version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${this.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${this.token}` } },
      }),
    );
    this.client = client;
    return client;
  }

  /** One tool call, timed; throws on a tool error or a transport failure. */
  async call(name: string, args: Result): Promise<Result> {
    const started = performance.now();
    let client: Client;
    try {
      client = await this.connected();
    } catch (error) {
      this.client = undefined;
      throw error;
    }
    this.calls++;
    const r = await client.callTool({ name, arguments: args });
    this.timings.add(`tool ${name}`, performance.now() - started);
    if (r.isError) {
      const text = JSON.stringify(r.content).slice(0, 200);
      throw new ToolError(`${name}: ${text}`);
    }
    return (r.structuredContent ?? {}) as Result;
  }

  private note(error: unknown) {
    this.failures++;
    const kind = error instanceof ToolError ? error.message.slice(0, 80) : String(error).slice(0, 80);
    this.errors.set(kind, (this.errors.get(kind) ?? 0) + 1);
    if (!(error instanceof ToolError)) this.client = undefined;
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(Math.random() * list.length)]!;
  }

  private async step() {
    const roll = Math.random();
    const doc = this.pick(this.documents);
    const marker = `a${String(this.index).padStart(2, '0')}.${this.n++}`;
    if (roll < 0.4) {
      await this.call('read_document', { document_id: doc });
    } else if (roll < 0.6) {
      const entry = { documentId: doc, marker, acked: false };
      this.ledger.edits.push(entry);
      await this.call('edit_document', { document_id: doc, mode: 'append', content_markdown: marker });
      entry.acked = true;
    } else if (roll < 0.75) {
      const entry = { documentId: doc, marker, acked: false };
      this.ledger.comments.push(entry);
      await this.call('add_comment', { document_id: doc, body_markdown: marker });
      entry.acked = true;
    } else if (roll < 0.85) {
      const page = await this.call('read_page', { page_id: this.pageId });
      const html = `<p>${marker}</p>`;
      this.ledger.pageUnknown++;
      const written = await this.call('write_page', {
        page_id: this.pageId,
        html,
        expected_version: page.version,
      });
      this.ledger.pageUnknown--;
      this.ledger.pageWrites.push({ version: Number(written.new_version), html });
    } else if (roll < 0.95) {
      this.ledger.runsUnknown++;
      const run = await this.call('edit_automation', { action: 'run', automation_id: this.automationId });
      this.ledger.runsUnknown--;
      this.ledger.runs.push(String(run.run_id));
    } else {
      await this.call('read_comments', { document_id: doc });
    }
  }

  async loop() {
    while (!this.stopped) {
      try {
        await this.step();
      } catch (error) {
        this.note(error);
        await sleep(200);
      }
      await sleep(this.thinkMs * Math.random());
    }
  }

  stop() {
    this.stopped = true;
  }

  async close() {
    await this.client?.close().catch(() => undefined);
  }
}

export class ToolError extends Error {}
