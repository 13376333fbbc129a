import { compiled } from '../storage/compiled.ts';
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
  const [row] = (await selectLive(db, runId)).rows as Record<string, unknown>[];
  return row && splitLive(row);
}

const selectLive = compiled((db, runId: string) =>
  db
    .selectFrom('runs')
    .leftJoin('automations as a', 'a.id', 'runs.automation_id')
    .selectAll('runs')
    .select(automationColumns())
    .where('runs.id', '=', runId),
);

/**
 * What a dry run of a never-published draft runs as in place of an automation: enabled, telling
 * nobody, with no session (its writes, approvals and notices are all simulated).
 */
function draftAutomation(run: RunRow): AutomationRow {
  return {
    id: '',
    workspace_id: run.workspace_id,
    flow_id: '',
    name: 'Draft',
    description: '',
    tags_json: '[]',
    scope: 'personal',
    created_by: run.acting_id,
    acting_id: run.acting_id,
    live_version_id: run.flow_version_id,
    trigger_kind: 'manual',
    trigger_json: '{}',
    notify: 'off',
    cooldown_s: 0,
    enabled: 1,
    session_id: '',
    next_fire_at: null,
    last_fired_at: null,
    consecutive_failures: 0,
    created_at: run.queued_at,
    updated_at: run.queued_at,
    dropped_events: 0,
    last_event_at: null,
  };
}

/** A row of a run's columns and its automation's `a_` columns, as the two rows. */
export function splitLive(row: Record<string, unknown>): LiveRun {
  const automation: Record<string, unknown> = {};
  for (const c of AUTOMATION_COLUMNS) {
    automation[c] = row[`a_${c}`];
    delete row[`a_${c}`];
  }
  const run = row as unknown as RunRow;
  if (run.automation_id === null) return { run, automation: draftAutomation(run) };
  return { run, automation: automation as unknown as AutomationRow };
}
