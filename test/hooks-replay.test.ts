import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OUTBOX_KEEP_MS, pruneEvents, type IncomingEvent } from '../src/domains/automations/events.ts';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture, type ImportedWorkspace } from '../src/domains/import/import.ts';
import { DomainError } from '../src/errors.ts';
import type { RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';
import { echoPlan, hookFixture, hookSenders, prOpened, PR_OPENED, sign, unixNow } from './support/hooks.ts';
import { startOnFreePorts } from './support/raw-http.ts';

type Json = Record<string, unknown>;

for (const db of DATABASES) {
  describe(`signed hook deliveries sent again on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let dataDir: string;
    let beta: ImportedWorkspace;
    let acmeGithub: string;
    let betaMessage: string;
    const { github, connector } = hookSenders(() => server.url);

    async function publish(actor: Actor, trigger: Json): Promise<string> {
      const name = `Replayed ${trigger.event as string}`;
      const drafted = await h.services.automations.draft(actor, { plan_json: echoPlan(name), ask: name });
      const published = await h.services.automations.publish(actor, {
        flow_version_id: drafted.flow_version_id,
        name,
        trigger,
      });
      return published.automation_id;
    }

    const runsOf = (automationId: string) =>
      h.services.deps.db.selectFrom('runs').select('id').where('automation_id', '=', automationId).execute();

    async function countRuns(): Promise<number> {
      const row = await h.services.deps.db
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    before(async () => {
      h = await setup(db);
      beta = (await importFixture(h.services.deps, hookFixture)).workspaces.Beta!;
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-replays-'));
      server = await startOnFreePorts(h.services, dataDir);
      acmeGithub = await publish(h.actor('ada@acme.test'), PR_OPENED);
      const bea: Actor = {
        personId: beta.users['bea@beta.test']!,
        workspaceId: beta.id,
        scopes: new Set(SCOPES),
      };
      betaMessage = await publish(bea, { kind: 'connector_event', provider: 'slack', event: 'message' });
    });

    after(async () => {
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('starts one run for a signed GitHub delivery sent twice; the second answer says duplicate', async () => {
      const before = (await runsOf(acmeGithub)).length;
      const delivery = randomUUID();
      const payload = prOpened();
      const first = await github(acme(h).id, 'pull_request', payload, { delivery });
      assert.equal(first.status, 202);
      assert.equal(((await first.json()) as { runs: string[] }).runs.length, 1);
      const again = await github(acme(h).id, 'pull_request', payload, { delivery });
      assert.equal(again.status, 200);
      assert.deepEqual(await again.json(), { ok: true, duplicate: true, runs: [] });
      assert.equal((await runsOf(acmeGithub)).length, before + 1, 'the replay started nothing');

      // The same delivery id in another workspace is that workspace's own delivery.
      const toBeta = await github(beta.id, 'pull_request', payload, { delivery, secret: 'whsec-2' });
      assert.equal(toBeta.status, 202);
    });

    it('starts nothing for a signed GitHub body sent again under a new delivery id, answering as for a duplicate', async () => {
      const before = (await runsOf(acmeGithub)).length;
      const payload = prOpened();
      const first = await github(acme(h).id, 'pull_request', payload);
      assert.equal(first.status, 202);
      assert.equal(((await first.json()) as { runs: string[] }).runs.length, 1);
      // The captured body and signature, under fresh delivery ids and another event name: not signed.
      for (const event of ['pull_request', 'pull_request', 'issues']) {
        const replay = await github(acme(h).id, event, payload, { delivery: randomUUID() });
        assert.equal(replay.status, 200, event);
        assert.deepEqual(await replay.json(), { ok: true, duplicate: true, runs: [] });
      }
      assert.equal((await runsOf(acmeGithub)).length, before + 1, 'the replays started nothing');

      // The next delivery (its own body) still starts its run; the same body is Beta's own delivery.
      const next = await github(acme(h).id, 'pull_request', prOpened());
      assert.equal(next.status, 202);
      const toBeta = await github(beta.id, 'pull_request', payload, { secret: 'whsec-2' });
      assert.equal(toBeta.status, 202);
      assert.equal((await runsOf(acmeGithub)).length, before + 2);
    });

    it('forgets a delivered body once its outbox row is pruned, a week after delivery', async () => {
      const db = h.services.deps.db;
      const payload = prOpened();
      assert.equal((await github(acme(h).id, 'pull_request', payload)).status, 202);
      const key = `${acme(h).id}:github:${createHash('sha256').update(JSON.stringify(payload)).digest('hex')}`;
      const row = await db
        .selectFrom('event_outbox')
        .select(['id', 'delivered_at'])
        .where('body_key', '=', key)
        .executeTakeFirstOrThrow();
      assert.ok(row.delivered_at !== null, 'the delivery was delivered at once');

      // Six days on it is still known; a week and a minute on it is pruned, and counts again.
      const day = 24 * 3600 * 1000;
      await db
        .updateTable('event_outbox')
        .set({ delivered_at: Date.now() - 6 * day })
        .where('id', '=', row.id)
        .execute();
      await pruneEvents(db);
      const within = await github(acme(h).id, 'pull_request', payload);
      assert.deepEqual(await within.json(), { ok: true, duplicate: true, runs: [] });
      await db
        .updateTable('event_outbox')
        .set({ delivered_at: Date.now() - OUTBOX_KEEP_MS - 60_000 })
        .where('id', '=', row.id)
        .execute();
      await pruneEvents(db);
      const gone = await db.selectFrom('event_outbox').select('id').where('id', '=', row.id).execute();
      assert.deepEqual(gone, []);
      const later = await github(acme(h).id, 'pull_request', payload);
      assert.equal(later.status, 202);
    });

    it('refuses a GitHub delivery without X-GitHub-Delivery with 400 and starts nothing', async () => {
      const before = await countRuns();
      const res = await github(acme(h).id, 'pull_request', prOpened(), { delivery: null });
      assert.equal(res.status, 400);
      assert.match(((await res.json()) as { message: string }).message, /X-GitHub-Delivery/);
      const odd = await github(acme(h).id, 'pull_request', prOpened(), { delivery: 'a b' });
      assert.equal(odd.status, 400);
      assert.equal(await countRuns(), before);
    });

    it('starts one run for a signed connector event sent three times', async () => {
      const before = (await runsOf(betaMessage)).length;
      const body = JSON.stringify({ event: 'message', data: { text: 'once only' } });
      const timestamp = unixNow();
      const answers = [];
      for (let i = 0; i < 3; i++) {
        const res = await connector(beta.id, 'slack', body, { timestamp });
        answers.push({ status: res.status, body: (await res.json()) as Json });
      }
      assert.equal(answers[0]!.status, 202);
      assert.equal((answers[0]!.body.runs as string[]).length, 1);
      for (const replay of answers.slice(1)) {
        assert.equal(replay.status, 200);
        assert.deepEqual(replay.body, { ok: true, duplicate: true, runs: [] });
      }
      assert.equal((await runsOf(betaMessage)).length, before + 1);
    });

    it('refuses a connector event whose timestamp is missing, malformed, stale or early, with 401', async () => {
      const before = await countRuns();
      const payload = { event: 'message', data: { text: 'when?' } };
      const body = JSON.stringify(payload);
      const now = Math.floor(Date.now() / 1000);
      const attempts: [string, Parameters<typeof connector>[3]][] = [
        ['no timestamp', { timestamp: null, signature: sign('s3cret', body) }],
        ['no timestamp, signed as if empty', { timestamp: null }],
        ['a timestamp in milliseconds', { timestamp: String(Date.now()) }],
        ['an ISO time', { timestamp: new Date().toISOString() }],
        ['a negative number', { timestamp: '-5' }],
        ['six minutes old', { timestamp: String(now - 360) }],
        ['six minutes ahead', { timestamp: String(now + 360) }],
      ];
      for (const [label, options] of attempts) {
        const res = await connector(beta.id, 'slack', payload, options);
        assert.equal(res.status, 401, label);
        const refusal = (await res.json()) as { error: string; message: string };
        assert.equal(refusal.error, 'bad_timestamp', label);
        assert.match(refusal.message, /X-Tandem-Timestamp/, label);
      }
      // A fresh timestamp with a signature over the body alone (the old scheme), or over another time.
      const bodyOnly = await connector(beta.id, 'slack', payload, { signature: sign('s3cret', body) });
      assert.equal(bodyOnly.status, 401);
      assert.equal(((await bodyOnly.json()) as { error: string }).error, 'bad_signature');
      const otherTime = await connector(beta.id, 'slack', payload, {
        signature: sign('s3cret', `${now - 1}.${body}`),
        timestamp: String(now),
      });
      assert.equal(otherTime.status, 401);
      // Four minutes either way is still inside the window.
      for (const skew of [-240, 240]) {
        const res = await connector(beta.id, 'slack', payload, { timestamp: String(now + skew) });
        assert.equal(res.status, 202, `skew ${skew}`);
      }
      assert.equal(await countRuns(), before + 2);
    });

    it('hands each delivery’s id to the automations service', async () => {
      const seen: { workspaceId: string; event: IncomingEvent }[] = [];
      const automations = h.services.automations;
      const original = automations.receiveEvent;
      automations.receiveEvent = async (workspaceId: string, event: IncomingEvent) => {
        seen.push({ workspaceId, event });
        if (seen.length > 1) throw new DomainError('duplicate_delivery', 'seen before');
        return [];
      };
      try {
        const delivery = randomUUID();
        const first = await github(acme(h).id, 'pull_request', prOpened(), { delivery });
        assert.equal(first.status, 202);
        assert.equal(seen[0]!.event.delivery_id, delivery);
        const timestamp = unixNow();
        const body = JSON.stringify({ event: 'message', data: {} });
        const res = await connector(beta.id, 'slack', body, { timestamp });
        assert.equal(res.status, 200, 'a duplicate_delivery refusal is answered as a duplicate');
        assert.deepEqual(await res.json(), { ok: true, duplicate: true, runs: [] });
        assert.equal(
          `sha256=${seen[1]!.event.delivery_id}`,
          sign('s3cret', `${timestamp}.${body}`),
          'a connector event is known by its signature',
        );
      } finally {
        automations.receiveEvent = original;
      }
    });
  });
}
