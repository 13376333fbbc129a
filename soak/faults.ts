/**
 * The faults, one after another mid-load, each followed by how long the cluster took to heal:
 * every process ready again, a tool call through the proxy answered, every editor synced and every
 * instance showing the same text, and a run queued after the fault finished.
 */
import type { Agent } from './agents.ts';
import { waitFor, type Postgres, type Redis, type TandemProcess } from './cluster.ts';
import type { Watcher } from './people.ts';

export interface Heal {
  fault: string;
  /** Milliseconds from the fault to each sign of health. */
  ready: number;
  toolCall: number;
  editorsSynced: number;
  instancesAgree: number;
  runFinished: number;
}

export interface FaultTargets {
  servers: TandemProcess[];
  workers: TandemProcess[];
  redis: Redis;
  postgres: Postgres;
  /** What keeps the editors from agreeing (empty once they do). */
  disagreements: () => string[];
  /** Per document, its watcher on each instance. */
  watchers: Watcher[][];
  ready: () => Promise<boolean>;
  /** An agent of the orchestrator's own, through the proxy. */
  probe: Agent;
  probeDocument: string;
  probeAutomation: string;
}

const HEAL_LIMIT = 60_000;

async function healed(fault: string, at: number, t: FaultTargets): Promise<Heal> {
  const since = () => Date.now() - at;
  const measure = async (what: string, check: () => Promise<boolean> | boolean) => {
    try {
      await waitFor(check, `${what} after ${fault}`, HEAL_LIMIT);
      return since();
    } catch {
      return Infinity;
    }
  };
  const ready = await measure('every process ready', t.ready);
  const toolCall = await measure('a tool call', async () => {
    await t.probe.call('read_document', { document_id: t.probeDocument });
    return true;
  });
  let shown = Date.now();
  const editorsSynced = await measure('every editor synced', () => {
    const left = t.disagreements();
    // SOAK_DEBUG: what is still apart, every 5 s while it heals.
    if (process.env.SOAK_DEBUG && left.length && Date.now() - shown > 5000) {
      shown = Date.now();
      console.log(`  ${since()} ms: ${left.length} apart, e.g. ${left.slice(0, 3).join(' | ')}`);
    }
    return left.length === 0;
  });
  if (editorsSynced === Infinity) for (const d of t.disagreements().slice(0, 10)) console.log(`  ${d}`);
  const instancesAgree = await measure('every instance showing the same text', () =>
    t.watchers.every((ws) => ws.every((w) => w.conn.settled() && w.markdown() === ws[0]!.markdown())),
  );
  let runId = '';
  const runFinished = await measure('a run queued after the fault finished', async () => {
    if (!runId) {
      const r = await t.probe.call('edit_automation', { action: 'run', automation_id: t.probeAutomation });
      runId = String(r.run_id);
      t.probe.ledger.runs.push(runId);
    }
    const r = await t.probe.call('read_automation', { automation_id: t.probeAutomation, run_id: runId });
    return (r.run as { status?: string } | undefined)?.status === 'succeeded' || r.status === 'succeeded';
  });
  return { fault, ready, toolCall, editorsSynced, instancesAgree, runFinished };
}

/** The four faults, at the given moments (ms from `start`), each healed before the next. */
export async function faults(t: FaultTargets, start: number, at: number[], log: (line: string) => void) {
  const plan: [string, () => Promise<void>][] = [
    [
      'SIGKILL of server 1',
      async () => {
        await t.servers[1]!.kill();
        await t.servers[1]!.start();
      },
    ],
    [
      'SIGKILL of worker 1',
      async () => {
        await t.workers[1 % t.workers.length]!.kill();
        await t.workers[1 % t.workers.length]!.start();
      },
    ],
    ['restart of Redis', () => t.redis.restart()],
    ['restart of PostgreSQL (immediate stop)', async () => t.postgres.restart()],
  ];
  const heals: Heal[] = [];
  for (let i = 0; i < plan.length; i++) {
    const [name, act] = plan[i]!;
    const wait = start + at[i]! - Date.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    log(`fault: ${name}`);
    const when = Date.now();
    await act();
    const heal = await healed(name, when, t);
    log(`  healed: ${JSON.stringify(heal)}`);
    heals.push(heal);
  }
  return heals;
}
