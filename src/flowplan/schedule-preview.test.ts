import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DomainError } from '../errors.ts';
import { Catalogue } from '../capabilities/catalogue.ts';
import { type Trigger, checkTrigger } from './triggers.ts';
import { previewTrigger, schedulePreview } from './schedule-preview.ts';

describe('the schedule preview', () => {
  it('gives the next five runs in the trigger’s zone, with that zone’s offset across a clock change', () => {
    const trigger: Trigger = {
      kind: 'schedule',
      frequency: 'daily',
      hour: 9,
      minute: 0,
      timezone: 'Europe/Berlin',
    };
    const preview = schedulePreview(trigger, new Date('2026-03-26T12:00:00Z'));
    assert.equal(preview.text, 'daily at 09:00 (Europe/Berlin)');
    assert.deepEqual(
      preview.next.map((f) => [f.local, f.offset, f.at]),
      [
        ['2026-03-27 09:00', 'UTC+01:00', '2026-03-27T08:00:00.000Z'],
        ['2026-03-28 09:00', 'UTC+01:00', '2026-03-28T08:00:00.000Z'],
        ['2026-03-29 09:00', 'UTC+02:00', '2026-03-29T07:00:00.000Z'],
        ['2026-03-30 09:00', 'UTC+02:00', '2026-03-30T07:00:00.000Z'],
        ['2026-03-31 09:00', 'UTC+02:00', '2026-03-31T07:00:00.000Z'],
      ],
    );
    assert.deepEqual(preview.next_clock_change, {
      at: '2026-03-29T01:00:00.000Z',
      from: 'UTC+01:00',
      to: 'UTC+02:00',
    });
    assert.match(preview.dst, /first valid minute after the gap/);
  });

  it('runs a time the clocks skip at the first minute after the gap', () => {
    const trigger: Trigger = {
      kind: 'schedule',
      frequency: 'daily',
      hour: 2,
      minute: 30,
      timezone: 'Europe/Berlin',
    };
    const [first] = schedulePreview(trigger, new Date('2026-03-28T12:00:00Z')).next;
    assert.deepEqual([first?.local, first?.offset], ['2026-03-29 03:00', 'UTC+02:00']);
  });

  it('says so for a zone without clock changes, and for hourly schedules', () => {
    const utc = schedulePreview(
      { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' },
      new Date('2026-01-01T00:00:00Z'),
    );
    assert.equal(utc.next_clock_change, undefined);
    assert.match(utc.dst, /does not change its clocks/);
    assert.equal(utc.next[0]?.local, '2026-01-07 04:00');
    const hourly = schedulePreview(
      { kind: 'schedule', frequency: 'hourly', minute: 15, timezone: 'America/New_York' },
      new Date('2026-01-01T00:00:00Z'),
    );
    assert.match(hourly.dst, /every 60 minutes of real time/);
    assert.equal(hourly.next.length, 5);
  });

  it('has no firings for an event trigger', () => {
    const preview = schedulePreview(
      { kind: 'connector_event', provider: 'github', event: 'push' },
      new Date(),
    );
    assert.deepEqual(preview.next, []);
    assert.equal(preview.text, 'on github push');
  });
});

describe('the preview of an edited trigger', () => {
  /** A person with no connections: only the workspace's own events. */
  const catalogue = new Catalogue(new Map(), []);
  const now = new Date('2026-03-26T12:00:00Z');

  /** The sentence a refusal gives, asserting it is one invalid_argument line. */
  function refusal(run: () => unknown): string {
    let message = '';
    assert.throws(run, (err: unknown) => {
      assert.ok(err instanceof DomainError, `a DomainError, got ${String(err)}`);
      assert.equal(err.code, 'invalid_argument');
      assert.doesNotMatch(err.message, /\n/);
      message = err.message;
      return true;
    });
    return message;
  }

  it('is what the published trigger would show, its zone written as publish stores it', () => {
    const edited = {
      kind: 'schedule',
      frequency: 'weekly',
      weekday: 5,
      hour: 17,
      minute: 30,
      timezone: 'america/new_york',
    };
    const preview = previewTrigger(edited, catalogue, now);
    assert.equal(preview.text, 'every Friday at 17:30 (America/New_York)');
    assert.equal(preview.timezone, 'America/New_York');
    assert.deepEqual(preview, schedulePreview({ ...edited, timezone: 'America/New_York' } as Trigger, now));
    assert.deepEqual(
      preview.next.map((f) => [f.local, f.offset]),
      [
        ['2026-03-27 17:30', 'UTC-04:00'],
        ['2026-04-03 17:30', 'UTC-04:00'],
        ['2026-04-10 17:30', 'UTC-04:00'],
        ['2026-04-17 17:30', 'UTC-04:00'],
        ['2026-04-24 17:30', 'UTC-04:00'],
      ],
    );
    assert.match(preview.dst, /clocks go forward/);
  });

  it('refuses a bad trigger with the sentence publish gives', () => {
    const bad: unknown[] = [
      { kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Mars/Olympus_Mons' },
      { kind: 'schedule', frequency: 'hourly', hour: 9, minute: 0, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'daily', hour: 24, minute: 0, timezone: 'UTC' },
      { kind: 'github_event', event: 'push', repo: 'acme/app' },
      { kind: 'weekly' },
      undefined,
    ];
    for (const raw of bad) {
      const message = refusal(() => previewTrigger(raw, catalogue, now));
      assert.equal(
        message,
        refusal(() => checkTrigger(raw, catalogue)),
      );
    }
    assert.equal(
      refusal(() => previewTrigger(bad[0], catalogue, now)),
      'trigger.timezone "Mars/Olympus_Mons" is not an IANA time zone; use a name such as Europe/Berlin or UTC',
    );
  });

  it('words an event trigger, which has no firings', () => {
    const preview = previewTrigger(
      { kind: 'connector_event', provider: 'workspace', event: 'document.created' },
      catalogue,
      now,
    );
    assert.equal(preview.text, 'on workspace document.created');
    assert.deepEqual(preview.next, []);
    assert.equal(preview.timezone, undefined);
  });
});
