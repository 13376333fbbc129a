import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { schedulePreview } from '../src/flowplan/schedule-preview.ts';
import { TRIGGER_PREVIEW_CHARS } from '../src/contract/automations.ts';
import { openAppFixture, type AppFixture } from './support/app-fixture.ts';

type Json = Record<string, unknown>;

describe('GET /api/automations/trigger-preview', () => {
  let f: AppFixture;
  let token: string;
  before(async () => {
    f = await openAppFixture();
    token = await f.tokenFor('ada@acme.test', ['automations:read']);
  });
  after(async () => {
    await f?.close();
  });

  const preview = async (trigger: string | undefined, bearer = token) => {
    const query = trigger === undefined ? '' : `?trigger=${encodeURIComponent(trigger)}`;
    const res = await f.get(`/api/automations/trigger-preview${query}`, {
      authorization: `Bearer ${bearer}`,
    });
    return { status: res.status, json: JSON.parse(res.body) as Json };
  };

  it('previews a trigger as the automation page shows a published one', async () => {
    const trigger = {
      kind: 'schedule',
      frequency: 'daily',
      hour: 17,
      minute: 0,
      timezone: 'America/New_York',
    };
    const { status, json } = await preview(JSON.stringify(trigger));
    assert.equal(status, 200, JSON.stringify(json));
    assert.equal(json.text, 'daily at 17:00 (America/New_York)');
    assert.equal((json.next as unknown[]).length, 5);
    const expected = schedulePreview(trigger as never, new Date());
    assert.deepEqual(json.next, expected.next);
    assert.equal(json.dst, expected.dst);
  });

  it('words an event trigger, with no firings', async () => {
    const { status, json } = await preview(
      JSON.stringify({ kind: 'connector_event', provider: 'workspace', event: 'comment.created' }),
    );
    assert.equal(status, 200);
    assert.equal(json.text, 'on workspace comment.created');
    assert.deepEqual(json.next, []);
  });

  it('refuses a bad trigger with the sentence publish gives, and nothing else', async () => {
    const cases: [string | undefined, string][] = [
      [
        JSON.stringify({ kind: 'schedule', frequency: 'daily', hour: 9, minute: 0, timezone: 'Mars/Base' }),
        'trigger.timezone "Mars/Base" is not an IANA time zone; use a name such as Europe/Berlin or UTC',
      ],
      [
        JSON.stringify({ kind: 'schedule', frequency: 'hourly', hour: 9, minute: 0, timezone: 'UTC' }),
        'trigger.hour does not apply to an hourly schedule; remove it (hourly takes minute)',
      ],
      ['{"kind":', 'trigger must be JSON of at most 2,000 characters'],
      [
        JSON.stringify({ kind: 'github_event', event: 'push', repo: 'a/b', actions: ['x'.repeat(2000)] }),
        'trigger must be JSON of at most 2,000 characters',
      ],
      [undefined, 'trigger is required: the trigger to preview, as JSON'],
    ];
    for (const [trigger, message] of cases) {
      const { status, json } = await preview(trigger);
      assert.equal(status, 400, JSON.stringify(json));
      assert.deepEqual(json, { error: 'invalid_argument', message });
    }
    assert.equal(TRIGGER_PREVIEW_CHARS, 2000);
  });

  it('needs automations:read, as reading an automation does', async () => {
    const documentsOnly = await f.tokenFor('ada@acme.test', ['documents:read']);
    const { status, json } = await preview(
      JSON.stringify({ kind: 'schedule', frequency: 'hourly', minute: 0, timezone: 'UTC' }),
      documentsOnly,
    );
    assert.equal(status, 403);
    assert.equal(json.error, 'insufficient_scope');
  });
});
