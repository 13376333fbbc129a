import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { comment, messageText, repliesBy, threadOf } from './support/agents.ts';
import {
  approval,
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  transform,
  WEEKLY,
} from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { startModelServer, textReply, type ModelServer } from './support/model-server.ts';
import { ok } from './support/results.ts';

/** A weekly digest of a document, posted after an approval (or, without `guarded`, unguarded). */
function digestPlan(name: string, documentId: string, guarded = true) {
  const nodes = [
    capability('read', 'documents.read_document', { document_id: lit(documentId) }),
    transform('digest', 'template', { text: ref('read', 'markdown') }, { template: 'This week: {{text}}' }),
    ...(guarded ? [approval('ok')] : []),
    postMessage('post', ref('digest', 'text')),
  ];
  return plan(name, nodes, chain(...nodes.map((n) => n.id)));
}

const answer = (planJson: unknown) =>
  textReply(
    JSON.stringify({
      ask: 'Post a digest of the roadmap every week.',
      write_approval: 'required',
      plan: planJson,
    }),
  );

for (const db of DATABASES) {
  describe(`@Builder on ${db.name}`, () => {
    let model: ModelServer;
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    let roadmap: string;

    before(async () => {
      model = await startModelServer();
      h = await setup(db);
      roadmap = acme(h).artifacts.roadmap!;
      engine = createEngine(h.services, { leaseMs: 5000, model: { url: model.url, model: 'test-model' } });
      ada = await h.as('ada@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
      await model.close();
    });

    beforeEach(() => model.reset());

    const counts = async () => {
      const db = h.services.deps.db;
      const [automations, runs] = await Promise.all([
        db
          .selectFrom('automations')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
        db
          .selectFrom('runs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow(),
      ]);
      return { automations: Number(automations.n), runs: Number(runs.n) };
    };
    const draftsOf = async (email: string) => (await h.services.drafts.list(h.actor(email))).drafts;

    it('drafts the model’s plan as the person and replies with its steps, writes and a link; it publishes nothing', async () => {
      const before = await counts();
      model.replies.push(() => answer(digestPlan('Weekly roadmap digest', roadmap)));
      const asked = await comment(
        ada,
        roadmap,
        '@Builder every Monday, post a digest of this roadmap to the team',
      );
      assert.deepEqual(asked.agents_requested, ['Builder']);
      await engine.drain();

      assert.equal(model.requests.length, 1);
      const sent = messageText(model.requests[0]!);
      assert.notEqual(model.requests[0]!.stream, true);
      assert.ok(sent.includes('post a digest of this roadmap'), 'the model saw the request');
      assert.ok(sent.includes('documents.read_document'), 'describe_capabilities guides the model');
      assert.ok(sent.includes('planVersion'), 'the plan schema guides the model');
      assert.ok(sent.includes(roadmap), 'the model knows which document the thread is on');

      const drafts = await draftsOf('ada@acme.test');
      assert.equal(drafts.length, 1, 'the draft is listed for its author');
      const draft = drafts[0]!;
      assert.equal(draft.ask, 'Post a digest of the roadmap every week.');
      assert.deepEqual((await draftsOf('bob@acme.test')).length, 0, 'and for nobody else');
      await assert.rejects(
        h.services.drafts.read(h.actor('bob@acme.test'), draft.flow_version_id),
        /Draft not found/,
      );

      const [reply] = repliesBy(await threadOf(ada, roadmap, asked.thread_id), 'Builder');
      assert.ok(reply, 'the Builder replied in the thread');
      assert.ok(reply.body.includes('**Weekly roadmap digest**'), reply.body);
      for (const step of draft.steps) assert.ok(reply.body.includes(step), `the reply lists "${step}"`);
      assert.ok(
        draft.writes.length > 0 && draft.writes.every((w) => reply.body.includes(w)),
        'and the writes',
      );
      assert.ok(reply.body.includes(draft.url), 'and links to the draft');
      assert.match(draft.url, /\/automations\/drafts\/fv_/);
      assert.deepEqual(await counts(), before, 'nothing was published or run');
      assert.equal(
        ((ok(await ada.call('list_automations', {})).automations as unknown[]) ?? []).length,
        before.automations,
      );

      // The person publishes it in the app; only then is it an automation to read.
      const published = ok(
        await ada.call('edit_automation', {
          action: 'publish',
          flow_version_id: draft.flow_version_id,
          name: 'Roadmap digest',
          trigger: WEEKLY,
        }),
      );
      const read = ok(await ada.call('read_automation', { automation_id: published.automation_id }));
      assert.equal(read.name, 'Roadmap digest');
      const { versions } = await h.services.automationViews.versions(h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      assert.equal(versions[0]?.made_by, 'agent', 'the Builder made the version, for Ada');
      assert.equal((await draftsOf('ada@acme.test')).length, 0, 'a published draft is no longer a draft');

      const history = await h.services.activity.list(h.actor('ada@acme.test'));
      const byBuilder = history.filter((r) => r.agent === 'Builder').map((r) => `${r.tool}:${r.outcome}`);
      for (const entry of [
        'agent_request:ok',
        'describe_capabilities:ok',
        'draft_automation:ok',
        'agent_reply:ok',
      ]) {
        assert.ok(byBuilder.includes(entry), `${entry} in ${JSON.stringify(byBuilder)}`);
      }
    });

    it('sends the validator’s errors back and stores the repaired plan', async () => {
      const before = await counts();
      model.replies.push(
        () => answer(digestPlan('Unguarded digest', roadmap, false)),
        () => ({ ...answer(digestPlan('Repaired digest', roadmap)) }),
      );
      const asked = await comment(ada, roadmap, '@Builder post this roadmap to the team every week');
      await engine.drain();

      assert.equal(model.requests.length, 2, 'one repair');
      const repair = messageText(model.requests[1]!);
      assert.ok(repair.includes('write/needs-approval'), 'the validator’s error went back to the model');
      assert.ok(repair.includes('Unguarded digest'), 'with the model’s first answer');
      const drafts = await draftsOf('ada@acme.test');
      assert.equal(drafts.length, 1, 'only the repaired plan was stored');
      const stored = await h.services.drafts.read(h.actor('ada@acme.test'), drafts[0]!.flow_version_id);
      assert.equal(stored.plan_json.name, 'Repaired digest');
      assert.deepEqual(
        (stored.plan_json.nodes as { id: string }[]).map((n) => n.id),
        ['read', 'digest', 'ok', 'post'],
      );
      const [reply] = repliesBy(await threadOf(ada, roadmap, asked.thread_id), 'Builder');
      assert.ok(reply?.body.includes('**Repaired digest**'));
      assert.deepEqual(await counts(), before, 'nothing was published or run');
    });

    it('gives up after three repairs with a reply naming the last problem, and stores nothing', async () => {
      model.fallback = () => textReply('You probably want a weekly digest.');
      const before = (await draftsOf('ada@acme.test')).length;
      const asked = await comment(ada, roadmap, '@Builder make me something');
      await engine.drain();

      assert.equal(model.requests.length, 4, 'the first answer and three repairs');
      assert.ok(messageText(model.requests[3]!).includes('not a JSON object'));
      assert.equal((await draftsOf('ada@acme.test')).length, before);
      const [reply] = repliesBy(await threadOf(ada, roadmap, asked.thread_id), 'Builder');
      assert.match(reply?.body ?? '', /could not draft an automation/);
      assert.match(reply?.body ?? '', /Mention @Builder again/);
    });
  });
}
