import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { describeItService } from '../src/domains/agents/describe-it.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';
import { errorReply, startModelServer, textReply, type ModelServer } from './support/model-server.ts';
import {
  approval,
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  transform,
} from './support/automations.ts';

async function settled(h: Harness, start: { request_id: string }, email: string) {
  for (;;) {
    const now = await h.services.describeIt.status(h.actor(email), start.request_id);
    if (now.status !== 'drafting') return now;
    await new Promise((r) => setTimeout(r, 20));
  }
}

for (const db of DATABASES) {
  describe(`Describe it on ${db.name}`, () => {
    let model: ModelServer;
    let h: Harness;
    before(async () => {
      model = await startModelServer();
      h = await setup(db, { builder: { model: { url: model.url, model: 'test-model' }, timeoutMs: 10_000 } });
    });
    after(async () => {
      await h?.close();
      await model?.close();
    });

    it('answers at once and keeps where the drafting stands in the database, for its person alone', async () => {
      const roadmap = acme(h).artifacts.roadmap!;
      const nodes = [
        capability('read', 'documents.read_document', { document_id: lit(roadmap) }),
        transform(
          'digest',
          'template',
          { text: ref('read', 'markdown') },
          { template: 'This week: {{text}}' },
        ),
        approval('ok'),
        postMessage('post', ref('digest', 'text')),
      ];
      model.replies.push(() =>
        textReply(
          JSON.stringify({
            ask: 'Post the roadmap every week.',
            write_approval: 'required',
            plan: plan('Roadmap digest', nodes, chain(...nodes.map((n) => n.id))),
          }),
        ),
      );
      const ada = h.actor('ada@acme.test');
      const start = await h.services.describeIt.start(ada, 'Post the roadmap every week.');
      assert.equal(start.status, 'drafting');
      const done = await settled(h, start, 'ada@acme.test');
      assert.equal(done.status, 'drafted', JSON.stringify(done));

      // Another instance over the same database reads the same outcome.
      const elsewhere = describeItService({
        automations: h.services.automations,
        activity: h.services.activity,
        db: h.services.storage.db,
        modelFor: async () => undefined,
      });
      assert.deepEqual(await elsewhere.status(ada, start.request_id), done);
      await assert.rejects(
        h.services.describeIt.status(h.actor('bob@acme.test'), start.request_id),
        /not known/,
      );
      await assert.rejects(h.services.describeIt.status(ada, 'dsc_nothing'), /not known/);
    });

    it('says in one sentence when the model fails, and when the process that drafted went away', async () => {
      model.replies.push(() => errorReply(500, 'the model is down'));
      model.replies.push(() => errorReply(500, 'the model is down'));
      model.replies.push(() => errorReply(500, 'the model is down'));
      model.replies.push(() => errorReply(500, 'the model is down'));
      const ada = h.actor('ada@acme.test');
      const failed = await settled(
        h,
        await h.services.describeIt.start(ada, 'Post it weekly.'),
        'ada@acme.test',
      );
      assert.equal(failed.status, 'failed');
      assert.match((failed as { error: string }).error, /could not reach the model|try again/);

      await h.services.storage.db
        .insertInto('describe_requests')
        .values({
          id: 'dsc_lost',
          workspace_id: ada.workspaceId,
          person_id: ada.personId,
          status: 'drafting',
          flow_version_id: null,
          error: null,
          created_at: Date.now() - 60 * 60_000,
          ended_at: null,
        })
        .execute();
      const lost = await h.services.describeIt.status(ada, 'dsc_lost');
      assert.equal(lost.status, 'failed');
      assert.match((lost as { error: string }).error, /stopped before it finished/);
    });

    it('refuses an empty or overlong sentence at once, storing nothing', async () => {
      const ada = h.actor('ada@acme.test');
      const before = await h.services.storage.db.selectFrom('describe_requests').select('id').execute();
      await assert.rejects(h.services.describeIt.start(ada, '  '), /Describe the automation in a sentence/);
      await assert.rejects(h.services.describeIt.start(ada, 'x'.repeat(2001)), /at most 2000 characters/);
      const now = await h.services.storage.db.selectFrom('describe_requests').select('id').execute();
      assert.equal(now.length, before.length);
    });
  });
}
