import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Kysely } from 'kysely';
import type { Database } from '../storage/schema.ts';

/** Tandem's Prometheus metrics, in one registry served at /metrics. */
export const registry = new Registry();

export const toolCalls = new Counter({
  name: 'tandem_tool_calls_total',
  help: 'MCP tool calls, by tool and outcome (ok, refused, error).',
  labelNames: ['tool', 'outcome'] as const,
  registers: [registry],
});

export const toolSeconds = new Histogram({
  name: 'tandem_tool_call_seconds',
  help: 'How long MCP tool calls took, by tool.',
  labelNames: ['tool'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [registry],
});

export const pickupSeconds = new Histogram({
  name: 'tandem_run_pickup_seconds',
  help: 'From a run being queued to a worker starting it.',
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const schedulerLagSeconds = new Histogram({
  name: 'tandem_scheduler_lag_seconds',
  help: 'From the instant a schedule was due to its run being queued.',
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
  registers: [registry],
});

let watched: Kysely<Database> | undefined;

/** The database the gauges below read when scraped (this process's). */
export function watchRuns(db: Kysely<Database>): void {
  watched = db;
}

new Gauge({
  name: 'tandem_runs',
  help: 'Runs by status.',
  labelNames: ['status'] as const,
  registers: [registry],
  async collect() {
    this.reset();
    if (!watched) return;
    const rows = await watched
      .selectFrom('runs')
      .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('status')
      .execute();
    for (const r of rows) this.set({ status: r.status }, Number(r.n));
  },
});

new Gauge({
  name: 'tandem_queue_depth',
  help: 'Runs due now that no worker holds.',
  registers: [registry],
  async collect() {
    if (!watched) return;
    const now = Date.now();
    const row = await watched
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('available_at', '<=', now)
      .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<', now)]))
      .executeTakeFirstOrThrow();
    this.set(Number(row.n));
  },
});
