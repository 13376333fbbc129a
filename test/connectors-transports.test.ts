import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { answerFailure, retryAfterMs } from '../src/capabilities/failures.ts';
import { transportCall, TRANSPORTS, CONNECTOR_PLUGINS } from '../src/capabilities/catalogue.ts';
import type { Connection } from '../src/capabilities/capability.ts';
import { parseSecretKey, secretBox } from '../src/domains/connectors/secrets.ts';
import { applySettings, effectiveSettings, missingSettings } from '../src/domains/connectors/settings.ts';
import { StepError } from '../src/errors.ts';
import { githubStandIn, slackStandIn, type ServiceStandIn } from './support/connector-stand-ins.ts';

async function stepError(call: Promise<unknown>): Promise<StepError> {
  const error = await call.then(
    () => assert.fail('expected the call to fail'),
    (e: unknown) => e,
  );
  assert.ok(error instanceof StepError, String(error));
  return error;
}

describe('sealed secrets', () => {
  const box = secretBox(randomBytes(32));

  it('open what they sealed, only in the place they were sealed for', () => {
    const sealed = box.seal('ghp_token', 'connectors:con_1');
    assert.match(sealed, /^v1:[0-9a-f]{8}:[A-Za-z0-9+/]+=*$/);
    assert.ok(!sealed.includes('ghp_token'));
    assert.notEqual(box.seal('ghp_token', 'connectors:con_1'), sealed, 'a fresh nonce each time');
    assert.equal(box.open(sealed, 'connectors:con_1'), 'ghp_token');
    assert.throws(
      () => box.open(sealed, 'connectors:con_2'),
      /does not open with this key: it was changed or damaged/,
    );
    const [v, id, data] = sealed.split(':') as [string, string, string];
    const flipped = Buffer.from(data, 'base64');
    flipped[flipped.length - 1]! ^= 1;
    assert.throws(
      () => box.open(`${v}:${id}:${flipped.toString('base64')}`, 'connectors:con_1'),
      /changed or damaged/,
    );
  });

  it('say when another key sealed them', () => {
    const sealed = secretBox(randomBytes(32)).seal('x', 'c');
    assert.throws(
      () => box.open(sealed, 'c'),
      /sealed with another key \(TANDEM_SECRET_KEY or TANDEM_DATA\/secrets\.key changed\)/,
    );
  });

  it('take a key as 32 bytes of base64 or 64 hex digits, nothing else', () => {
    const key = randomBytes(32);
    assert.deepEqual(parseSecretKey(key.toString('base64')), key);
    assert.deepEqual(parseSecretKey(key.toString('hex')), key);
    assert.equal(parseSecretKey(randomBytes(16).toString('base64')), undefined);
    assert.equal(parseSecretKey('correct horse battery staple'), undefined);
  });
});

describe('connector settings', () => {
  it('presets Gmail and Outlook, signing in as the from address with the app password', () => {
    const gmail = effectiveSettings('gmail', { from: 'Ada <ada@gmail.test>', password: 'app' });
    assert.equal(gmail.smtp_url, 'smtps://smtp.gmail.com:465');
    assert.equal(gmail.username, 'ada@gmail.test');
    assert.equal(effectiveSettings('outlook', {}).smtp_url, 'smtp://smtp.office365.com:587');
    assert.deepEqual(missingSettings('outlook', { from: 'a@b.test' }), ['password']);
    assert.deepEqual(missingSettings('email', { from: 'a@b.test' }), ['smtp_url']);
  });

  it('clears a setting given null or nothing, and keeps the rest', () => {
    const next = applySettings(
      'github',
      { token: 't', api_url: 'https://ghe.test/api/v3' },
      { token: null, secret: '' },
    );
    assert.deepEqual(next, { api_url: 'https://ghe.test/api/v3' });
  });
});

describe('failures', () => {
  const write = { service: 'GitHub', action: 'create_issue', write: true };
  const read = { ...write, action: 'get_issue', write: false };

  it('reads Retry-After in seconds or as a date', () => {
    assert.equal(retryAfterMs('120'), 120_000);
    assert.equal(retryAfterMs(new Date(10_000 + 30_000).toUTCString(), 10_000), 30_000);
    assert.equal(retryAfterMs('soon'), undefined);
    assert.equal(retryAfterMs(undefined), undefined);
  });

  it('retries rate limits and unavailability after the wait asked, and nothing else of a write', () => {
    const limited = answerFailure(write, { status: 429, message: 'slow down', retryAfterMs: 5000 });
    assert.deepEqual([limited.retryable, limited.nothingDone, limited.retryAfterMs], [true, true, 5000]);
    assert.equal(
      limited.message,
      'GitHub rate-limited create_issue (429 Too Many Requests): slow down; it asked to wait 5 s before trying again',
    );
    assert.equal(answerFailure(write, { status: 503, message: '' }).retryable, true);
    const unknown = answerFailure(write, { status: 502, message: 'Bad gateway' });
    assert.equal(unknown.code, 'outcome_unknown');
    assert.match(
      unknown.message,
      /^outcome unknown: GitHub answered \(502 Bad Gateway\): Bad gateway; create_issue may or may not have been done, so check GitHub before running this again$/,
    );
    assert.equal(answerFailure(read, { status: 502, message: '' }).retryable, true, 'a read is tried again');
    const refused = answerFailure(write, { status: 422, message: 'Validation Failed' });
    assert.deepEqual([refused.retryable, refused.nothingDone], [false, true]);
    assert.equal(
      refused.message,
      'GitHub refused create_issue (422 Unprocessable Entity): Validation Failed',
    );
  });
});

describe('transports', () => {
  let github: ServiceStandIn;
  let slack: ServiceStandIn;
  const net = () => ({ allow: [github.host, slack.host], signal: new AbortController().signal });
  const gh = (): Connection => ({
    provider: 'github',
    settings: { api_url: github.url('/api/v3'), token: 'ghp_t' },
  });
  const sl = (): Connection => ({
    provider: 'slack',
    settings: { api_url: slack.url('/api/'), bot_token: 'xoxb-t' },
  });

  before(async () => {
    github = await githubStandIn('ghp_t');
    slack = await slackStandIn('xoxb-t');
  });
  after(() => Promise.all([github.close(), slack.close()]));

  it('ships a transport for every capability of the connector plugins', () => {
    for (const plugin of CONNECTOR_PLUGINS)
      for (const cap of plugin.capabilities) assert.ok(transportCall(cap.key), `${cap.key} has a transport`);
    assert.deepEqual(Object.keys(TRANSPORTS).sort(), CONNECTOR_PLUGINS.map((p) => p.namespace).sort());
  });

  it('takes GitHub’s spent rate limit (403, no requests remaining) as a wait until its reset', async () => {
    const reset = Math.floor(Date.now() / 1000) + 60;
    github.answerNext({
      status: 403,
      headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) },
      body: { message: 'API rate limit exceeded for user ID 1.' },
    });
    const error = await stepError(
      TRANSPORTS.github!.get_issue!({ repo: 'acme/web', number: 1 }, gh(), net()),
    );
    assert.equal(error.retryable, true);
    assert.ok(error.retryAfterMs! > 55_000 && error.retryAfterMs! <= 60_000, String(error.retryAfterMs));
    assert.match(error.message, /^GitHub rate-limited get_issue \(403 Forbidden\): API rate limit exceeded/);
  });

  it('takes Slack’s 429 with its Retry-After, as Slack’s client reports it', async () => {
    slack.answerNext({
      status: 429,
      headers: { 'retry-after': '7' },
      body: { ok: false, error: 'ratelimited' },
    });
    const error = await stepError(
      TRANSPORTS.slack!.post_message!({ channel: '#general', text: 'hi' }, sl(), net()),
    );
    assert.deepEqual([error.retryable, error.nothingDone, error.retryAfterMs], [true, true, 7000]);
    assert.equal(slack.received.length, 1, 'Slack’s client did not retry on its own');
  });

  it('knows a write that never left from one whose answer was lost', async () => {
    const closed = { ...gh(), settings: { ...gh().settings, api_url: 'http://127.0.0.1:9/api/v3' } };
    const never = await stepError(
      TRANSPORTS.github!.create_issue!({ repo: 'acme/web', title: 'x' }, closed, {
        ...net(),
        allow: ['127.0.0.1:9'],
      }),
    );
    assert.deepEqual([never.retryable, never.nothingDone, never.code], [true, true, undefined]);
    assert.match(never.message, /^GitHub POST 127\.0\.0\.1:9 failed: .*ECONNREFUSED/);
    github.answerNext({ status: 500, body: { message: 'Server Error' } });
    const lost = await stepError(
      TRANSPORTS.github!.create_issue!({ repo: 'acme/web', title: 'x' }, gh(), net()),
    );
    assert.equal(lost.code, 'outcome_unknown');
  });
});
