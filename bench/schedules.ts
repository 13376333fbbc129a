/**
 * Schedules cost rows, not memory: the scheduler's tick and the process's memory with 10,000
 * enabled schedules, against the same process with none (measured first, as the baseline).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { demoFixture, DEMO_USER } from '../src/domains/import/demo.ts';
import { createEngine } from '../src/engine/engine.ts';
import { openServices } from '../src/services.ts';

const SCHEDULES = Number(process.env.BENCH_SCHEDULES ?? 10_000);
const TICKS = 50;

function mb(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'tandem-bench-schedules-'));
  const services = await openServices({ sqlitePath: join(dir, 'tandem.sqlite') });
  try {
    const { workspaces } = await importFixture(services.deps, demoFixture);
    const ws = Object.values(workspaces)[0]!;
    const actor: Actor = { personId: ws.users[DEMO_USER]!, workspaceId: ws.id, scopes: new Set(SCOPES) };
    const engine = createEngine(services);

    const tick = async () => {
      const started = performance.now();
      for (let i = 0; i < TICKS; i++) await engine.fireSchedules();
      return (performance.now() - started) / TICKS;
    };
    const settle = () => {
      globalThis.gc?.();
      return process.memoryUsage();
    };

    const baseTick = await tick();
    const baseMemory = settle();

    // One published automation, then its row copied: each copy is an enabled schedule due later.
    const draft = await services.automations.draft(actor, {
      ask: 'Note the time every day.',
      write_approval: 'automatic',
      plan_json: {
        planVersion: 1,
        name: 'Clock',
        description: 'Posts the time.',
        nodes: [
          { id: 'now', kind: 'transform', op: 'now', input: {} },
          {
            id: 'post',
            kind: 'capability',
            capability: 'conversations.post_message',
            input: { text: { kind: 'ref', node: 'now', path: 'iso' } },
          },
        ],
        edges: [{ from: 'now', to: 'post' }],
      },
    });
    const published = await services.automations.publish(actor, {
      flow_version_id: draft.flow_version_id,
      name: 'Clock',
      trigger: { kind: 'schedule', frequency: 'daily', hour: 3, minute: 0, timezone: 'Europe/Berlin' },
    });
    const row = await services.deps.db
      .selectFrom('automations')
      .selectAll()
      .where('id', '=', published.automation_id)
      .executeTakeFirstOrThrow();
    const future = Date.now() + 86_400_000;
    await services.deps.db.transaction().execute(async (trx) => {
      for (let i = 1; i < SCHEDULES; i++) {
        await trx
          .insertInto('flows')
          .values({
            id: `flw_bench_${i}`,
            workspace_id: ws.id,
            created_by: actor.personId,
            automation_id: null,
            created_at: 0,
          })
          .execute();
        await trx
          .insertInto('automations')
          .values({ ...row, id: `aut_bench_${i}`, flow_id: `flw_bench_${i}`, next_fire_at: future + i })
          .execute();
      }
    });

    const loadedTick = await tick();
    const loadedMemory = settle();
    console.log(`Scheduler with ${SCHEDULES.toLocaleString('en')} enabled schedules (none due), SQLite`);
    console.log('                         baseline (none)   loaded     ratio');
    console.log(
      `tick (ms)                ${baseTick.toFixed(3).padStart(10)}   ${loadedTick.toFixed(3).padStart(8)}   ${(loadedTick / baseTick).toFixed(2).padStart(6)}×`,
    );
    console.log(
      `heap used                ${mb(baseMemory.heapUsed).padStart(10)}   ${mb(loadedMemory.heapUsed).padStart(8)}   ${(loadedMemory.heapUsed / baseMemory.heapUsed).toFixed(2).padStart(6)}×`,
    );
    console.log(
      `RSS                      ${mb(baseMemory.rss).padStart(10)}   ${mb(loadedMemory.rss).padStart(8)}   ${(loadedMemory.rss / baseMemory.rss).toFixed(2).padStart(6)}×`,
    );
    console.log(
      'target: no timer per automation; the tick is one indexed query whatever the number of schedules',
    );
    await engine.stop();
  } finally {
    await services.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
