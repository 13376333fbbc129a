import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors.ts';
import {
  BUILTIN_PLUGINS,
  Catalogue,
  CONNECTOR_PLUGINS,
  type ConnectorEntry,
  type NamespaceState,
} from '../capabilities/catalogue.ts';
import { type Trigger, canonicalZone, checkTrigger, nextFireAt } from './triggers.ts';

// ── helpers ─────────────────────────────────────────────────────────────────────────────────────

type Schedule = Extract<Trigger, { kind: 'schedule' }>;

const HOUR = 3_600_000;

function schedule(
  frequency: Schedule['frequency'],
  timezone: string,
  fields: { weekday?: number; hour?: number; minute?: number },
): Schedule {
  return { kind: 'schedule', frequency, timezone, ...fields } as Schedule;
}

/** The next fire instant after `after`, as an ISO string. */
function next(t: Trigger, after: string): string | null {
  return nextFireAt(t, new Date(after))?.toISOString() ?? null;
}

/** `count` consecutive fire instants, each computed from the one before. */
function sequence(t: Trigger, after: string, count: number): string[] {
  const out: string[] = [];
  let from = new Date(after);
  for (let i = 0; i < count; i++) {
    const at = nextFireAt(t, from);
    assert.ok(at, `fire ${i} after ${from.toISOString()} exists`);
    out.push(at.toISOString());
    from = at;
  }
  return out;
}

/** Wall-clock time of an instant in a zone: "Sun 2026-03-29 03:00". */
function local(iso: string, timeZone: string): string {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    weekday: 'short',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  }).formatToParts(new Date(iso));
  const get = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${get('weekday')} ${get('year')}-${get('month')}-${get('day')} ${get('hour')}:${get('minute')}`;
}

function gaps(instants: string[]): number[] {
  return instants.slice(1).map((iso, i) => Date.parse(iso) - Date.parse(instants[i] ?? ''));
}

interface Connection {
  provider: string;
  personal?: boolean;
  /** False for another person's personal connection or a broken one. */
  connected?: boolean;
}

/** A catalogue as one person sees it, built from the workspace's connections. */
function catalogueWith(connections: Connection[] = []): Catalogue {
  const connectors: ConnectorEntry[] = connections.map((c) => ({
    provider: c.provider,
    name: c.provider,
    personal: c.personal ?? false,
    namespace:
      CONNECTOR_PLUGINS.find((p) => p.providers.includes(c.provider) || p.namespace === c.provider)
        ?.namespace ?? c.provider,
    connected: c.connected ?? true,
  }));
  const namespaces = new Map<string, NamespaceState>();
  for (const plugin of BUILTIN_PLUGINS) {
    namespaces.set(plugin.namespace, { plugin, connected: true, personalOnly: false, providers: [] });
  }
  for (const plugin of CONNECTOR_PLUGINS) {
    const mine = connectors.filter((c) => c.namespace === plugin.namespace);
    const usable = mine.filter((c) => c.connected);
    namespaces.set(plugin.namespace, {
      plugin,
      connected: usable.length > 0,
      personalOnly: usable.length > 0 && usable.every((c) => c.personal),
      providers: [...new Set(mine.map((c) => c.provider))],
    });
  }
  return new Catalogue(namespaces, connectors);
}

const NOTHING_CONNECTED = catalogueWith();
const SHARED_GITHUB = catalogueWith([{ provider: 'github' }]);

/** Asserts checkTrigger refuses `raw` with one invalid_argument line matching every pattern. */
function refuses(raw: unknown, catalogue: Catalogue, ...patterns: RegExp[]): string {
  let message = '';
  assert.throws(
    () => checkTrigger(raw, catalogue),
    (err: unknown) => {
      assert.ok(err instanceof DomainError, `a DomainError, got ${String(err)}`);
      assert.equal(err.code, 'invalid_argument');
      assert.doesNotMatch(err.message, /\n/, 'one line');
      for (const pattern of patterns) assert.match(err.message, pattern);
      message = err.message;
      return true;
    },
  );
  return message;
}

// ── nextFireAt: every frequency in several zones ───────────────────────────────────────────────

describe('nextFireAt: daily', () => {
  it('fires at the local time in UTC, strictly after the given instant', () => {
    const t = schedule('daily', 'UTC', { hour: 9, minute: 0 });
    assert.equal(next(t, '2026-01-15T08:59:00.000Z'), '2026-01-15T09:00:00.000Z');
    assert.equal(next(t, '2026-01-15T09:00:00.000Z'), '2026-01-16T09:00:00.000Z');
    assert.equal(next(t, '2026-01-15T09:00:00.001Z'), '2026-01-16T09:00:00.000Z');
  });

  it('fires at 09:00 Berlin time in winter (CET) and summer (CEST)', () => {
    const t = schedule('daily', 'Europe/Berlin', { hour: 9, minute: 0 });
    assert.equal(next(t, '2026-01-15T07:00:00.000Z'), '2026-01-15T08:00:00.000Z');
    assert.equal(next(t, '2026-07-15T06:00:00.000Z'), '2026-07-15T07:00:00.000Z');
    // From 10:00 local, after the time: the next day.
    assert.equal(next(t, '2026-01-15T09:00:00.000Z'), '2026-01-16T08:00:00.000Z');
    assert.deepEqual(sequence(t, '2026-01-15T09:00:00.000Z', 3), [
      '2026-01-16T08:00:00.000Z',
      '2026-01-17T08:00:00.000Z',
      '2026-01-18T08:00:00.000Z',
    ]);
  });

  it('fires at 09:00 New York time in winter (EST) and summer (EDT)', () => {
    const t = schedule('daily', 'America/New_York', { hour: 9, minute: 0 });
    assert.equal(next(t, '2026-01-15T12:00:00.000Z'), '2026-01-15T14:00:00.000Z');
    assert.equal(next(t, '2026-07-15T12:00:00.000Z'), '2026-07-15T13:00:00.000Z');
  });

  it('fires at 09:00 Kolkata time (+05:30)', () => {
    const t = schedule('daily', 'Asia/Kolkata', { hour: 9, minute: 0 });
    assert.deepEqual(sequence(t, '2026-01-01T00:00:00.000Z', 2), [
      '2026-01-01T03:30:00.000Z',
      '2026-01-02T03:30:00.000Z',
    ]);
    const evening = schedule('daily', 'Asia/Kolkata', { hour: 23, minute: 45 });
    assert.equal(next(evening, '2026-01-01T00:00:00.000Z'), '2026-01-01T18:15:00.000Z');
  });

  it('fires at 09:00 Sydney time, a UTC day earlier, in summer (AEDT) and winter (AEST)', () => {
    const t = schedule('daily', 'Australia/Sydney', { hour: 9, minute: 0 });
    // 08:00 local on Jan 16 is Jan 15 in UTC.
    assert.equal(next(t, '2026-01-15T21:00:00.000Z'), '2026-01-15T22:00:00.000Z');
    assert.equal(local('2026-01-15T22:00:00.000Z', 'Australia/Sydney'), 'Fri 2026-01-16 09:00');
    assert.equal(next(t, '2026-07-15T12:00:00.000Z'), '2026-07-15T23:00:00.000Z');
    assert.equal(local('2026-07-15T23:00:00.000Z', 'Australia/Sydney'), 'Thu 2026-07-16 09:00');
  });
});

describe('nextFireAt: weekdays', () => {
  it('skips Saturday and Sunday: from a Friday after the time it fires on Monday (Berlin)', () => {
    const t = schedule('weekdays', 'Europe/Berlin', { hour: 9, minute: 0 });
    // Friday 2026-01-16 10:00 CET.
    const monday = next(t, '2026-01-16T09:00:00.000Z');
    assert.equal(monday, '2026-01-19T08:00:00.000Z');
    assert.equal(local(monday ?? '', 'Europe/Berlin'), 'Mon 2026-01-19 09:00');
    // Friday before the time: that Friday.
    assert.equal(next(t, '2026-01-16T07:00:00.000Z'), '2026-01-16T08:00:00.000Z');
    // From Saturday and from Sunday: Monday.
    assert.equal(next(t, '2026-01-17T12:00:00.000Z'), '2026-01-19T08:00:00.000Z');
    assert.equal(next(t, '2026-01-18T12:00:00.000Z'), '2026-01-19T08:00:00.000Z');
  });

  it('fires Monday to Friday only, then Monday again (UTC)', () => {
    const t = schedule('weekdays', 'UTC', { hour: 6, minute: 30 });
    const fires = sequence(t, '2026-01-11T12:00:00.000Z', 6);
    assert.deepEqual(fires, [
      '2026-01-12T06:30:00.000Z',
      '2026-01-13T06:30:00.000Z',
      '2026-01-14T06:30:00.000Z',
      '2026-01-15T06:30:00.000Z',
      '2026-01-16T06:30:00.000Z',
      '2026-01-19T06:30:00.000Z',
    ]);
  });

  it('judges the weekday in the zone, not in UTC (Sydney: local Monday is Sunday in UTC)', () => {
    const t = schedule('weekdays', 'Australia/Sydney', { hour: 9, minute: 0 });
    // Friday 2026-01-16 10:00 AEDT.
    const monday = next(t, '2026-01-15T23:00:00.000Z');
    assert.equal(monday, '2026-01-18T22:00:00.000Z');
    assert.equal(local(monday ?? '', 'Australia/Sydney'), 'Mon 2026-01-19 09:00');
  });

  it('judges the weekday in the zone, not in UTC (New York: local Friday evening is Saturday in UTC)', () => {
    const t = schedule('weekdays', 'America/New_York', { hour: 21, minute: 0 });
    // Friday 2026-01-16 20:00 EST = Saturday 01:00 UTC.
    const friday = next(t, '2026-01-17T01:00:00.000Z');
    assert.equal(friday, '2026-01-17T02:00:00.000Z');
    assert.equal(local(friday ?? '', 'America/New_York'), 'Fri 2026-01-16 21:00');
    assert.equal(next(t, friday ?? ''), '2026-01-20T02:00:00.000Z');
  });

  it('fires at 09:00 Kolkata time on weekdays', () => {
    const t = schedule('weekdays', 'Asia/Kolkata', { hour: 9, minute: 0 });
    const fires = sequence(t, '2026-01-16T04:00:00.000Z', 2);
    assert.deepEqual(fires, ['2026-01-19T03:30:00.000Z', '2026-01-20T03:30:00.000Z']);
    assert.equal(local(fires[0] ?? '', 'Asia/Kolkata'), 'Mon 2026-01-19 09:00');
  });
});

describe('nextFireAt: weekly', () => {
  it('weekday 7 is Sunday and 1 is Monday (Berlin)', () => {
    const sunday = schedule('weekly', 'Europe/Berlin', { weekday: 7, hour: 10, minute: 0 });
    const monday = schedule('weekly', 'Europe/Berlin', { weekday: 1, hour: 10, minute: 0 });
    // From Wednesday 2026-01-14.
    const s = next(sunday, '2026-01-14T12:00:00.000Z');
    const m = next(monday, '2026-01-14T12:00:00.000Z');
    assert.equal(s, '2026-01-18T09:00:00.000Z');
    assert.equal(local(s ?? '', 'Europe/Berlin'), 'Sun 2026-01-18 10:00');
    assert.equal(m, '2026-01-19T09:00:00.000Z');
    assert.equal(local(m ?? '', 'Europe/Berlin'), 'Mon 2026-01-19 10:00');
    assert.deepEqual(sequence(sunday, s ?? '', 2), ['2026-01-25T09:00:00.000Z', '2026-02-01T09:00:00.000Z']);
  });

  it('maps every ISO weekday 1–7 to its day (UTC)', () => {
    const names = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
    for (let weekday = 1; weekday <= 7; weekday++) {
      const t = schedule('weekly', 'UTC', { weekday, hour: 9, minute: 0 });
      // From Sunday 2026-01-11 noon: Monday the 12th … Saturday the 17th, then Sunday the 18th.
      const at = next(t, '2026-01-11T12:00:00.000Z');
      const day = String(11 + weekday).padStart(2, '0');
      assert.equal(at, `2026-01-${day}T09:00:00.000Z`, `weekday ${weekday}`);
      assert.equal(local(at ?? '', 'UTC').slice(0, 3), names[weekday - 1]);
    }
  });

  it('on its own day after the time, waits a full week (UTC)', () => {
    const t = schedule('weekly', 'UTC', { weekday: 7, hour: 9, minute: 0 });
    assert.equal(next(t, '2026-01-18T09:00:00.000Z'), '2026-01-25T09:00:00.000Z');
    assert.equal(next(t, '2026-01-18T08:59:59.999Z'), '2026-01-18T09:00:00.000Z');
  });

  it('fires on the local day in New York, Kolkata and Sydney', () => {
    const ny = next(
      schedule('weekly', 'America/New_York', { weekday: 1, hour: 0, minute: 30 }),
      '2026-01-14T12:00:00.000Z',
    );
    assert.equal(ny, '2026-01-19T05:30:00.000Z');
    const kolkata = next(
      schedule('weekly', 'Asia/Kolkata', { weekday: 5, hour: 23, minute: 45 }),
      '2026-01-14T12:00:00.000Z',
    );
    assert.equal(kolkata, '2026-01-16T18:15:00.000Z');
    assert.equal(local(kolkata ?? '', 'Asia/Kolkata'), 'Fri 2026-01-16 23:45');
    const sydney = next(
      schedule('weekly', 'Australia/Sydney', { weekday: 7, hour: 8, minute: 0 }),
      '2026-01-14T12:00:00.000Z',
    );
    // Sunday 08:00 AEDT is Saturday 21:00 UTC.
    assert.equal(sydney, '2026-01-17T21:00:00.000Z');
    assert.equal(local(sydney ?? '', 'Australia/Sydney'), 'Sun 2026-01-18 08:00');
  });
});

describe('nextFireAt: hourly', () => {
  it('fires at minute 15 of every hour (UTC, Berlin, New York, Sydney)', () => {
    for (const zone of ['UTC', 'Europe/Berlin', 'America/New_York', 'Australia/Sydney']) {
      const t = schedule('hourly', zone, { minute: 15 });
      assert.equal(next(t, '2026-01-15T10:00:00.000Z'), '2026-01-15T10:15:00.000Z', zone);
      assert.equal(next(t, '2026-01-15T10:15:00.000Z'), '2026-01-15T11:15:00.000Z', zone);
      assert.equal(next(t, '2026-01-15T10:16:00.000Z'), '2026-01-15T11:15:00.000Z', zone);
    }
  });

  it('fires at minute 15 local time in Kolkata, which is minute 45 in UTC', () => {
    const t = schedule('hourly', 'Asia/Kolkata', { minute: 15 });
    assert.deepEqual(sequence(t, '2026-01-15T10:00:00.000Z', 3), [
      '2026-01-15T10:45:00.000Z',
      '2026-01-15T11:45:00.000Z',
      '2026-01-15T12:45:00.000Z',
    ]);
    assert.equal(local('2026-01-15T10:45:00.000Z', 'Asia/Kolkata'), 'Thu 2026-01-15 16:15');
  });

  it('fires at minute 0', () => {
    const t = schedule('hourly', 'Europe/Berlin', { minute: 0 });
    assert.equal(next(t, '2026-01-15T10:00:00.000Z'), '2026-01-15T11:00:00.000Z');
    assert.equal(next(t, '2026-01-15T09:59:59.999Z'), '2026-01-15T10:00:00.000Z');
  });
});

// ── DST ─────────────────────────────────────────────────────────────────────────────────────────

describe('nextFireAt: DST gap (a daily, weekdays or weekly time the clocks skip)', () => {
  it('Berlin 2026-03-29 02:00→03:00: daily 02:30 fires once at 03:00 CEST, then 02:30 again', () => {
    const t = schedule('daily', 'Europe/Berlin', { hour: 2, minute: 30 });
    const fires = sequence(t, '2026-03-27T12:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-03-28T01:30:00.000Z', // 02:30 CET
      '2026-03-29T01:00:00.000Z', // the transition instant, 03:00 CEST
      '2026-03-30T00:30:00.000Z', // 02:30 CEST
    ]);
    assert.deepEqual(
      fires.map((f) => local(f, 'Europe/Berlin')),
      ['Sat 2026-03-28 02:30', 'Sun 2026-03-29 03:00', 'Mon 2026-03-30 02:30'],
    );
  });

  it('Berlin gap: from just before the transition it is the transition; from it, the next day', () => {
    const t = schedule('daily', 'Europe/Berlin', { hour: 2, minute: 30 });
    assert.equal(next(t, '2026-03-29T00:30:00.000Z'), '2026-03-29T01:00:00.000Z');
    assert.equal(next(t, '2026-03-29T00:59:59.999Z'), '2026-03-29T01:00:00.000Z');
    // Fired once: not again at 03:30 CEST (01:30 UTC) or any later time that day.
    assert.equal(next(t, '2026-03-29T01:00:00.000Z'), '2026-03-30T00:30:00.000Z');
  });

  it('New York 2026-03-08 02:00→03:00: daily 02:30 fires once at 03:00 EDT, then 02:30 again', () => {
    const t = schedule('daily', 'America/New_York', { hour: 2, minute: 30 });
    const fires = sequence(t, '2026-03-06T12:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:00:00.000Z', // the transition instant, 03:00 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
    assert.deepEqual(
      fires.map((f) => local(f, 'America/New_York')),
      ['Sat 2026-03-07 02:30', 'Sun 2026-03-08 03:00', 'Mon 2026-03-09 02:30'],
    );
    assert.equal(next(t, '2026-03-08T07:00:00.000Z'), '2026-03-09T06:30:00.000Z');
  });

  it('New York gap: 02:00 and 02:59 also fire at the transition instant', () => {
    for (const minute of [0, 59]) {
      const t = schedule('daily', 'America/New_York', { hour: 2, minute });
      const fires = sequence(t, '2026-03-07T12:00:00.000Z', 2);
      assert.equal(fires[0], '2026-03-08T07:00:00.000Z', `02:${minute}`);
      assert.equal(
        local(fires[1] ?? '', 'America/New_York'),
        `Mon 2026-03-09 02:${String(minute).padStart(2, '0')}`,
      );
    }
  });

  it('Sydney 2026-10-04 02:00→03:00 (southern spring): daily 02:30 fires once at 03:00 AEDT', () => {
    const t = schedule('daily', 'Australia/Sydney', { hour: 2, minute: 30 });
    const fires = sequence(t, '2026-10-02T12:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-10-02T16:30:00.000Z', // 02:30 AEST, Oct 3
      '2026-10-03T16:00:00.000Z', // the transition instant, 03:00 AEDT, Oct 4
      '2026-10-04T15:30:00.000Z', // 02:30 AEDT, Oct 5
    ]);
    assert.equal(local(fires[1] ?? '', 'Australia/Sydney'), 'Sun 2026-10-04 03:00');
  });

  it('weekly Sunday 02:30 Berlin falls in the gap: fires at 03:00 CEST, then 02:30 next Sunday', () => {
    const t = schedule('weekly', 'Europe/Berlin', { weekday: 7, hour: 2, minute: 30 });
    const fires = sequence(t, '2026-03-25T12:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-03-29T01:00:00.000Z',
      '2026-04-05T00:30:00.000Z',
      '2026-04-12T00:30:00.000Z',
    ]);
    assert.deepEqual(
      fires.map((f) => local(f, 'Europe/Berlin')),
      ['Sun 2026-03-29 03:00', 'Sun 2026-04-05 02:30', 'Sun 2026-04-12 02:30'],
    );
  });

  it('weekly Sunday 02:15 New York falls in the gap: fires at 03:00 EDT, then 02:15 next Sunday', () => {
    const t = schedule('weekly', 'America/New_York', { weekday: 7, hour: 2, minute: 15 });
    assert.deepEqual(sequence(t, '2026-03-04T12:00:00.000Z', 2), [
      '2026-03-08T07:00:00.000Z',
      '2026-03-15T06:15:00.000Z',
    ]);
  });
});

describe('nextFireAt: DST overlap (a local time the clocks repeat)', () => {
  it('Berlin 2026-10-25 03:00→02:00: daily 02:30 fires once, at the first (CEST) occurrence', () => {
    const t = schedule('daily', 'Europe/Berlin', { hour: 2, minute: 30 });
    const fires = sequence(t, '2026-10-23T12:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-10-24T00:30:00.000Z', // 02:30 CEST
      '2026-10-25T00:30:00.000Z', // 02:30 CEST, the first of the two 02:30s
      '2026-10-26T01:30:00.000Z', // 02:30 CET; not 2026-10-25T01:30Z, the second 02:30
    ]);
  });

  it('Berlin overlap: from anywhere between the two 02:30s, the next fire is the next day', () => {
    const t = schedule('daily', 'Europe/Berlin', { hour: 2, minute: 30 });
    for (const after of [
      '2026-10-25T00:30:00.000Z',
      '2026-10-25T00:45:00.000Z',
      '2026-10-25T01:00:00.000Z',
      '2026-10-25T01:29:59.999Z',
    ]) {
      assert.equal(next(t, after), '2026-10-26T01:30:00.000Z', `after ${after}`);
    }
  });

  it('New York 2026-11-01 02:00→01:00: daily 01:30 fires once, at the first (EDT) occurrence', () => {
    const t = schedule('daily', 'America/New_York', { hour: 1, minute: 30 });
    const fires = sequence(t, '2026-10-30T12:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-10-31T05:30:00.000Z', // 01:30 EDT
      '2026-11-01T05:30:00.000Z', // 01:30 EDT, the first of the two 01:30s
      '2026-11-02T06:30:00.000Z', // 01:30 EST; not 2026-11-01T06:30Z, the second 01:30
    ]);
    for (const after of [
      '2026-11-01T05:45:00.000Z',
      '2026-11-01T06:00:00.000Z',
      '2026-11-01T06:29:59.999Z',
    ]) {
      assert.equal(next(t, after), '2026-11-02T06:30:00.000Z', `after ${after}`);
    }
  });

  it('Sydney 2026-04-05 03:00→02:00 (southern autumn): daily 02:30 fires once, at the AEDT occurrence', () => {
    const t = schedule('daily', 'Australia/Sydney', { hour: 2, minute: 30 });
    assert.deepEqual(sequence(t, '2026-04-03T12:00:00.000Z', 3), [
      '2026-04-03T15:30:00.000Z', // 02:30 AEDT, Apr 4
      '2026-04-04T15:30:00.000Z', // 02:30 AEDT, Apr 5, the first of the two
      '2026-04-05T16:30:00.000Z', // 02:30 AEST, Apr 6
    ]);
  });

  it('weekly Sunday 02:30 Berlin fires once on the overlap day', () => {
    const t = schedule('weekly', 'Europe/Berlin', { weekday: 7, hour: 2, minute: 30 });
    assert.deepEqual(sequence(t, '2026-10-20T12:00:00.000Z', 2), [
      '2026-10-25T00:30:00.000Z',
      '2026-11-01T01:30:00.000Z',
    ]);
  });
});

describe('nextFireAt: hourly across DST changes fires every 60 minutes of real time', () => {
  const cases: { zone: string; change: string; from: string }[] = [
    { zone: 'Europe/Berlin', change: 'gap 2026-03-29', from: '2026-03-28T20:00:00.000Z' },
    { zone: 'Europe/Berlin', change: 'overlap 2026-10-25', from: '2026-10-24T20:00:00.000Z' },
    { zone: 'America/New_York', change: 'gap 2026-03-08', from: '2026-03-08T02:00:00.000Z' },
    { zone: 'America/New_York', change: 'overlap 2026-11-01', from: '2026-11-01T01:00:00.000Z' },
    { zone: 'Australia/Sydney', change: 'overlap 2026-04-05', from: '2026-04-04T10:00:00.000Z' },
    { zone: 'Australia/Sydney', change: 'gap 2026-10-04', from: '2026-10-03T10:00:00.000Z' },
  ];
  for (const { zone, change, from } of cases) {
    for (const minute of [0, 15, 30, 59]) {
      it(`${zone} ${change}, minute ${minute}`, () => {
        const t = schedule('hourly', zone, { minute });
        const fires = sequence(t, from, 12);
        assert.deepEqual(
          gaps(fires),
          Array.from({ length: 11 }, () => HOUR),
          fires.join(' '),
        );
        // Every case starts on a whole hour, so the first fire is `minute` past it (or an hour on).
        const first = Date.parse(from) + (minute === 0 ? HOUR : minute * 60_000);
        assert.equal(fires[0], new Date(first).toISOString());
        for (const f of fires) assert.equal(local(f, zone).slice(-2), String(minute).padStart(2, '0'), f);
      });
    }
  }

  it('Berlin gap: exact instants through 02:00→03:00', () => {
    const t = schedule('hourly', 'Europe/Berlin', { minute: 15 });
    const fires = sequence(t, '2026-03-29T00:00:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-03-29T00:15:00.000Z',
      '2026-03-29T01:15:00.000Z',
      '2026-03-29T02:15:00.000Z',
    ]);
    assert.deepEqual(
      fires.map((f) => local(f, 'Europe/Berlin')),
      ['Sun 2026-03-29 01:15', 'Sun 2026-03-29 03:15', 'Sun 2026-03-29 04:15'],
    );
  });

  it('Berlin overlap: exact instants through 03:00→02:00 (02:15 fires twice, an hour apart)', () => {
    const t = schedule('hourly', 'Europe/Berlin', { minute: 15 });
    const fires = sequence(t, '2026-10-24T23:30:00.000Z', 3);
    assert.deepEqual(fires, [
      '2026-10-25T00:15:00.000Z',
      '2026-10-25T01:15:00.000Z',
      '2026-10-25T02:15:00.000Z',
    ]);
    assert.deepEqual(
      fires.map((f) => local(f, 'Europe/Berlin')),
      ['Sun 2026-10-25 02:15', 'Sun 2026-10-25 02:15', 'Sun 2026-10-25 03:15'],
    );
  });

  it('New York gap and overlap: 24 fires in the 24 real hours around each change', () => {
    const t = schedule('hourly', 'America/New_York', { minute: 15 });
    for (const from of ['2026-03-08T00:00:00.000Z', '2026-11-01T00:00:00.000Z']) {
      const fires = sequence(t, from, 25);
      const within = fires.filter((f) => Date.parse(f) < Date.parse(from) + 24 * HOUR);
      assert.equal(within.length, 24, from);
    }
  });
});

describe('nextFireAt: event triggers', () => {
  it('returns null for connector_event and github_event triggers', () => {
    const after = new Date('2026-01-15T10:00:00.000Z');
    assert.equal(
      nextFireAt({ kind: 'connector_event', provider: 'workspace', event: 'document.created' }, after),
      null,
    );
    assert.equal(nextFireAt({ kind: 'github_event', event: 'pull_request', repo: 'acme/api' }, after), null);
    assert.equal(
      nextFireAt({ kind: 'github_event', event: 'issues', actions: ['opened'], repo: 'acme/api' }, after),
      null,
    );
  });
});

// ── checkTrigger ────────────────────────────────────────────────────────────────────────────────

describe('checkTrigger: valid triggers', () => {
  it('accepts a schedule of every frequency', () => {
    const valid: Schedule[] = [
      schedule('hourly', 'UTC', { minute: 0 }),
      schedule('daily', 'Europe/Berlin', { hour: 0, minute: 59 }),
      schedule('weekdays', 'America/New_York', { hour: 23, minute: 0 }),
      schedule('weekly', 'Australia/Sydney', { weekday: 7, hour: 9, minute: 30 }),
    ];
    for (const t of valid) {
      const result = checkTrigger(t, NOTHING_CONNECTED);
      assert.deepEqual(result.trigger, t);
      assert.equal(result.personalProvider, undefined);
    }
  });

  it('accepts a schedule in a +05:30 zone (Asia/Kolkata) that fires at its local time', () => {
    const { trigger } = checkTrigger(
      schedule('weekly', 'Asia/Kolkata', { weekday: 1, hour: 9, minute: 30 }),
      NOTHING_CONNECTED,
    );
    assert.equal(trigger.kind, 'schedule');
    assert.equal(next(trigger, '2026-01-14T12:00:00.000Z'), '2026-01-19T04:00:00.000Z');
  });

  it('accepts a connector_event of a connected provider', () => {
    const catalogue = catalogueWith([{ provider: 'slack' }, { provider: 'gmail' }]);
    assert.deepEqual(
      checkTrigger({ kind: 'connector_event', provider: 'slack', event: 'message' }, catalogue),
      {
        trigger: { kind: 'connector_event', provider: 'slack', event: 'message' },
        personalProvider: undefined,
      },
    );
    assert.deepEqual(
      checkTrigger({ kind: 'connector_event', provider: 'gmail', event: 'received' }, catalogue).trigger,
      { kind: 'connector_event', provider: 'gmail', event: 'received' },
    );
  });

  it('accepts a github_event with a connected github and drops repeated actions', () => {
    const result = checkTrigger(
      {
        kind: 'github_event',
        event: 'pull_request',
        actions: ['opened', 'closed', 'opened'],
        repo: 'acme/api',
      },
      SHARED_GITHUB,
    );
    assert.deepEqual(result, {
      trigger: {
        kind: 'github_event',
        event: 'pull_request',
        actions: ['opened', 'closed'],
        repo: 'acme/api',
      },
      personalProvider: undefined,
    });
    assert.equal(
      checkTrigger({ kind: 'github_event', event: 'push', repo: 'my-org/my.repo_2' }, SHARED_GITHUB).trigger
        .kind,
      'github_event',
    );
  });

  it('accepts every event of the built-in workspace provider, with nothing connected', () => {
    for (const event of [
      'document.created',
      'document.edited',
      'comment.created',
      'comment.mentioned',
      'page.written',
    ]) {
      const result = checkTrigger(
        { kind: 'connector_event', provider: 'workspace', event },
        NOTHING_CONNECTED,
      );
      assert.deepEqual(result.trigger, { kind: 'connector_event', provider: 'workspace', event });
      assert.equal(result.personalProvider, undefined);
    }
  });

  it('does not change the object it was given', () => {
    const raw = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'europe/berlin' };
    checkTrigger(raw, NOTHING_CONNECTED);
    assert.equal(raw.timezone, 'europe/berlin');
  });
});

describe('checkTrigger: time zones', () => {
  it('corrects the letter case of a zone name and keeps the name otherwise as given', () => {
    const zone = (timezone: string) => {
      const { trigger } = checkTrigger(
        schedule('daily', timezone, { hour: 9, minute: 0 }),
        NOTHING_CONNECTED,
      );
      assert.equal(trigger.kind, 'schedule');
      return trigger.kind === 'schedule' ? trigger.timezone : '';
    };
    assert.equal(zone('europe/berlin'), 'Europe/Berlin');
    assert.equal(zone('EUROPE/BERLIN'), 'Europe/Berlin');
    assert.equal(zone('US/Eastern'), 'US/Eastern');
    assert.equal(zone('Etc/UTC'), 'Etc/UTC');
    assert.equal(zone('utc'), 'UTC');
    assert.equal(zone('Australia/Sydney'), 'Australia/Sydney');
  });

  it('keeps a current IANA name as given, not its deprecated alias', () => {
    // IANA's names are Asia/Kolkata and Europe/Kyiv; Asia/Calcutta and Europe/Kiev are old links.
    for (const name of ['Asia/Kolkata', 'Europe/Kyiv', 'Asia/Kathmandu']) {
      const { trigger } = checkTrigger(schedule('daily', name, { hour: 9, minute: 0 }), NOTHING_CONNECTED);
      assert.equal(trigger.kind === 'schedule' ? trigger.timezone : '', name);
    }
  });

  it('the canonical zone schedules like the zone it came from', () => {
    const { trigger } = checkTrigger(
      schedule('daily', 'us/eastern', { hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
    );
    assert.equal(next(trigger, '2026-01-15T12:00:00.000Z'), '2026-01-15T14:00:00.000Z');
  });

  it('canonicalZone: the canonical name, or undefined for an unknown zone', () => {
    assert.equal(canonicalZone('europe/berlin'), 'Europe/Berlin');
    assert.equal(canonicalZone('Mars/Olympus'), undefined);
    assert.equal(canonicalZone(''), undefined);
  });

  it("refuses 'Mars/Olympus', naming trigger.timezone", () => {
    refuses(
      schedule('daily', 'Mars/Olympus', { hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.timezone/,
      /Mars\/Olympus/,
      /IANA/,
    );
  });

  it("refuses an empty timezone '', naming trigger.timezone", () => {
    refuses(schedule('daily', '', { hour: 9, minute: 0 }), NOTHING_CONNECTED, /trigger\.timezone/);
  });

  it('refuses a missing timezone, naming trigger.timezone', () => {
    refuses(
      { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0 },
      NOTHING_CONNECTED,
      /trigger\.timezone/,
    );
  });

  it("refuses a UTC offset ('+05:30'), which is not an IANA zone name", () => {
    refuses(schedule('daily', '+05:30', { hour: 9, minute: 0 }), NOTHING_CONNECTED, /trigger\.timezone/);
  });
});

describe('checkTrigger: schedule fields', () => {
  it('refuses an unknown kind, naming trigger.kind', () => {
    refuses({ kind: 'cron', expression: '* * * * *' }, NOTHING_CONNECTED, /trigger\.kind/, /schedule/);
    refuses({ frequency: 'daily', hour: 9, minute: 0, timezone: 'UTC' }, NOTHING_CONNECTED, /trigger\.kind/);
  });

  it('refuses a frequency other than hourly, daily, weekdays or weekly', () => {
    for (const frequency of ['monthly', 'Daily', 'minutely', '']) {
      refuses(
        { kind: 'schedule', frequency, hour: 9, minute: 0, timezone: 'UTC' },
        NOTHING_CONNECTED,
        /trigger\.frequency/,
        /hourly/,
        /weekly/,
      );
    }
  });

  it("refuses weekday on daily, weekdays and hourly ('does not apply')", () => {
    refuses(
      schedule('daily', 'UTC', { weekday: 1, hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.weekday does not apply/,
      /daily/,
    );
    refuses(
      schedule('weekdays', 'UTC', { weekday: 1, hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.weekday does not apply/,
      /weekdays/,
    );
    refuses(
      schedule('hourly', 'UTC', { weekday: 1, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.weekday does not apply/,
      /hourly/,
    );
  });

  it("refuses hour on hourly ('does not apply')", () => {
    refuses(
      schedule('hourly', 'UTC', { hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.hour does not apply/,
      /hourly/,
    );
  });

  it('refuses missing hour, minute or weekday where the frequency needs them', () => {
    refuses(schedule('hourly', 'UTC', {}), NOTHING_CONNECTED, /trigger\.minute is required/);
    refuses(schedule('daily', 'UTC', { minute: 0 }), NOTHING_CONNECTED, /trigger\.hour is required/);
    refuses(schedule('daily', 'UTC', { hour: 9 }), NOTHING_CONNECTED, /trigger\.minute is required/);
    refuses(schedule('weekdays', 'UTC', { minute: 0 }), NOTHING_CONNECTED, /trigger\.hour is required/);
    refuses(
      schedule('weekly', 'UTC', { hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.weekday is required/,
    );
    refuses(
      schedule('weekly', 'UTC', { weekday: 1, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.hour is required/,
    );
    refuses(
      schedule('weekly', 'UTC', { weekday: 1, hour: 9 }),
      NOTHING_CONNECTED,
      /trigger\.minute is required/,
    );
  });

  it('refuses weekday 0 and 8', () => {
    refuses(
      schedule('weekly', 'UTC', { weekday: 0, hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.weekday/,
    );
    refuses(
      schedule('weekly', 'UTC', { weekday: 8, hour: 9, minute: 0 }),
      NOTHING_CONNECTED,
      /trigger\.weekday/,
    );
  });

  it('refuses hour 24 and minute 60', () => {
    refuses(schedule('daily', 'UTC', { hour: 24, minute: 0 }), NOTHING_CONNECTED, /trigger\.hour/);
    refuses(schedule('daily', 'UTC', { hour: -1, minute: 0 }), NOTHING_CONNECTED, /trigger\.hour/);
    refuses(schedule('daily', 'UTC', { hour: 9, minute: 60 }), NOTHING_CONNECTED, /trigger\.minute/);
  });

  it('refuses a non-integer minute, naming trigger.minute', () => {
    refuses(schedule('daily', 'UTC', { hour: 9, minute: 1.5 }), NOTHING_CONNECTED, /trigger\.minute/);
    refuses(
      { kind: 'schedule', frequency: 'daily', hour: 9, minute: '5', timezone: 'UTC' },
      NOTHING_CONNECTED,
      /trigger\.minute/,
    );
  });

  it('does not call a given but malformed minute "required"', () => {
    for (const minute of [1.5, '5']) {
      const message = refuses(
        { kind: 'schedule', frequency: 'daily', hour: 9, minute, timezone: 'UTC' },
        NOTHING_CONNECTED,
        /trigger\.minute/,
      );
      assert.doesNotMatch(message, /is required/, `minute ${JSON.stringify(minute)}: ${message}`);
    }
  });

  it('refuses a field the schema does not know, naming it', () => {
    refuses(
      { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'UTC', cron: '0 9 * * *' },
      NOTHING_CONNECTED,
      /cron/,
    );
  });

  it('names every problem in one line', () => {
    const message = refuses(
      { kind: 'schedule', frequency: 'hourly', hour: 9, timezone: 'Mars/Olympus' },
      NOTHING_CONNECTED,
      /trigger\.hour/,
      /trigger\.minute/,
      /trigger\.timezone/,
    );
    assert.equal(message.split('; ').length >= 3, true, message);
  });

  it('a missing trigger is a clear error', () => {
    refuses(
      undefined,
      NOTHING_CONNECTED,
      /^trigger is required/,
      /schedule/,
      /connector_event/,
      /github_event/,
    );
    refuses(null, NOTHING_CONNECTED, /^trigger/);
  });
});

describe('checkTrigger: connector_event', () => {
  it('refuses an unknown provider, naming trigger.provider and the known ones', () => {
    refuses(
      { kind: 'connector_event', provider: 'jira', event: 'issue_created' },
      SHARED_GITHUB,
      /trigger\.provider "jira"/,
      /workspace/,
      /github/,
    );
  });

  it('refuses a provider that is not connected', () => {
    refuses(
      { kind: 'connector_event', provider: 'slack', event: 'message' },
      NOTHING_CONNECTED,
      /trigger\.provider "slack"/,
      /not connected/,
    );
    // A connection of another person's is not usable.
    refuses(
      { kind: 'connector_event', provider: 'github', event: 'push' },
      catalogueWith([{ provider: 'github', personal: true, connected: false }]),
      /trigger\.provider "github"/,
      /not connected/,
    );
  });

  it('refuses an event the provider does not emit', () => {
    refuses(
      { kind: 'connector_event', provider: 'slack', event: 'push' },
      catalogueWith([{ provider: 'slack' }]),
      /trigger\.event "push"/,
      /message/,
    );
    refuses(
      { kind: 'connector_event', provider: 'gmail', event: 'sent' },
      catalogueWith([{ provider: 'gmail' }]),
      /trigger\.event "sent"/,
      /received/,
    );
  });

  it('refuses a workspace event that does not exist, listing the real ones', () => {
    refuses(
      { kind: 'connector_event', provider: 'workspace', event: 'document.deleted' },
      NOTHING_CONNECTED,
      /trigger\.event "document\.deleted"/,
      /document\.created/,
      /page\.written/,
    );
  });

  it('refuses an empty provider or event', () => {
    refuses(
      { kind: 'connector_event', provider: '', event: 'message' },
      NOTHING_CONNECTED,
      /trigger\.provider/,
    );
    refuses(
      { kind: 'connector_event', provider: 'workspace', event: '' },
      NOTHING_CONNECTED,
      /trigger\.event/,
    );
    refuses({ kind: 'connector_event', provider: 'workspace' }, NOTHING_CONNECTED, /trigger\.event/);
  });
});

describe('checkTrigger: github_event', () => {
  it('refuses a repo that is not owner/name, naming trigger.repo', () => {
    for (const repo of ['acme', 'acme/api/extra', 'acme/', '/api', '', 'ac me/api']) {
      refuses({ kind: 'github_event', event: 'push', repo }, SHARED_GITHUB, /trigger\.repo/);
    }
    refuses({ kind: 'github_event', event: 'push', repo: 'acme' }, SHARED_GITHUB, /owner\/name/);
    refuses({ kind: 'github_event', event: 'push' }, SHARED_GITHUB, /trigger\.repo/);
  });

  it('refuses a github_event when github is not connected', () => {
    refuses(
      { kind: 'github_event', event: 'push', repo: 'acme/api' },
      NOTHING_CONNECTED,
      /github/,
      /not connected/,
    );
    refuses(
      { kind: 'github_event', event: 'push', repo: 'acme/api' },
      catalogueWith([{ provider: 'github', personal: true, connected: false }, { provider: 'slack' }]),
      /github/,
      /not connected/,
    );
  });

  it('refuses an event that is not a GitHub event name', () => {
    refuses(
      { kind: 'github_event', event: 'Pull Request', repo: 'acme/api' },
      SHARED_GITHUB,
      /trigger\.event "Pull Request"/,
    );
  });
});

describe('checkTrigger: personalProvider', () => {
  const personalGithub = catalogueWith([{ provider: 'github', personal: true }]);

  it('is set when the only usable connection is personal', () => {
    assert.equal(
      checkTrigger({ kind: 'github_event', event: 'push', repo: 'acme/api' }, personalGithub)
        .personalProvider,
      'github',
    );
    assert.equal(
      checkTrigger({ kind: 'connector_event', provider: 'github', event: 'push' }, personalGithub)
        .personalProvider,
      'github',
    );
    assert.equal(
      checkTrigger(
        { kind: 'connector_event', provider: 'gmail', event: 'received' },
        catalogueWith([{ provider: 'gmail', personal: true }]),
      ).personalProvider,
      'gmail',
    );
  });

  it('is not set when a shared connection is usable as well', () => {
    const both = catalogueWith([{ provider: 'github', personal: true }, { provider: 'github' }]);
    assert.equal(
      checkTrigger({ kind: 'github_event', event: 'push', repo: 'acme/api' }, both).personalProvider,
      undefined,
    );
    assert.equal(
      checkTrigger({ kind: 'connector_event', provider: 'github', event: 'push' }, both).personalProvider,
      undefined,
    );
  });

  it("is not set when the shared connection is usable and another person's personal one is not", () => {
    const catalogue = catalogueWith([
      { provider: 'github', personal: true, connected: false },
      { provider: 'github' },
    ]);
    assert.equal(
      checkTrigger({ kind: 'github_event', event: 'push', repo: 'acme/api' }, catalogue).personalProvider,
      undefined,
    );
  });

  it('is not set for schedules or workspace events', () => {
    assert.equal(
      checkTrigger(schedule('hourly', 'UTC', { minute: 0 }), personalGithub).personalProvider,
      undefined,
    );
    assert.equal(
      checkTrigger({ kind: 'connector_event', provider: 'workspace', event: 'page.written' }, personalGithub)
        .personalProvider,
      undefined,
    );
  });
});
