import type { Catalogue } from '../capabilities/catalogue.ts';
import { type ScheduleFields, type Trigger, checkTrigger, nextFireAt, triggerText } from './triggers.ts';

export interface Firing {
  /** The instant, ISO-8601 in UTC. */
  at: string;
  /** The wall-clock time in the trigger's zone, `YYYY-MM-DD HH:MM`, and that zone's UTC offset then. */
  local: string;
  offset: string;
}

export interface SchedulePreview {
  /** When it runs, in words, with its zone. */
  text: string;
  timezone?: string;
  /** The next firings (five for a schedule; none for event triggers). */
  next: Firing[];
  /** How days on which the clocks change behave, in words. */
  dst: string;
  /** The zone's next clock change within a year, if any. */
  next_clock_change?: { at: string; from: string; to: string };
}

function offsetAt(zone: string, at: Date): string {
  const part = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' })
    .formatToParts(at)
    .find((p) => p.type === 'timeZoneName')?.value;
  const offset = (part ?? 'GMT').replace('GMT', 'UTC');
  return offset === 'UTC' ? 'UTC+00:00' : offset;
}

function localTime(zone: string, at: Date): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      hourCycle: 'h23',
    })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}`;
}

/** The first instant within a year after `from` at which the zone's offset changes. */
function nextClockChange(zone: string, from: Date): SchedulePreview['next_clock_change'] {
  const start = offsetAt(zone, from);
  const day = 86_400_000;
  const end = from.getTime() + 366 * day;
  let low = from.getTime();
  let high: number | undefined;
  for (let t = low + day; t <= end; t += day) {
    if (offsetAt(zone, new Date(t)) !== start) {
      high = t;
      break;
    }
    low = t;
  }
  if (high === undefined) return undefined;
  // To the millisecond: the change is the first instant with the new offset.
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if (offsetAt(zone, new Date(mid)) === start) low = mid;
    else high = mid;
  }
  return { at: new Date(high).toISOString(), from: start, to: offsetAt(zone, new Date(high)) };
}

/**
 * A trigger in words with the next five firings in its zone and what the days the clocks change
 * do to it (the same rules `nextFireAt` follows). Pure apart from the clock passed in.
 */
export function schedulePreview(trigger: Trigger, now: Date, count = 5): SchedulePreview {
  const text = triggerText(trigger);
  if (trigger.kind !== 'schedule') {
    return {
      text,
      next: [],
      dst: 'Event triggers run when the event arrives; clock changes do not affect them.',
    };
  }
  const zone = trigger.timezone;
  const next: Firing[] = [];
  let after = now;
  for (let i = 0; i < count; i++) {
    const at = nextFireAt(trigger, after);
    if (!at) break;
    next.push({ at: at.toISOString(), local: localTime(zone, at), offset: offsetAt(zone, at) });
    after = at;
  }
  const change = nextClockChange(zone, now);
  const frequency = (trigger as ScheduleFields).frequency;
  const dst = !change
    ? `${zone} does not change its clocks in the coming year, so it runs at the same local time every time.`
    : frequency === 'hourly'
      ? 'It runs every 60 minutes of real time whatever the clocks do: on the day they go forward an hour is skipped on the clock, and on the day they go back one hour’s run happens twice by the clock.'
      : 'On the day the clocks go forward, a time that does not exist runs at the first valid minute after the gap; on the day they go back, a time that happens twice runs once, at its first occurrence.';
  return { text, timezone: zone, next, dst, ...(change ? { next_clock_change: change } : {}) };
}

/**
 * What a trigger not yet published would mean: checked as publish checks it (so a bad one is
 * refused with the same sentence publish would give), then previewed as the published one is.
 * `catalogue` is the person's: event triggers name providers connected for them.
 */
export function previewTrigger(raw: unknown, catalogue: Catalogue, now: Date): SchedulePreview {
  const { trigger } = checkTrigger(raw, catalogue);
  return schedulePreview(trigger, now);
}
