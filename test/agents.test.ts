import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { comment, messageText, repliesBy, threadOf } from './support/agents.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import {
  errorReply,
  startModelServer,
  textReply,
  toolCallReply,
  type ModelServer,
} from './support/model-server.ts';
import { ok } from './support/results.ts';

const until = async (what: string, check: () => boolean | Promise<boolean>, ms = 10_000) => {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((done) => setTimeout(done, 20));
  }
};

for (const db of DATABASES) {
  describe(`agents answering mentions on ${db.name}`, () => {
    let model: ModelServer;
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    let bob: ToolCaller;
    let ids: Record<string, string>;

    before(async () => {
      model = await startModelServer();
      h = await setup(db);
      ids = acme(h).artifacts;
      engine = createEngine(h.services, {
        leaseMs: 5000,
        model: { url: model.url, key: 'sk-agents', model: 'test-model' },
        agents: { timeoutMs: 1500 },
      });
      ada = await h.as('ada@acme.test');
      bob = await h.as('bob@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
      await model.close();
    });

    beforeEach(() => model.reset());

    it('@Assistant replies in the thread with the model’s text, having seen the comment and the document', async () => {
      model.replies.push(() => textReply('It asks the team to **ship it**.'));
      const asked = await comment(ada, ids.roadmap!, '@Assistant what does this roadmap ask for?');
      assert.deepEqual(asked.agents_requested, ['Assistant']);

      await engine.drain();
      const thread = await threadOf(ada, ids.roadmap!, asked.thread_id);
      assert.deepEqual(
        thread.replies.map((r) => [r.author_label, r.body]),
        [['Assistant', 'It asks the team to **ship it**.']],
      );
      assert.equal(model.requests.length, 1);
      const request = model.requests[0]!;
      assert.equal(request.stream, true, 'the assistant streams its answer');
      assert.equal(model.headers[0]!.authorization, 'Bearer sk-agents');
      const sent = messageText(request);
      assert.ok(sent.includes('what does this roadmap ask for?'), 'the model saw the comment');
      assert.ok(sent.includes('# Roadmap\n\nShip it.'), 'the model saw the document’s markdown');

      // The app can show the request and its reply; the person's history records them.
      const { requests } = await h.services.agents.requests(h.actor('ada@acme.test'), {
        document_id: ids.roadmap,
        thread_id: asked.thread_id,
      });
      assert.equal(requests.length, 1);
      assert.equal(requests[0]!.status, 'answered');
      assert.equal(requests[0]!.reply_comment_id, thread.replies[0]!.comment_id);
      const history = await h.services.activity.list(h.actor('ada@acme.test'));
      const byAgent = history.filter((r) => r.agent === 'Assistant').map((r) => `${r.tool}:${r.outcome}`);
      for (const entry of ['agent_request:ok', 'read_comments:ok', 'read_document:ok', 'agent_reply:ok']) {
        assert.ok(byAgent.includes(entry), `${entry} in ${JSON.stringify(byAgent)}`);
      }
    });

    it('reads more of a long document through its tool, as the person', async () => {
      const long = Array.from({ length: 900 }, (_, i) => `Line ${i} of the long plan.`).join('\n');
      const created = ok(
        await ada.call('create_document', {
          title: 'Long plan',
          scope: 'org',
          content_markdown: `${long}\n\nThe tail says: launch on Friday.\n`,
        }),
      );
      model.replies.push(
        () => toolCallReply('read_artifact', { offset: 20_000, window: 8000 }),
        () => textReply('It launches on Friday.'),
      );
      const asked = await comment(bob, created.document_id as string, '@Assistant when do we launch?');
      await engine.drain();

      const first = messageText(model.requests[0]!);
      assert.ok(!first.includes('launch on Friday'), 'only the start of a long document is sent up front');
      assert.ok(first.includes('Line 0 of the long plan.'));
      assert.ok(messageText(model.requests[1]!).includes('launch on Friday'), 'the tool read the tail');
      const thread = await threadOf(bob, created.document_id as string, asked.thread_id);
      assert.deepEqual(
        repliesBy(thread, 'Assistant').map((r) => r.body),
        ['It launches on Friday.'],
      );
    });

    it('a retired handle reaches the assistant', async () => {
      model.replies.push(() => textReply('The priority is shipping.'));
      const asked = await comment(ada, ids.roadmap!, '@PM what is the priority here?');
      assert.deepEqual(asked.agents_requested, ['Assistant']);
      await engine.drain();
      const thread = await threadOf(ada, ids.roadmap!, asked.thread_id);
      assert.deepEqual(
        repliesBy(thread, 'Assistant').map((r) => r.body),
        ['The priority is shipping.'],
      );
    });

    it('a reply mentioning @Assistant gets one reply, and a reply of the agent mentioning @Assistant triggers nothing', async () => {
      const started = await comment(ada, ids.budget!, 'Is the laptop within budget?');
      await engine.drain();
      assert.equal(model.requests.length, 0, 'a thread without a mention asks no agent');

      model.replies.push(() => textReply('Yes: 1200. Ask @Assistant or @PM again if it changes.'));
      await comment(
        bob,
        ids.budget!,
        '@Assistant and @Research, please check the laptop line.',
        started.thread_id,
      );
      await engine.drain();
      await engine.drain();
      const thread = await threadOf(ada, ids.budget!, started.thread_id);
      assert.deepEqual(
        thread.replies.map((r) => r.author_label),
        ['Bob Stone', 'Assistant'],
        'one reply to one mention, and none to the agent’s own mention',
      );
      assert.equal(model.requests.length, 1);
      assert.ok(messageText(model.requests[0]!).includes('| Laptop | 1200 |'), 'the table’s projection');
    });

    it('a run’s comment mentioning @Assistant is answered like a person’s', async () => {
      model.replies.push(() => textReply('The roadmap says: ship it.'));
      const drafted = await h.services.automations.draft(h.actor('ada@acme.test'), {
        plan_json: {
          planVersion: 1,
          name: 'Ask the assistant',
          description: 'Asks the assistant about the roadmap.',
          nodes: [
            {
              id: 'ask',
              kind: 'capability',
              capability: 'comments.add_comment',
              input: {
                document_id: { kind: 'literal', value: ids.roadmap },
                body: { kind: 'literal', value: '@Assistant what does the roadmap say?' },
              },
            },
          ],
          edges: [],
        },
        ask: 'Ask the assistant about the roadmap.',
        write_approval: 'automatic',
      });
      const published = await h.services.automations.publish(h.actor('ada@acme.test'), {
        flow_version_id: drafted.flow_version_id,
        name: 'Ask the assistant',
        trigger: { kind: 'connector_event', provider: 'workspace', event: 'page.written' },
      });
      const run = await h.services.automations.run(h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
      });
      await engine.drain();
      const read = await h.services.automations.read(h.actor('ada@acme.test'), {
        automation_id: published.automation_id,
        run_id: run.run_id,
      });
      const output = (read.run as { output?: { ask?: { thread_id?: string } } }).output;
      const threadId = output?.ask?.thread_id;
      assert.ok(threadId, `the run commented: ${JSON.stringify(read.run)}`);
      const thread = await threadOf(ada, ids.roadmap!, threadId);
      assert.deepEqual(
        thread.replies.map((r) => [r.author_label, r.body]),
        [['Assistant', 'The roadmap says: ship it.']],
      );
    });

    it('without a model, replies at once that the assistant is not set up and that an admin can connect one in Settings', async () => {
      const unconfigured = createEngine(h.services, { leaseMs: 5000 });
      try {
        const asked = await comment(ada, ids.roadmap!, '@Assistant summarise this, please.');
        await unconfigured.drain();
        const [reply] = repliesBy(await threadOf(ada, ids.roadmap!, asked.thread_id), 'Assistant');
        assert.ok(reply, 'the assistant replied');
        assert.equal(
          reply.body,
          "The assistant isn't set up in this workspace yet; an admin can connect a model in Settings.",
        );
        // Operator detail is for the log and Settings, not for people.
        assert.doesNotMatch(reply.body, /TANDEM_MODEL|`/);
        assert.equal(model.requests.length, 0);
      } finally {
        await unconfigured.stop();
      }
    });

    it('a model failure or timeout is a reply saying the request failed, and the thread can ask again', async () => {
      model.fallback = () => errorReply(500, 'the model is down');
      const asked = await comment(ada, ids.roadmap!, '@Assistant what is next?');
      await engine.drain();
      let replies = repliesBy(await threadOf(ada, ids.roadmap!, asked.thread_id), 'Assistant');
      assert.equal(replies.length, 1);
      assert.match(replies[0]!.body, /this request failed/);
      assert.match(replies[0]!.body, /Mention @Assistant again/);

      model.fallback = () => ({ ...textReply('too late'), delayMs: 5000 });
      await comment(ada, ids.roadmap!, '@Assistant and now?', asked.thread_id);
      await engine.drain();
      replies = repliesBy(await threadOf(ada, ids.roadmap!, asked.thread_id), 'Assistant');
      assert.equal(replies.length, 2);
      assert.match(replies[1]!.body, /did not answer within 1\.5 s/);

      model.fallback = () => textReply('Next is the launch.');
      await comment(ada, ids.roadmap!, '@Assistant once more?', asked.thread_id);
      await engine.drain();
      replies = repliesBy(await threadOf(ada, ids.roadmap!, asked.thread_id), 'Assistant');
      assert.deepEqual(replies.at(-1)?.body, 'Next is the launch.');
    });

    it('never sends the text of a document the person asking cannot open', async () => {
      ok(
        await ada.call('edit_document', {
          document_id: ids.plan,
          mode: 'append',
          content_markdown: 'The secret launch date is the twelfth of May.\n',
        }),
      );
      const asked = await comment(bob, ids.plan!, '@Assistant when is the launch?');
      // Bob loses his role on the private plan before any worker takes the request.
      const bobId = h.actor('bob@acme.test').personId;
      await h.services.deps.db
        .deleteFrom('artifact_roles')
        .where('artifact_id', '=', ids.plan!)
        .where('person_id', '=', bobId)
        .execute();
      await engine.drain();

      assert.equal(model.requests.length, 0, 'nothing was sent to the model');
      const [reply] = repliesBy(await threadOf(ada, ids.plan!, asked.thread_id), 'Assistant');
      assert.ok(reply);
      assert.match(reply.body, /Bob Stone can no longer open this/);
      assert.ok(!reply.body.includes('twelfth'));
    });

    it('answers at most the workspace’s limit at once and queues the rest', async () => {
      const limited = createEngine(h.services, {
        leaseMs: 5000,
        model: { url: model.url, model: 'test-model' },
        agents: { perWorkspace: 2 },
      });
      try {
        model.fallback = () => ({ ...textReply('Done.'), delayMs: 300 });
        const threads: { thread_id: string }[] = [];
        for (const n of [1, 2, 3]) threads.push(await comment(ada, ids.roadmap!, `@Assistant question ${n}`));
        const draining = limited.drain();
        await until('two calls to the model', () => model.requests.length >= 2);
        const { requests } = await h.services.agents.requests(h.actor('ada@acme.test'), {
          document_id: ids.roadmap,
        });
        const mine = requests.filter((r) => threads.some((t) => t.thread_id === r.thread_id));
        assert.deepEqual(mine.map((r) => r.status).sort(), ['answering', 'answering', 'pending']);
        await draining;
        assert.equal(model.maxInFlight, 2);
        assert.equal(model.requests.length, 3);
        for (const t of threads) {
          assert.equal(repliesBy(await threadOf(ada, ids.roadmap!, t.thread_id), 'Assistant').length, 1);
        }
      } finally {
        await limited.stop();
      }
    });
  });
}
