import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { SCOPES, type Actor } from '../src/domains/workspace/actor.ts';
import { importFixture, type ImportedWorkspace } from '../src/domains/import/import.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type Harness } from './support/harness.ts';
import { echoPlan, hookFixture, hookSenders, prOpened, PR_OPENED, sign } from './support/hooks.ts';

type Json = Record<string, unknown>;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

for (const db of DATABASES) {
  describe(`event hooks on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let engine: Engine;
    let dataDir: string;
    let beta: ImportedWorkspace;
    let gamma: ImportedWorkspace;
    let acmeGithub: string;
    let acmePaused: string;
    let betaGithub: string;
    let betaMessage: string;
    let betaReaction: string;
    let counter = 0;

    const database = () => h.services.deps.db;

    const bea = (): Actor => ({
      personId: beta.users['bea@beta.test']!,
      workspaceId: beta.id,
      scopes: new Set(SCOPES),
    });

    async function publish(actor: Actor, trigger: Json, extra: Json = {}): Promise<string> {
      counter += 1;
      const name = `Hook automation ${counter}`;
      const drafted = await h.services.automations.draft(actor, { plan_json: echoPlan(name), ask: name });
      const published = await h.services.automations.publish(actor, {
        flow_version_id: drafted.flow_version_id,
        name,
        trigger,
        ...extra,
      });
      return published.automation_id;
    }

    async function runsOf(automationId: string) {
      return database()
        .selectFrom('runs')
        .selectAll()
        .where('automation_id', '=', automationId)
        .orderBy('queued_at')
        .execute();
    }

    async function countRuns(): Promise<number> {
      const row = await database()
        .selectFrom('runs')
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow();
      return Number(row.n);
    }

    const { github, connector } = hookSenders(() => server.url);

    before(async () => {
      h = await setup(db);
      const imported = await importFixture(h.services.deps, hookFixture);
      beta = imported.workspaces.Beta!;
      gamma = imported.workspaces.Gamma!;
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-hooks-'));
      server = await startServer(
        loadConfig({
          TANDEM_DATA: dataDir,
          PORT: String(await freePort()),
          PAGES_PORT: String(await freePort()),
        }),
        h.services,
      );
      engine = createEngine(h.services, { leaseMs: 5000 });
      const ada = h.actor('ada@acme.test');
      acmeGithub = await publish(ada, PR_OPENED);
      acmePaused = await publish(
        ada,
        { kind: 'github_event', event: 'issues', actions: ['opened'], repo: 'acme/web' },
        { enabled: false },
      );
      betaGithub = await publish(bea(), PR_OPENED);
      betaMessage = await publish(bea(), { kind: 'connector_event', provider: 'slack', event: 'message' });
      betaReaction = await publish(
        bea(),
        { kind: 'connector_event', provider: 'slack', event: 'reaction_added' },
        { cooldown_s: 3600 },
      );
    });

    after(async () => {
      await engine?.stop();
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    describe('POST /hooks/github/{workspace_id}', () => {
      it('starts the matching automation on a correctly signed pull_request', async () => {
        const before = (await runsOf(acmeGithub)).length;
        const payload = prOpened();
        const res = await github(acme(h).id, 'pull_request', payload);
        assert.equal(res.status, 202);
        const body = (await res.json()) as { ok: boolean; runs: string[] };
        assert.equal(body.ok, true);
        assert.equal(body.runs.length, 1, 'one automation of this workspace matches');

        const runs = await runsOf(acmeGithub);
        assert.equal(runs.length, before + 1);
        const run = runs.at(-1)!;
        assert.equal(run.id, body.runs[0]);
        assert.equal(run.cause, 'event');
        assert.equal(run.workspace_id, acme(h).id);
        assert.deepEqual(JSON.parse(run.trigger_json), {
          event: 'pull_request',
          action: 'opened',
          repo: 'acme/web',
          payload,
        });

        await engine.drain();
        const done = await database()
          .selectFrom('runs')
          .select(['status', 'output_json'])
          .where('id', '=', run.id)
          .executeTakeFirstOrThrow();
        assert.equal(done.status, 'succeeded');
        assert.deepEqual(JSON.parse(done.output_json ?? '{}'), { echo: { text: 'got pull_request' } });
      });

      it('refuses a wrong or missing signature with 401 and starts nothing', async () => {
        const before = await countRuns();
        const payload = prOpened();
        const wrongSecret = await github(acme(h).id, 'pull_request', payload, { secret: 'whsec-2' });
        assert.equal(wrongSecret.status, 401);
        const refusal = (await wrongSecret.json()) as { error: string; message: string };
        assert.equal(refusal.error, 'bad_signature');
        assert.match(refusal.message, /X-Hub-Signature-256/);

        const otherBody = await github(acme(h).id, 'pull_request', payload, {
          signature: sign('whsec-1', JSON.stringify(prOpened('acme/other'))),
        });
        assert.equal(otherBody.status, 401, 'a signature of another body does not count');
        const missing = await github(acme(h).id, 'pull_request', payload, { signature: null });
        assert.equal(missing.status, 401);
        const noPrefix = await github(acme(h).id, 'pull_request', payload, {
          signature: sign('whsec-1', JSON.stringify(payload)).slice('sha256='.length),
        });
        assert.equal(noPrefix.status, 401);
        const garbage = await github(acme(h).id, 'pull_request', payload, { signature: 'sha256=00' });
        assert.equal(garbage.status, 401);
        assert.equal(await countRuns(), before);
      });

      it('answers 404 for an unknown workspace and one without a github secret', async () => {
        const before = await countRuns();
        for (const [workspaceId, secret] of [
          ['ws_unknown', 'whsec-1'],
          [gamma.id, 'whsec-1'],
          [other(h).id, 'whsec-1'],
        ] as const) {
          const res = await github(workspaceId, 'pull_request', prOpened(), { secret });
          assert.equal(res.status, 404, `POST /hooks/github/${workspaceId}`);
          const body = (await res.json()) as { error: string };
          assert.equal(body.error, 'not_found');
        }
        assert.equal(await countRuns(), before);
      });

      it('starts nothing for another action, another repo or another event', async () => {
        const before = await countRuns();
        for (const [event, payload] of [
          ['pull_request', prOpened('acme/web', 'closed')],
          ['pull_request', prOpened('acme/api')],
          ['pull_request', prOpened('other/web')],
          ['push', { ref: 'refs/heads/main', repository: { full_name: 'acme/web' } }],
        ] as const) {
          const res = await github(acme(h).id, event, payload);
          assert.equal(res.status, 202, `${event} ${JSON.stringify(payload)}`);
          assert.deepEqual(((await res.json()) as { runs: string[] }).runs, []);
        }
        assert.equal(await countRuns(), before);
      });

      it('starts nothing for a paused automation', async () => {
        const res = await github(acme(h).id, 'issues', {
          action: 'opened',
          repository: { full_name: 'acme/web' },
        });
        assert.equal(res.status, 202);
        assert.deepEqual(((await res.json()) as { runs: string[] }).runs, []);
        assert.equal((await runsOf(acmePaused)).length, 0);
      });

      it('never starts another workspace’s automation', async () => {
        const acmeBefore = (await runsOf(acmeGithub)).length;
        const betaBefore = (await runsOf(betaGithub)).length;

        const toBeta = await github(beta.id, 'pull_request', prOpened(), { secret: 'whsec-2' });
        assert.equal(toBeta.status, 202);
        const betaRuns = ((await toBeta.json()) as { runs: string[] }).runs;
        assert.equal(betaRuns.length, 1);
        assert.equal((await runsOf(betaGithub)).length, betaBefore + 1);
        assert.equal((await runsOf(acmeGithub)).length, acmeBefore, 'Beta’s hook leaves Acme alone');
        const betaRun = (await runsOf(betaGithub)).at(-1)!;
        assert.equal(betaRun.id, betaRuns[0]);
        assert.equal(betaRun.workspace_id, beta.id);

        const toAcme = await github(acme(h).id, 'pull_request', prOpened());
        assert.equal(toAcme.status, 202);
        assert.equal(((await toAcme.json()) as { runs: string[] }).runs.length, 1);
        assert.equal((await runsOf(betaGithub)).length, betaBefore + 1, 'Acme’s hook leaves Beta alone');
        assert.equal((await runsOf(acmeGithub)).length, acmeBefore + 1);

        const crossSigned = await github(beta.id, 'pull_request', prOpened(), { secret: 'whsec-1' });
        assert.equal(crossSigned.status, 401, 'Acme’s secret does not sign Beta’s hook');
      });

      it('answers a signed ping with 200 and starts nothing', async () => {
        const before = await countRuns();
        const ping = { zen: 'Keep it logically awesome.', hook_id: 1, repository: { full_name: 'acme/web' } };
        const res = await github(acme(h).id, 'ping', ping);
        assert.equal(res.status, 200);
        assert.deepEqual(await res.json(), { ok: true, runs: [] });
        const unsigned = await github(acme(h).id, 'ping', ping, { secret: 'nope' });
        assert.equal(unsigned.status, 401, 'a ping is checked like any other delivery');
        assert.equal(await countRuns(), before);
      });

      it('refuses a body that is not JSON and a missing event header with 400', async () => {
        const before = await countRuns();
        const notJson = 'action=opened';
        const res = await fetch(new URL(`/hooks/github/${acme(h).id}`, server.url), {
          method: 'POST',
          headers: { 'x-github-event': 'pull_request', 'x-hub-signature-256': sign('whsec-1', notJson) },
          body: notJson,
        });
        assert.equal(res.status, 400);
        const body = JSON.stringify(prOpened());
        const noEvent = await fetch(new URL(`/hooks/github/${acme(h).id}`, server.url), {
          method: 'POST',
          headers: { 'x-hub-signature-256': sign('whsec-1', body) },
          body,
        });
        assert.equal(noEvent.status, 400);
        assert.match(((await noEvent.json()) as { message: string }).message, /X-GitHub-Event/);
        assert.equal(await countRuns(), before);
      });
    });

    describe('POST /hooks/connectors/{workspace_id}/{provider}', () => {
      it('starts the matching connector_event automation on a correctly signed event', async () => {
        const data = { channel: 'C042', text: 'deploy is done', user: 'U7' };
        const res = await connector(beta.id, 'slack', { event: 'message', data });
        assert.equal(res.status, 202);
        const body = (await res.json()) as { ok: boolean; runs: string[] };
        assert.equal(body.ok, true);
        assert.equal(body.runs.length, 1);
        const runs = await runsOf(betaMessage);
        assert.equal(runs.length, 1);
        const run = runs[0]!;
        assert.equal(run.id, body.runs[0]);
        assert.equal(run.cause, 'event');
        assert.deepEqual(JSON.parse(run.trigger_json), { provider: 'slack', event: 'message', data });
        assert.equal((await runsOf(betaReaction)).length, 0, 'another event of the same provider');
      });

      it('starts nothing for an event no automation listens to', async () => {
        const before = await countRuns();
        const res = await connector(beta.id, 'slack', { event: 'channel_created', data: { name: 'x' } });
        assert.equal(res.status, 202);
        assert.deepEqual(((await res.json()) as { runs: string[] }).runs, []);
        assert.equal(await countRuns(), before);
      });

      it('refuses a bad signature with 401 and starts nothing', async () => {
        const before = await countRuns();
        const payload = { event: 'message', data: { text: 'forged' } };
        const wrong = await connector(beta.id, 'slack', payload, { secret: 'not-the-secret' });
        assert.equal(wrong.status, 401);
        const refusal = (await wrong.json()) as { error: string; message: string };
        assert.equal(refusal.error, 'bad_signature');
        assert.match(refusal.message, /X-Tandem-Signature-256/);
        const missing = await connector(beta.id, 'slack', payload, { signature: null });
        assert.equal(missing.status, 401);
        const githubHeader = await connector(beta.id, 'slack', payload, { header: 'x-hub-signature-256' });
        assert.equal(githubHeader.status, 401, 'the connector hook reads X-Tandem-Signature-256 only');
        assert.equal(await countRuns(), before);
      });

      it('answers 404 where there is no shared connection with a secret', async () => {
        const payload = { event: 'message', data: {} };
        // Acme's slack connection is Bob's personal one: its secret does not open a workspace hook.
        const personal = await connector(acme(h).id, 'slack', payload, { secret: 'slack-1' });
        assert.equal(personal.status, 404);
        const unknownProvider = await connector(beta.id, 'gmail', payload);
        assert.equal(unknownProvider.status, 404);
        const unknownWorkspace = await connector('ws_unknown', 'slack', payload);
        assert.equal(unknownWorkspace.status, 404);
      });

      it('refuses a body without an event with 400', async () => {
        const before = await countRuns();
        const res = await connector(beta.id, 'slack', { data: { text: 'hi' } });
        assert.equal(res.status, 400);
        assert.match(((await res.json()) as { message: string }).message, /"event"/);
        const notJson = await connector(beta.id, 'slack', 'event=message');
        assert.equal(notJson.status, 400);
        assert.equal(await countRuns(), before);
      });

      it('drops and counts an event within cooldown_s of the last one', async () => {
        const dropped = async () =>
          (
            await database()
              .selectFrom('automations')
              .select('dropped_events')
              .where('id', '=', betaReaction)
              .executeTakeFirstOrThrow()
          ).dropped_events;
        assert.equal(await dropped(), 0);
        const first = await connector(beta.id, 'slack', {
          event: 'reaction_added',
          data: { reaction: '+1' },
        });
        assert.equal(first.status, 202);
        assert.equal(((await first.json()) as { runs: string[] }).runs.length, 1);
        const second = await connector(beta.id, 'slack', {
          event: 'reaction_added',
          data: { reaction: 'tada' },
        });
        assert.equal(second.status, 202);
        assert.deepEqual(((await second.json()) as { runs: string[] }).runs, []);
        const runs = await runsOf(betaReaction);
        assert.equal(runs.length, 1, 'the second event inside the cooldown starts no run');
        assert.deepEqual((JSON.parse(runs[0]!.trigger_json) as { data: unknown }).data, { reaction: '+1' });
        assert.equal(await dropped(), 1);
        const third = await connector(beta.id, 'slack', {
          event: 'reaction_added',
          data: { reaction: 'eyes' },
        });
        assert.deepEqual(((await third.json()) as { runs: string[] }).runs, []);
        assert.equal(await dropped(), 2);
        // Without a cooldown every event starts a run.
        const before = (await runsOf(betaMessage)).length;
        await connector(beta.id, 'slack', { event: 'message', data: { text: 'one' } });
        await connector(beta.id, 'slack', { event: 'message', data: { text: 'two' } });
        assert.equal((await runsOf(betaMessage)).length, before + 2);
      });
    });
  });
}
