import assert from 'node:assert/strict';
import { createHmac, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RunningServer } from '../src/server.ts';
import { capability, plan, transform, trig, type Json } from './support/automations.ts';
import { connectorWorld, type ConnectorWorld } from './support/connectors.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { echoPlan, hookSenders, sign, unixNow } from './support/hooks.ts';
import { startOnFreePorts } from './support/raw-http.ts';

const fixture = (name: string) =>
  JSON.parse(readFileSync(join(import.meta.dirname, 'fixtures', 'github', `${name}.json`), 'utf8')) as Json;

/**
 * A delivery like a fixture's, about another issue or release: a body GitHub signed once is
 * received once, so a test that needs a delivery of its own needs a body of its own.
 */
function another(name: string, number: number): Json {
  const body = fixture(name);
  if (body.issue) Object.assign(body.issue as Json, { id: 2711000000 + number, number });
  if (body.release) Object.assign(body.release as Json, { id: 188000 + number, tag_name: `v2.4.${number}` });
  return body;
}

/** The GitHub webhook deliveries, as GitHub sends them for acme/web. */
const DELIVERIES = [
  { event: 'issues', action: 'opened', file: 'issues.opened' },
  { event: 'issue_comment', action: 'created', file: 'issue_comment.created' },
  { event: 'pull_request', action: 'opened', file: 'pull_request.opened' },
  { event: 'push', action: undefined, file: 'push' },
  { event: 'release', action: 'published', file: 'release.published' },
];

for (const db of DATABASES) {
  describe(`events from GitHub and Slack on ${db.name}`, () => {
    let w: ConnectorWorld;
    let server: RunningServer;
    let dataDir: string;
    const { github } = hookSenders(() => server.url);
    const workspace = () => acme(w.h).id;

    before(async () => {
      w = await connectorWorld(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-connector-hooks-'));
      server = await startOnFreePorts(w.h.services, dataDir);
    });
    after(async () => {
      await server.close();
      await w.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    const publishOn = (trigger: Json, planJson: Json = echoPlan('Echo')) =>
      w.helpers.publish(w.ada, planJson, { trigger, write_approval: 'automatic' });

    const runs = (automationId: string) => w.helpers.runsOf(automationId);

    /** A Slack Events API request, signed over "v0:<timestamp>:<body>". */
    function slack(
      body: Json,
      options: { timestamp?: string; secret?: string; headers?: Record<string, string> } = {},
    ) {
      const text = JSON.stringify(body);
      const timestamp = options.timestamp ?? unixNow();
      const mac = createHmac('sha256', options.secret ?? w.secrets.slackSigningSecret);
      return fetch(new URL(`/hooks/slack/${workspace()}`, server.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'x-slack-request-timestamp': timestamp,
          'x-slack-signature': `v0=${mac.update(`v0:${timestamp}:${text}`).digest('hex')}`,
          ...options.headers,
        },
        body: text,
      });
    }

    it('starts the automation each real payload matches: issues, issue_comment, pull_request, push, release', async () => {
      const automations = new Map<string, string>();
      for (const d of DELIVERIES) {
        const published = await publishOn({
          kind: 'github_event',
          event: d.event,
          actions: d.action ? [d.action] : [],
          repo: 'acme/web',
        });
        automations.set(d.event, published.automation_id);
      }
      for (const d of DELIVERIES) {
        const response = await github(workspace(), d.event, fixture(d.file), {
          secret: w.secrets.webhookSecret,
        });
        assert.equal(response.status, 202, d.event);
        const body = (await response.json()) as { runs: string[] };
        assert.equal(body.runs.length, 1, `${d.event} starts one run`);
        const [run] = await runs(automations.get(d.event)!);
        const trigger = JSON.parse(run!.trigger_json) as Json;
        assert.equal(trigger.event, d.event);
        assert.equal(trigger.action ?? undefined, d.action);
        assert.equal(trigger.repo, 'acme/web');
        assert.deepEqual(trigger.payload, fixture(d.file));
      }
    });

    it('starts one run for a delivery sent twice, and takes a form-encoded one', async () => {
      const { automation_id } = await publishOn({
        kind: 'github_event',
        event: 'release',
        actions: ['published'],
        repo: 'acme/web',
      });
      const delivery = randomUUID();
      const payload = another('release.published', 1);
      const first = await github(workspace(), 'release', payload, {
        secret: w.secrets.webhookSecret,
        delivery,
      });
      assert.equal(first.status, 202);
      const again = await github(workspace(), 'release', payload, {
        secret: w.secrets.webhookSecret,
        delivery,
      });
      assert.equal(again.status, 200);
      assert.deepEqual(await again.json(), { ok: true, duplicate: true, runs: [] });
      assert.equal((await runs(automation_id)).length, 1);

      const form = `payload=${encodeURIComponent(JSON.stringify(payload))}`;
      const response = await fetch(new URL(`/hooks/github/${workspace()}`, server.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          'x-github-event': 'release',
          'x-github-delivery': randomUUID(),
          'x-hub-signature-256': sign(w.secrets.webhookSecret, form),
        },
        body: form,
      });
      assert.equal(response.status, 202);
      assert.equal((await runs(automation_id)).length, 2);
    });

    it('answers an opened issue with a comment on it, through GitHub', async () => {
      const triage = plan(
        'Triage',
        [
          transform(
            'text',
            'template',
            { who: trig('payload.issue.user.login'), title: trig('payload.issue.title') },
            { template: 'Thanks @{{who}}, we are looking at "{{title}}".' },
          ),
          capability('comment', 'github.comment_on_issue', {
            repo: trig('repo'),
            number: trig('payload.issue.number'),
            body: { kind: 'ref', node: 'text', path: 'text' },
          }),
        ],
        [{ from: 'text', to: 'comment' }],
      );
      const { automation_id } = await publishOn(
        { kind: 'github_event', event: 'issues', actions: ['opened'], repo: 'acme/web' },
        triage,
      );
      const response = await github(workspace(), 'issues', another('issues.opened', 61), {
        secret: w.secrets.webhookSecret,
      });
      assert.equal(response.status, 202);
      await w.engine.drain();
      const [run] = await runs(automation_id);
      assert.equal(run!.status, 'succeeded', run!.error ?? '');
      const comment = w.github.received.at(-1)!;
      assert.equal(comment.path, '/api/v3/repos/acme/web/issues/61/comments');
      assert.deepEqual(JSON.parse(comment.body), {
        body: 'Thanks @bob-stone, we are looking at "Checkout button does nothing on Safari".',
      });
    });

    it('answers Slack’s url_verification challenge', async () => {
      const response = await slack({ token: 'legacy', challenge: 'c3RhbmQtaW4', type: 'url_verification' });
      assert.equal(response.status, 200);
      assert.deepEqual(await response.json(), { challenge: 'c3RhbmQtaW4' });
    });

    it('refuses a Slack request signed more than five minutes ago, or with another secret', async () => {
      const { automation_id } = await publishOn({
        kind: 'connector_event',
        provider: 'slack',
        event: 'reaction_added',
      });
      const event = (id: string) => ({
        type: 'event_callback',
        team_id: 'T0ACME',
        event_id: id,
        event: { type: 'reaction_added', user: 'U0ADA', reaction: 'eyes' },
      });
      const stale = await slack(event('Ev0STALE'), {
        timestamp: String(Math.floor(Date.now() / 1000) - 301),
      });
      assert.equal(stale.status, 401);
      assert.equal(((await stale.json()) as Json).error, 'bad_timestamp');
      const forged = await slack(event('Ev0FORGED'), { secret: 'not-the-signing-secret' });
      assert.equal(forged.status, 401);
      assert.equal(((await forged.json()) as Json).error, 'bad_signature');
      const challenge = await slack(
        { challenge: 'x', type: 'url_verification' },
        { secret: 'not-the-signing-secret' },
      );
      assert.equal(challenge.status, 401, 'a challenge is answered only when signed');
      assert.equal((await runs(automation_id)).length, 0);
    });

    it('starts the automations a Slack event matches, once however often Slack retries it', async () => {
      const { automation_id } = await publishOn({
        kind: 'connector_event',
        provider: 'slack',
        event: 'message',
      });
      const body = {
        token: 'legacy',
        team_id: 'T0ACME',
        api_app_id: 'A0TANDEM',
        type: 'event_callback',
        event_id: 'Ev0MESSAGE1',
        event_time: 1763630000,
        event: {
          type: 'message',
          channel: 'C0GENERAL',
          user: 'U0ADA',
          text: 'ship it',
          ts: '1763630000.000200',
          channel_type: 'channel',
        },
      };
      const first = await slack(body);
      assert.equal(first.status, 200);
      assert.equal(((await first.json()) as { runs: string[] }).runs.length, 1);
      const retried = await slack(body, {
        headers: { 'x-slack-retry-num': '1', 'x-slack-retry-reason': 'http_timeout' },
      });
      assert.equal(retried.status, 200);
      assert.equal(((await retried.json()) as Json).duplicate, true);
      const [run] = await runs(automation_id);
      assert.equal((await runs(automation_id)).length, 1);
      const trigger = JSON.parse(run!.trigger_json) as { provider: string; event: string; data: Json };
      assert.equal(trigger.provider, 'slack');
      assert.equal(trigger.event, 'message');
      assert.equal(trigger.data.text, 'ship it');
      assert.equal(trigger.data.event_id, 'Ev0MESSAGE1');
    });
  });
}
