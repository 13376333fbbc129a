import type { Db } from '../storage/schema.ts';
import type { AutomationRow, RunRow } from './run-state.ts';

/** Every column of an automation, read with its run in one statement (checked complete below). */
const AUTOMATION_COLUMNS = [
  'id',
  'workspace_id',
  'flow_id',
  'name',
  'description',
  'tags_json',
  'scope',
  'created_by',
  'acting_id',
  'live_version_id',
  'trigger_kind',
  'trigger_json',
  'notify',
  'cooldown_s',
  'enabled',
  'session_id',
  'next_fire_at',
  'last_fired_at',
  'consecutive_failures',
  'created_at',
  'updated_at',
  'dropped_events',
  'last_event_at',
] as const satisfies readonly (keyof AutomationRow)[];
// A column added to automations and not listed above fails the type check here.
const complete: Exclude<keyof AutomationRow, (typeof AUTOMATION_COLUMNS)[number]> extends never
  ? true
  : never = true;
void complete;

export interface LiveRun {
  run: RunRow;
  automation: AutomationRow;
}

/** The automation's columns under `a_` names, to select beside a run's (`automations as a`). */
export const automationColumns = () => AUTOMATION_COLUMNS.map((c) => `a.${c} as a_${c}`) as never[];

/** A run and its automation, read together (a worker reads them before each step that waits). */
export async function runWithAutomation(db: Db, runId: string): Promise<LiveRun | undefined> {
  const row = (await db
    .selectFrom('runs')
    .innerJoin('automations as a', 'a.id', 'runs.automation_id')
    .selectAll('runs')
    .select(automationColumns())
    .where('runs.id', '=', runId)
    .executeTakeFirst()) as Record<string, unknown> | undefined;
  return row && splitLive(row);
}

/** A row of a run's columns and its automation's `a_` columns, as the two rows. */
export function splitLive(row: Record<string, unknown>): LiveRun {
  const automation: Record<string, unknown> = {};
  for (const c of AUTOMATION_COLUMNS) {
    automation[c] = row[`a_${c}`];
    delete row[`a_${c}`];
  }
  return { run: row as unknown as RunRow, automation: automation as unknown as AutomationRow };
}
