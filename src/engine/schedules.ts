import { schedulerLagSeconds } from '../observability/metrics.ts';
import { sql, type Kysely, type Selectable } from 'kysely';
import { queueRuns } from '../domains/automations/runs.ts';
import { postToSession } from '../domains/automations/session.ts';
import { nextFireAt } from '../flowplan/triggers.ts';
import type { Dialect } from '../storage/db.ts';
import type { AutomationTable, Database } from '../storage/schema.ts';

type AutomationRow = Selectable<AutomationTable>;

/** Due automations fired per transaction. */
const BATCH = 1000;
/** Missed instants counted at most for one automation (an hourly schedule down a year has 8,760). */
const MISSED_COUNTED = 1_000;

type ScheduleTrigger = Parameters<typeof nextFireAt>[0];

/**
 * What a server that was down missed of a schedule: the instants from `first` (the one it was due
 * at) up to `now`, as a sentence for its session; undefined when only `first` passed (late, not missed).
 */
function missedText(trigger: ScheduleTrigger, zone: string, first: number, now: number): string | undefined {
  let count = 1;
  let last = first;
  for (
    let at = nextFireAt(trigger, new Date(first));
    at && at.getTime() <= now;
    at = nextFireAt(trigger, at)
  ) {
    if (count === MISSED_COUNTED) break;
    count++;
    last = at.getTime();
  }
  if (count === 1) return undefined;
  const times = count === MISSED_COUNTED ? `${MISSED_COUNTED} or more` : String(count);
  return `${times} scheduled runs were missed while no worker was running (from ${new Date(first).toISOString()} to ${new Date(last).toISOString()}, ${zone}); it ran once, now, in their place.`;
}

/**
 * Fires due schedules: each due automation once, with its next instant computed from now (so a
 * server that was down fires each missed automation once). Due rows are taken in batches, each in
 * one transaction that moves their `next_fire_at` and queues their runs together; on Postgres
 * `FOR UPDATE SKIP LOCKED` lets several workers take different rows at once, and on SQLite (one
 * writer) each row's `next_fire_at` is also compared when it is moved. Returns the runs queued.
 */
export async function fireSchedules(db: Kysely<Database>, dialect: Dialect, breathe: () => Promise<void>) {
  let fired = 0;
  for (let pass = 0; pass < 1_000; pass++) {
    const now = Date.now();
    const queued = await db.transaction().execute(async (trx) => {
      let due = trx
        .selectFrom('automations')
        .selectAll()
        .where('enabled', '=', 1)
        .where('trigger_kind', '=', 'schedule')
        .where('next_fire_at', '<=', now)
        .orderBy('next_fire_at')
        .limit(BATCH);
      if (dialect === 'postgres') due = due.forUpdate().skipLocked();
      const rows = await due.execute();
      const firing: {
        automation: AutomationRow;
        scheduledFor: number;
        next: number | null;
        zone: string;
        trigger: ScheduleTrigger;
      }[] = [];
      // Many automations share a schedule ("weekdays at 9:00 in Berlin"): each is worked out once.
      const worked = new Map<string, { next: number | null; zone: string; trigger: ScheduleTrigger }>();
      for (const automation of rows) {
        let when = worked.get(automation.trigger_json);
        if (!when) {
          const trigger = JSON.parse(automation.trigger_json) as ScheduleTrigger;
          when = {
            next: nextFireAt(trigger, new Date(now))?.getTime() ?? null,
            zone: trigger.kind === 'schedule' ? trigger.timezone : 'UTC',
            trigger,
          };
          worked.set(automation.trigger_json, when);
        }
        firing.push({ automation, scheduledFor: automation.next_fire_at as number, ...when });
      }
      const moved: typeof firing = [];
      if (dialect === 'postgres' && firing.length > 0) {
        // The rows are locked by this transaction: one statement moves them all.
        const values = sql.join(firing.map((f) => sql`(${f.automation.id}, ${f.next}::bigint)`));
        await sql`update automations set next_fire_at = v.next, last_fired_at = ${now}
                  from (values ${values}) as v(id, next) where automations.id = v.id`.execute(trx);
        moved.push(...firing);
      } else {
        for (const f of firing) {
          const done = await trx
            .updateTable('automations')
            .set({ next_fire_at: f.next, last_fired_at: now })
            .where('id', '=', f.automation.id)
            .where('enabled', '=', 1)
            .where('next_fire_at', '=', f.scheduledFor)
            .executeTakeFirst();
          if (Number(done.numUpdatedRows) === 1) moved.push(f);
        }
      }
      await queueRuns(
        trx,
        moved.map((f) => ({
          automation: f.automation,
          versionId: f.automation.live_version_id,
          cause: 'schedule' as const,
          dryRun: false,
          payload: {
            scheduled_for: new Date(f.scheduledFor).toISOString(),
            fired_at: new Date(now).toISOString(),
            timezone: f.zone,
          },
        })),
      );
      for (const f of moved) schedulerLagSeconds.observe(Math.max(0, now - f.scheduledFor) / 1000);
      // Instants that passed while nothing fired them ran once, above: the session hears which.
      const missed = new Map<string, string | undefined>();
      for (const f of moved) {
        const key = `${f.scheduledFor}|${f.automation.trigger_json}`;
        if (!missed.has(key)) missed.set(key, missedText(f.trigger, f.zone, f.scheduledFor, now));
        const text = missed.get(key);
        if (text) await postToSession(trx, f.automation.session_id, null, text);
      }
      return { moved: moved.length, seen: rows.length };
    });
    fired += queued.moved;
    if (queued.seen < BATCH) break;
    await breathe();
  }
  return fired;
}

/** When the next schedule is due (ms since the epoch), or null when none is set. */
export async function nextScheduleAt(db: Kysely<Database>): Promise<number | null> {
  const row = await db
    .selectFrom('automations')
    .select('next_fire_at')
    .where('enabled', '=', 1)
    .where('next_fire_at', 'is not', null)
    .where('trigger_kind', '=', 'schedule')
    .orderBy('next_fire_at')
    .limit(1)
    .executeTakeFirst();
  return row?.next_fire_at ?? null;
}
