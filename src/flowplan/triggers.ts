import { Cron } from 'croner';
import { invalid } from '../errors.ts';
import type { Catalogue } from '../capabilities/catalogue.ts';
import { describeIssues, isObject, withArticle } from './issues.ts';
import { z } from 'zod';

// ── trigger forms ───────────────────────────────────────────────────────────────────────────────

export const FREQUENCIES = ['hourly', 'daily', 'weekdays', 'weekly'] as const;

const weekday = z.number().int().min(1).max(7).describe('ISO weekday: 1 = Monday … 7 = Sunday.');
const hour = z.number().int().min(0).max(23);
const minute = z.number().int().min(0).max(59);
const timezone = z.string().min(1).describe('An IANA time zone such as Europe/Berlin or UTC.');

/** Each frequency takes exactly its fields, so the advertised shape refuses what publish refuses. */
export const scheduleTrigger = z
  .discriminatedUnion('frequency', [
    z.strictObject({ kind: z.literal('schedule'), frequency: z.literal('hourly'), minute, timezone }),
    z.strictObject({ kind: z.literal('schedule'), frequency: z.literal('daily'), hour, minute, timezone }),
    z.strictObject({ kind: z.literal('schedule'), frequency: z.literal('weekdays'), hour, minute, timezone }),
    z.strictObject({
      kind: z.literal('schedule'),
      frequency: z.literal('weekly'),
      weekday,
      hour,
      minute,
      timezone,
    }),
  ])
  .describe(
    'Fires at the given local time in timezone. Payload: {scheduled_for, fired_at, timezone}. A time in a DST gap fires at the first valid instant after it; in an overlap, once, at the first occurrence; hourly fires every 60 minutes of real time.',
  );

export const connectorEventTrigger = z
  .strictObject({
    kind: z.literal('connector_event'),
    provider: z
      .string()
      .min(1)
      .describe('A connected provider, or "workspace" for events of this workspace.'),
    event: z.string().min(1).describe('An event the provider emits (see the namespaces and connectors).'),
  })
  .describe('Payload: {provider, event, data}.');

export const githubEventTrigger = z
  .strictObject({
    kind: z.literal('github_event'),
    event: z.string().min(1).describe('A GitHub webhook event such as pull_request or issues.'),
    actions: z.array(z.string().min(1)).optional().describe('Actions to match (all when empty or absent).'),
    repo: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'must be owner/name')
      .describe('owner/name'),
  })
  .describe('Payload: {event, action, repo, payload}.');

export const trigger = z
  .discriminatedUnion('kind', [scheduleTrigger, connectorEventTrigger, githubEventTrigger])
  .meta({ id: 'Trigger' });
export type Trigger = z.infer<typeof trigger>;
/** A schedule with every field optional, for code that reads them whatever the frequency. */
export type ScheduleFields = {
  kind: 'schedule';
  frequency: (typeof FREQUENCIES)[number];
  weekday?: number;
  hour?: number;
  minute?: number;
  timezone: string;
};

export const WORKSPACE_EVENTS = [
  'document.created',
  'document.edited',
  'comment.created',
  'comment.mentioned',
  'page.written',
] as const;

type Schedule = ScheduleFields;

const FIELDS: Record<Schedule['frequency'], readonly ('weekday' | 'hour' | 'minute')[]> = {
  hourly: ['minute'],
  daily: ['hour', 'minute'],
  weekdays: ['hour', 'minute'],
  weekly: ['weekday', 'hour', 'minute'],
};

/** The zone's canonical name, or undefined when it is not an IANA zone this runtime knows. */
export function canonicalZone(zone: string): string | undefined {
  // Offsets such as +05:30 are not zones: they know nothing of daylight saving time.
  if (!/^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/.test(zone)) return undefined;
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions().timeZone;
  } catch {
    return undefined;
  }
  // Keep the name as given (Asia/Kolkata stays Asia/Kolkata); only its letter case is corrected.
  if (resolved.toLowerCase() === zone.toLowerCase()) return resolved;
  const listed = Intl.supportedValuesOf('timeZone').find((z) => z.toLowerCase() === zone.toLowerCase());
  return listed ?? zone;
}

export interface TriggerCheck {
  trigger: Trigger;
  /** A problem that makes the automation's scope impossible (a personal connection in a workspace automation). */
  personalProvider?: string | undefined;
}

/**
 * Checks a trigger as publish receives it; throws one line naming every problem. Schedules get
 * the fields of their frequency and a known zone; event triggers a provider this person may use.
 */
export function checkTrigger(raw: unknown, catalogue: Catalogue): TriggerCheck {
  if (raw === undefined)
    throw invalid('trigger is required for publish (schedule, connector_event or github_event)');
  // The fields a schedule's frequency takes are checked first, to name what to add or remove.
  if (
    isObject(raw) &&
    raw.kind === 'schedule' &&
    FREQUENCIES.includes(raw.frequency as Schedule['frequency'])
  ) {
    const frequency = raw.frequency as Schedule['frequency'];
    const wanted = FIELDS[frequency];
    const problems: string[] = [];
    for (const field of ['weekday', 'hour', 'minute'] as const) {
      const given = raw[field] !== undefined;
      if (given && !wanted.includes(field)) {
        problems.push(
          `trigger.${field} does not apply to ${withArticle(frequency)} schedule; remove it (${frequency} takes ${wanted.join(', ')})`,
        );
      } else if (!given && wanted.includes(field)) {
        problems.push(`trigger.${field} is required for ${withArticle(frequency)} schedule`);
      }
    }
    if (problems.length) {
      if (typeof raw.timezone !== 'string' || !canonicalZone(raw.timezone)) {
        problems.push(
          `trigger.timezone ${typeof raw.timezone === 'string' ? `"${raw.timezone}" is not an IANA time zone` : 'is required'}; use a name such as Europe/Berlin or UTC`,
        );
      }
      throw invalid(problems.join('; '));
    }
  }
  const parsed = trigger.safeParse(raw);
  if (!parsed.success) {
    throw invalid(
      describeIssues(parsed.error.issues, ['trigger'])
        .map((p) => p.message)
        .join('; '),
    );
  }
  const t = parsed.data;
  const problems: string[] = [];
  let personalProvider: string | undefined;
  if (t.kind === 'schedule') {
    const zone = canonicalZone(t.timezone);
    if (!zone)
      problems.push(
        `trigger.timezone "${t.timezone}" is not an IANA time zone; use a name such as Europe/Berlin or UTC`,
      );
    else t.timezone = zone;
  } else if (t.kind === 'connector_event') {
    const provider = catalogue.eventProviders().get(t.provider);
    if (!provider) {
      const known = [...catalogue.eventProviders().keys()].join(', ');
      problems.push(
        `trigger.provider "${t.provider}" is not a provider of this workspace; use one of ${known}`,
      );
    } else if (!provider.connected) {
      problems.push(
        `trigger.provider "${t.provider}" is not connected for you in this workspace; connect it first`,
      );
    } else {
      if (provider.events.length > 0 && !provider.events.includes(t.event)) {
        problems.push(
          `trigger.event "${t.event}" is not an event of ${t.provider}; use one of ${provider.events.join(', ')}`,
        );
      }
      if (provider.personalOnly) personalProvider = t.provider;
    }
  } else {
    const github = catalogue.eventProviders().get('github');
    if (!github?.connected)
      problems.push('trigger needs the github connector, which is not connected in this workspace');
    else if (github.personalOnly) personalProvider = 'github';
    if (!/^[a-z_]+$/.test(t.event))
      problems.push(`trigger.event "${t.event}" must be a GitHub event name such as pull_request`);
    if (t.actions) t.actions = [...new Set(t.actions)];
  }
  if (problems.length) throw invalid(problems.join('; '));
  return { trigger: t, personalProvider };
}

function cronPattern(t: ScheduleFields): string {
  const minute = t.minute ?? 0;
  const hour = t.hour ?? 0;
  switch (t.frequency) {
    case 'hourly':
      return `${minute} * * * *`;
    case 'daily':
      return `${minute} ${hour} * * *`;
    case 'weekdays':
      return `${minute} ${hour} * * 1-5`;
    case 'weekly':
      // ISO weekday 7 (Sunday) is cron's 0.
      return `${minute} ${hour} * * ${(t.weekday ?? 1) % 7}`;
  }
}

const crons = new Map<string, Cron>();

/**
 * The first instant after `after` at which a schedule fires, in its zone. A local time that a
 * DST change skips fires at the first instant after the gap; one it repeats fires once, at the
 * first occurrence; hourly schedules fire every 60 minutes of real time.
 */
export function nextFireAt(t: Trigger, after: Date): Date | null {
  if (t.kind !== 'schedule') return null;
  const pattern = cronPattern(t as ScheduleFields);
  const key = `${pattern}|${t.timezone}`;
  let cron = crons.get(key);
  if (!cron) {
    if (crons.size > 1000) crons.clear();
    cron = new Cron(pattern, { timezone: t.timezone, paused: true });
    crons.set(key, cron);
  }
  return cron.nextRun(after);
}

/** A short line saying when an automation runs. */
export function triggerText(trigger: Trigger): string {
  const t = trigger as ScheduleFields | Exclude<Trigger, { kind: 'schedule' }>;
  if (t.kind === 'schedule') {
    const time = `${String(t.hour ?? 0).padStart(2, '0')}:${String(t.minute ?? 0).padStart(2, '0')}`;
    const day = ['', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'][
      t.weekday ?? 1
    ];
    const when =
      t.frequency === 'hourly'
        ? `hourly at minute ${t.minute ?? 0}`
        : t.frequency === 'daily'
          ? `daily at ${time}`
          : t.frequency === 'weekdays'
            ? `on weekdays at ${time}`
            : `every ${day} at ${time}`;
    return `${when} (${t.timezone})`;
  }
  if (t.kind === 'connector_event') return `on ${t.provider} ${t.event}`;
  const actions = t.actions?.length ? ` (${t.actions.join(', ')})` : '';
  return `on GitHub ${t.event}${actions} in ${t.repo}`;
}
