import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { DomainError } from '../src/errors.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';
import { startModelServer, textReply, type ModelServer } from './support/model-server.ts';

const KEY = 'sk-model-settings-key-9876';
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' };

const refused = (code: string, message?: RegExp) => (error: unknown) => {
  assert.ok(error instanceof DomainError, String(error));
  assert.equal(error.code, code);
  if (message) assert.match(error.message, message);
  return true;
};

for (const db of DATABASES) {
  describe(`the workspace's model on ${db.name}`, () => {
    let h: Harness;
    let model: ModelServer;
    let engine: Engine;
    let allow: string[];
    const ada = () => h.actor('ada@acme.test');
    const bob = () => h.actor('bob@acme.test');
    const rows = () => h.services.deps.db.selectFrom('workspace_models').selectAll().execute();

    before(async () => {
      model = await startModelServer();
      allow = [new URL(model.url).host];
      h = await setup(db);
      // No server model: only what a workspace connects answers.
      engine = createEngine(h.services, { leaseMs: 5000 });
    });
    after(async () => {
      await engine.stop();
      await h.close();
      await model.close();
    });
    beforeEach(() => model.reset());

    it('refuses bad input in one line and stores nothing', async () => {
      const models = h.services.models;
      const cases: [unknown, RegExp][] = [
        [{ model: 'm' }, /^url is required/],
        [{ url: 42, model: 'm' }, /^url must be a string$/],
        [{ url: 'not a url', model: 'm' }, /^url is not an absolute URL/],
        [{ url: 'ftp://example.com/v1', model: 'm' }, /^url uses the ftp scheme/],
        [{ url: 'https://u:p@example.com/v1', model: 'm' }, /user name or password/],
        [{ url: model.url }, /^model is required$/],
        [{ url: model.url, model: 'm', key: 7 }, /^key must be a string$/],
        [{ url: 'http://10.0.0.8/v1', model: 'm' }, /not on the allow list/],
        ['text', /^send \{url, model, key\?\}$/],
      ];
      for (const [body, message] of cases) {
        await assert.rejects(models.save(ada(), body, { allow }), refused('invalid_argument', message));
      }
      assert.deepEqual(await rows(), []);
    });

    it('only an admin sees, changes, tests or disconnects it', async () => {
      const models = h.services.models;
      const body = { url: model.url, model: 'test-model', key: KEY };
      await assert.rejects(models.view(bob()), refused('forbidden'));
      await assert.rejects(models.save(bob(), body, { allow }), refused('forbidden'));
      await assert.rejects(models.test(bob(), { allow }), refused('forbidden'));
      await assert.rejects(models.disconnect(bob()), refused('forbidden'));
      assert.deepEqual(await rows(), []);
      assert.equal(model.requests.length, 0);
    });

    it('seals the key, shows it only as set, keeps it when left out and clears it with null', async () => {
      const models = h.services.models;
      const saved = await models.save(
        ada(),
        { url: `${model.url}/`, model: 'test-model', key: KEY },
        { allow },
      );
      assert.deepEqual(
        { ...saved, how: undefined },
        {
          configured: true,
          source: 'workspace',
          url: model.url,
          model: 'test-model',
          key: 'set',
          how: undefined,
        },
      );
      assert.doesNotMatch(JSON.stringify(await rows()), new RegExp(KEY));
      const workspaceId = ada().workspaceId;
      assert.equal((await models.configFor(workspaceId))?.key, KEY);
      // Another workspace has none.
      assert.equal(await models.configFor(h.ids.Other!.id), undefined);

      const renamed = await models.save(ada(), { url: model.url, model: 'other-model' }, { allow });
      assert.equal(renamed.key, 'set');
      assert.equal((await models.configFor(workspaceId))?.key, KEY);
      const cleared = await models.save(
        ada(),
        { url: model.url, model: 'other-model', key: null },
        { allow },
      );
      assert.equal(cleared.key, 'not set');
      assert.equal((await models.configFor(workspaceId))?.key, undefined);
      await models.disconnect(ada());
      assert.deepEqual(await rows(), []);
      assert.equal((await models.view(ada())).source, 'none');
    });

    it('an agent step answers through the workspace’s model, without a restart', async () => {
      await h.services.models.save(ada(), { url: model.url, model: 'test-model', key: KEY }, { allow });
      model.replies.push(() => textReply('A quiet week.'));
      const drafted = await h.services.automations.draft(ada(), {
        plan_json: {
          planVersion: 1,
          name: 'Weekly line',
          description: 'Weekly line.',
          nodes: [{ id: 'think', kind: 'agent', instructions: { kind: 'literal', value: 'One line.' } }],
          edges: [],
        },
        ask: 'Summarise the week.',
      });
      const published = await h.services.automations.publish(ada(), {
        flow_version_id: drafted.flow_version_id,
        name: 'Weekly line',
        trigger: WEEKLY,
      });
      const started = await h.services.automations.run(ada(), { automation_id: published.automation_id });
      await engine.drain();
      const read = await h.services.automations.read(ada(), {
        automation_id: published.automation_id,
        run_id: started.run_id,
      });
      assert.equal(read.run?.status, 'succeeded', JSON.stringify(read.run));
      assert.equal(model.requests.length, 1);
      assert.equal(model.requests[0]!.model, 'test-model');
      assert.equal(model.headers[0]!.authorization, `Bearer ${KEY}`);
      await h.services.models.disconnect(ada());
    });
  });
}
