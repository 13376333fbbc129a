import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  const s = db.schema;
  // A retry or a replay names the run it repeats; a retry starts from that run's finished steps.
  await s.alterTable('runs').addColumn('rerun_of', 'text').execute();
  // What a step was given: its bindings resolved when it started (shown with its output).
  await s.alterTable('run_nodes').addColumn('input_json', 'text').execute();
}
