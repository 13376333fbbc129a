/**
 * What must hold at the end, read through the public doors (MCP tools on each server, a fresh
 * provider on each server): every acknowledged write present exactly once, documents converged
 * everywhere, every schedule instant fired once, no run left unfinished.
 */
import type { Agent } from './agents.ts';
import type { HookSender } from './hooks.ts';
import { connect, type Typist } from './people.ts';
import type { Seeded } from './seed.ts';
import { waitFor } from './cluster.ts';

type Call = (name: string, args: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** A document's whole markdown, read a window at a time. */
export async function readWhole(call: Call, documentId: string): Promise<string> {
  let text = '';
  for (let offset = 0; ;) {
    const r = await call('read_document', { document_id: documentId, offset, window: 24_000 });
    text += String(r.markdown);
    if (!r.truncated) return text;
    offset += 24_000;
  }
}

function lineCounts(markdown: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of markdown.split('\n')) counts.set(line.trim(), (counts.get(line.trim()) ?? 0) + 1);
  return counts;
}

const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export interface CheckInput {
  seeded: Seeded;
  /** A caller on each server directly. */
  callers: Call[];
  serverWs: string[];
  token: string;
  typists: Typist[];
  agents: Agent[];
  hooks: HookSender;
  /** Per schedule index, the instant it was set to fire at. */
  planted: Map<number, string>;
}

export async function check(input: CheckInput): Promise<string[]> {
  const failures: string[] = [];
  const fail = (message: string) => failures.push(message);
  const { seeded, callers, typists, agents } = input;
  const call = callers[0]!;

  // Documents: the same text on every instance, in a fresh provider and through read_document.
  const finalText = new Map<string, string>();
  for (const doc of seeded.documents) {
    const reads = await Promise.all(callers.map((c) => readWhole(c, doc.id)));
    const fresh = input.serverWs.map((url) => connect(url, doc.id, input.token));
    try {
      await waitFor(() => fresh.every((f) => f.settled()), `fresh providers on ${doc.id}`, 30_000);
      const { projection } = await import('../src/domains/documents/model.ts');
      const live = fresh.map((f) => projection(f.doc));
      const all = [...reads, ...live];
      if (all.some((t) => t !== all[0]))
        fail(`document ${doc.id} differs between instances or between the socket and read_document`);
      finalText.set(doc.id, reads[0]!);
    } finally {
      for (const f of fresh) f.close();
    }
  }

  // People: each paragraph on the server is exactly what its person typed.
  for (const t of typists) {
    const text = finalText.get(t.documentId) ?? '';
    const typed = t.typed();
    const line = text.split('\n').find((l) => l.startsWith(typed.slice(0, 4)));
    if (line !== typed && process.env.SOAK_DEBUG) console.log(JSON.stringify({ typed, text }));
    if (line !== typed)
      fail(`${typed.slice(0, 4)} typed ${typed.length} characters; the server has ${line?.length ?? 0}`);
  }

  // Agents: edits and comments acknowledged are there once; unacknowledged at most once.
  for (const a of agents) {
    for (const e of a.ledger.edits) {
      const n = lineCounts(finalText.get(e.documentId) ?? '').get(e.marker) ?? 0;
      if (e.acked ? n !== 1 : n > 1)
        fail(`edit ${e.marker} (${e.acked ? 'acknowledged' : 'not acknowledged'}) is there ${n} times`);
    }
  }
  const bodies = new Map<string, Map<string, number>>();
  for (const doc of seeded.documents) {
    const r = await call('read_comments', { document_id: doc.id, include_resolved: true });
    const counts = new Map<string, number>();
    // New threads only (no replies): each comment the agents add is the body of a thread.
    for (const thread of r.threads as { body: string }[])
      counts.set(thread.body, (counts.get(thread.body) ?? 0) + 1);
    bodies.set(doc.id, counts);
  }
  for (const a of agents) {
    for (const c of a.ledger.comments) {
      const n = bodies.get(c.documentId)?.get(c.marker) ?? 0;
      if (c.acked ? n !== 1 : n > 1)
        fail(`comment ${c.marker} (${c.acked ? 'acknowledged' : 'not acknowledged'}) is there ${n} times`);
    }
  }

  // Pages: no two acknowledged writes share a version, and the last one acknowledged is kept.
  for (const a of agents) {
    const page = await a.call('read_page', { page_id: seeded.agents[a.index]!.pageId });
    const versions = a.ledger.pageWrites.map((w) => w.version);
    if (new Set(versions).size !== versions.length) fail(`agent ${a.index}: two page writes got one version`);
    const last = a.ledger.pageWrites.at(-1);
    if (last && Number(page.version) < last.version) fail(`agent ${a.index}: page version went back`);
    if (last && Number(page.version) === last.version && page.html !== last.html)
      fail(`agent ${a.index}: the page does not hold its last acknowledged write`);
  }

  // Runs: each acknowledged run ended well and logged its line once. Two runs may log the same
  // line (both took the time in the same millisecond, on two workers): a line is there as many
  // times as runs logged it, plus at most the runs whose call failed without an answer.
  const runLog = lineCounts(await readWhole(call, seeded.logs.runs));
  const expected = new Map<string, { runs: string[]; slack: number }>();
  for (const a of agents) {
    const automationId = seeded.agents[a.index]!.automationId;
    for (const runId of a.ledger.runs) {
      const r = await a.call('read_automation', { automation_id: automationId, run_id: runId });
      const run = r.run as
        | {
            status?: string;
            nodes?: { node_id: string; error?: string }[];
            output?: { echo?: { text?: string } };
          }
        | undefined;
      if (run?.status !== 'succeeded') {
        const errors = run?.nodes?.filter((n) => n.error).map((n) => `${n.node_id}: ${n.error}`);
        fail(`run ${runId} is ${run?.status}${errors?.length ? ` (${errors.join('; ')})` : ''}`);
        continue;
      }
      const line = run.output?.echo?.text ?? '';
      const entry = expected.get(line) ?? { runs: [], slack: 0 };
      entry.runs.push(runId);
      entry.slack = Math.max(entry.slack, a.ledger.runsUnknown);
      expected.set(line, entry);
    }
  }
  for (const [line, { runs, slack }] of expected) {
    const n = runLog.get(line) ?? 0;
    if (!line || n < runs.length || n > runs.length + slack)
      fail(`runs ${runs.join(', ')} logged "${line}" ${n} times`);
  }

  // Schedules: each planted instant fired once, and nothing else.
  const scheduleLog = lineCounts(await readWhole(call, seeded.logs.schedules));
  for (const [k, at] of input.planted) {
    const n = scheduleLog.get(`s${k} ${at}`) ?? 0;
    if (n !== 1) fail(`schedule ${k} fired ${n} times for ${at}`);
  }
  const fired = [...scheduleLog.entries()].filter(([l]) => /^s\d+ /.test(l)).reduce((s, [, n]) => s + n, 0);
  if (fired !== input.planted.size)
    fail(`${fired} schedule lines for ${input.planted.size} planted instants`);

  // Webhooks: each acknowledged event ran once; a repeated signed event started nothing.
  const hookLog = lineCounts(await readWhole(call, seeded.logs.hooks));
  for (const n of input.hooks.acked)
    if (hookLog.get(`h${n}`) !== 1) fail(`webhook ${n} logged ${hookLog.get(`h${n}`) ?? 0} times`);
  for (const n of input.hooks.unknown)
    if ((hookLog.get(`h${n}`) ?? 0) > 1) fail(`webhook ${n} logged more than once`);
  if (input.hooks.duplicatesThatRan)
    fail(`${input.hooks.duplicatesThatRan} repeated webhook deliveries started runs`);

  // No run left queued or running, on any automation.
  const owned: [Call, string][] = [
    ...agents.map((a): [Call, string] => [
      (n, args) => a.call(n, args),
      seeded.agents[a.index]!.automationId,
    ]),
    ...[...seeded.schedules, seeded.hookAutomation].map((id): [Call, string] => [call, id]),
  ];
  for (const [as, id] of owned) {
    const r = await as('read_automation', { automation_id: id, include_runs: true });
    for (const run of (r.runs ?? []) as { run_id: string; status: string }[])
      if (!TERMINAL.has(run.status)) fail(`run ${run.run_id} is still ${run.status}`);
  }
  return failures;
}
