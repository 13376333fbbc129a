/**
 * The live socket: how long an agent's append takes to reach 50 connected editors (against the
 * same append with nobody connected), and what one idle connection costs the server.
 *
 *   node --expose-gc bench/collab.ts      (BENCH_APPENDS, BENCH_CLIENTS, BENCH_IDLE to change the load)
 *
 * The server runs in a child process of its own, so the editors' replicas (here) are not counted
 * in its memory and do not take its event loop.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import * as Y from 'yjs';
import { loadConfig } from '../src/config.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { demoFixture, DEMO_WORKSPACE } from '../src/domains/import/demo.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { openConfiguredServices, startServer } from '../src/server.ts';

const APPENDS = Number(process.env.BENCH_APPENDS ?? 100);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 50);
const IDLE = Number(process.env.BENCH_IDLE ?? 200);

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
const now = () => performance.timeOrigin + performance.now();

type Request = { kind: 'append'; line: string } | { kind: 'memory' } | { kind: 'stop' };
type Reply =
  | { kind: 'ready'; url: string; token: string; docId: string }
  | { kind: 'appended'; started: number; landed: number; ended: number }
  | { kind: 'memory'; heap: number; external: number; rss: number };

// ── the server (child process) ────────────────────────────────────────────────────────────────

async function serverProcess(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'tandem-bench-collab-'));
  const config = loadConfig({ TANDEM_DATA: dataDir, PORT: '18797', PAGES_PORT: '18798', LOG_LEVEL: 'error' });
  const services = await openConfiguredServices(config);
  const ids = (await importFixture(services.deps, demoFixture)).workspaces[DEMO_WORKSPACE]!;
  const personId = ids.users['ada@demo.test']!;
  const actor = { personId, workspaceId: ids.id, scopes: new Set(SCOPES) };
  const { token } = await services.tokens.create(personId, ids.id, [...SCOPES], 3_600_000);
  const made = await services.documents.create(actor, {
    title: 'Bench',
    scope: 'org',
    content_markdown: '# Bench\n\nA document people follow live.\n',
  });
  const server = await startServer(config, services);
  const send = (reply: Reply) => process.send!(reply);
  process.on('message', (request: Request) => {
    void (async () => {
      if (request.kind === 'append') {
        let landed = 0;
        const live = await services.documents.store.open(made.document_id);
        const onUpdate = (_: Uint8Array, origin: unknown) => {
          if (origin === services.documents.store.agentOrigin && landed === 0) landed = now();
        };
        live.doc.on('update', onUpdate);
        const started = now();
        await services.documents.edit(actor, {
          document_id: made.document_id,
          mode: 'append',
          content_markdown: request.line,
        });
        const ended = now();
        live.doc.off('update', onUpdate);
        send({ kind: 'appended', started, landed, ended });
      } else if (request.kind === 'memory') {
        for (let i = 0; i < 3; i++) globalThis.gc?.();
        const m = process.memoryUsage();
        send({ kind: 'memory', heap: m.heapUsed, external: m.external, rss: m.rss });
      } else {
        await server.close();
        await services.close();
        rmSync(dataDir, { recursive: true, force: true });
        process.exit(0);
      }
    })();
  });
  send({ kind: 'ready', url: `${server.url.replace(/^http/, 'ws')}/collab`, token, docId: made.document_id });
}

// ── the editors (this process) ────────────────────────────────────────────────────────────────

function ask<K extends Reply['kind']>(child: ChildProcess, request: Request, kind: K) {
  return new Promise<Extract<Reply, { kind: K }>>((resolve) => {
    const on = (reply: Reply) => {
      if (reply.kind !== kind) return;
      child.off('message', on);
      resolve(reply as Extract<Reply, { kind: K }>);
    };
    child.on('message', on);
    child.send(request);
  });
}

interface Editor {
  doc: Y.Doc;
  close(): void;
  /** Resolves with the time the editor's replica first holds `text`. */
  arrival(text: string): Promise<number>;
}

async function connect(url: string, name: string, token: string): Promise<Editor> {
  const doc = new Y.Doc();
  const socket = new HocuspocusProviderWebsocket({ url });
  const provider = new HocuspocusProvider({ websocketProvider: socket, name, token, document: doc });
  provider.attach();
  await new Promise<void>((resolve, reject) => {
    provider.on('synced', () => resolve());
    provider.on('authenticationFailed', ({ reason }: { reason: string }) => reject(new Error(reason)));
  });
  const blocks = doc.getArray<Y.Map<unknown>>('blocks');
  // Appends land at the end: the last block is the one to look at.
  const holds = (text: string) =>
    blocks.length > 0 && (blocks.get(blocks.length - 1).get('text') as Y.Text).toString() === text;
  return {
    doc,
    close() {
      provider.destroy();
      socket.destroy();
      doc.destroy();
    },
    arrival: (text) =>
      new Promise((resolve) => {
        if (holds(text)) return resolve(now());
        const check = () => {
          if (!holds(text)) return;
          doc.off('afterTransaction', check);
          resolve(now());
        };
        doc.on('afterTransaction', check);
      }),
  };
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const stats = (list: number[]) => {
  const sorted = [...list].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
};

async function appendRounds(child: ChildProcess, editors: Editor[], label: string) {
  const calls: number[] = [];
  const delivered: number[] = [];
  const landing: number[] = [];
  for (let i = 0; i < APPENDS; i++) {
    const line = `${label} line ${i}.\n`;
    const arrivals = editors.map((e) => e.arrival(line));
    const { started, landed, ended } = await ask(child, { kind: 'append', line }, 'appended');
    calls.push(ended - started);
    landing.push(landed - started);
    for (const at of await Promise.all(arrivals)) delivered.push(at - started);
  }
  return { call: stats(calls), landed: stats(landing), delivered: stats(delivered) };
}

async function main(): Promise<void> {
  const child = fork(fileURLToPath(import.meta.url), ['--server'], {
    execArgv: ['--expose-gc', '--disable-warning=ExperimentalWarning'],
  });
  const ready = await new Promise<Extract<Reply, { kind: 'ready' }>>((resolve) =>
    child.once('message', (m: Reply) => resolve(m as Extract<Reply, { kind: 'ready' }>)),
  );
  const { url, token, docId } = ready;

  // Warm up, then the append with nobody connected.
  await appendRounds(child, [], 'warm');
  const alone = await appendRounds(child, [], 'alone');
  const before = await ask(child, { kind: 'memory' }, 'memory');

  const editors: Editor[] = [];
  for (let i = 0; i < CLIENTS; i++) editors.push(await connect(url, docId, token));
  const followed = await appendRounds(child, editors, 'followed');

  for (let i = editors.length; i < IDLE; i++) editors.push(await connect(url, docId, token));
  const idle = await ask(child, { kind: 'memory' }, 'memory');
  const perClient = (idle.heap + idle.external - before.heap - before.external) / IDLE / 1024;
  const perClientRss = (idle.rss - before.rss) / IDLE / 1024;

  for (const e of editors) e.close();
  child.send({ kind: 'stop' } satisfies Request);
  await new Promise((resolve) => child.once('exit', resolve));

  const f = (n: number) => n.toFixed(1).padStart(8);
  console.log(`Live socket: an agent's append to one document (SQLite, ${APPENDS} appends each)`);
  console.log('                                         p50 ms    p99 ms');
  console.log(`append call, nobody connected         ${f(alone.call.p50)}  ${f(alone.call.p99)}`);
  console.log(
    `append call, ${String(CLIENTS).padStart(3)} editors connected     ${f(followed.call.p50)}  ${f(followed.call.p99)}`,
  );
  console.log(`append → lands in the document       ${f(followed.landed.p50)}  ${f(followed.landed.p99)}`);
  console.log(
    `append → each of ${String(CLIENTS).padStart(3)} editors          ${f(followed.delivered.p50)}  ${f(followed.delivered.p99)}`,
  );
  console.log('target: p99 from the append to every editor ≤ 100 ms');
  console.log('');
  console.log(
    `Server memory per idle editor (${IDLE} connected): ${perClient.toFixed(1)} KB of heap and buffers (${perClientRss.toFixed(1)} KB resident)`,
  );
  console.log('target: ≤ 50 KB per idle editor');
}

if (process.argv.includes('--server')) await serverProcess();
else await main();
