import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, beforeEach, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { comment, repliesBy, threadOf } from './support/agents.ts';
import { automationHelpers, chain, lit, plan, ref } from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { errorReply, startModelServer, textReply, type ModelServer } from './support/model-server.ts';

/** The model key, with characters that JSON and URLs write differently. */
const KEY = 'sk-live-Tandem/Key+9f8e7d6c5b4a"quoted"';
/** Every form a service might quote it in. */
const FORMS = [KEY, JSON.stringify(KEY).slice(1, -1), encodeURIComponent(KEY)];

/** The way OpenAI-compatible endpoints refuse a key: quoting it back, in every form. */
const refusesKey = () =>
  errorReply(
    401,
    `Incorrect API key provided: ${KEY}. You can find your API key at https://models.example/keys?given=${encodeURIComponent(KEY)}`,
  );

/** The part of the key that reads the same in every form: none of it may show anywhere. */
const CANARY = '9f8e7d6c5b4a';

function assertNoKey(text: unknown, where: string) {
  const s = typeof text === 'string' ? text : JSON.stringify(text);
  assert.ok(!s.includes(CANARY), `${where} holds the key: ${s}`);
}

const agentStep = (id: string) => ({
  id,
  kind: 'agent',
  instructions: lit('Summarise the week in one line.'),
});

for (const db of DATABASES) {
  describe(`the model key stays masked (${db.name})`, () => {
    let model: ModelServer;
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    const a = automationHelpers(
      () => h,
      () => engine,
    );

    before(async () => {
      model = await startModelServer();
      h = await setup(db);
      engine = createEngine(h.services, {
        leaseMs: 5000,
        model: { url: model.url, key: KEY, model: 'test-model' },
      });
      ada = await h.as('ada@acme.test');
    });
    after(async () => {
      await engine.stop();
      await h.close();
      await model.close();
    });
    beforeEach(() => model.reset());

    /** Every stored text a person or agent can come to read, for one automation's run. */
    async function storedTexts(runId: string, sessionId: string) {
      const d = h.services.deps.db;
      const [run, nodes, messages, notices] = await Promise.all([
        d
          .selectFrom('runs')
          .select(['error', 'output_json'])
          .where('id', '=', runId)
          .executeTakeFirstOrThrow(),
        d.selectFrom('run_nodes').select(['error', 'output_json']).where('run_id', '=', runId).execute(),
        d
          .selectFrom('messages')
          .select(['body', 'card_json'])
          .where('conversation_id', '=', sessionId)
          .execute(),
        d.selectFrom('notifications').select('body').where('run_id', '=', runId).execute(),
      ]);
      return { run, nodes, messages, notices };
    }

    it('a model endpoint that quotes the key in its error leaks it into no run error, session or notification', async () => {
      model.fallback = refusesKey;
      const automation = await a.publish(ada, plan('Weekly line', [agentStep('think')]), {
        notify: 'problems',
      });
      const run = await a.runToEnd(ada, automation);
      assert.equal(run.status, 'failed');
      assert.equal(model.headers[0]?.authorization, `Bearer ${KEY}`, 'the endpoint was sent the key');
      assert.match(run.error ?? '', /Incorrect API key provided: \[secret\]/);
      assert.match(a.nodeOf(run, 'think').error ?? '', /\[secret\]/);
      const stored = await storedTexts(run.run_id, automation.session_id);
      assertNoKey(stored, 'the stored run, its session and its notification');
      assert.ok(
        stored.notices.length === 1 && stored.notices[0]!.body.includes('[secret]'),
        'the creator was told',
      );
      assert.ok(
        stored.messages.some((m) => m.body.includes('[secret]')),
        'the session was told',
      );
    });

    it('an answer that quotes the key, in any form, is masked in the step’s output and in what later steps send', async () => {
      model.fallback = () => textReply(`Here is what you sent: ${FORMS.join(' | ')}`);
      const nodes = [
        agentStep('think'),
        { id: 'tell', kind: 'notify', to: 'creator', message: ref('think', 'text') },
        {
          id: 'post',
          kind: 'capability',
          capability: 'conversations.post_message',
          input: { text: ref('think', 'text') },
        },
      ];
      const automation = await a.publish(ada, plan('Echo', nodes, chain('think', 'tell', 'post')), {
        write_approval: 'automatic',
      });
      const run = await a.runToEnd(ada, automation);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      const stored = await storedTexts(run.run_id, automation.session_id);
      assertNoKey(stored, 'the run’s outputs and what it sent');
      const sent = await h.services.deps.db
        .selectFrom('notifications')
        .select('body')
        .where('automation_id', '=', automation.automation_id)
        .execute();
      assert.ok(sent.length > 0);
      assertNoKey(sent, 'the notify step’s notification');
      assert.match(sent[0]!.body, /\[secret\] \| \[secret\] \| \[secret\]/);
    });

    it('an @Assistant reply carries the key neither from the answer nor from a failure', async () => {
      const roadmap = acme(h).artifacts.roadmap!;
      model.fallback = () => textReply(`The header said Bearer ${KEY}.`);
      const echoed = await comment(ada, roadmap, '@Assistant what did you send?');
      await engine.drain();
      const [reply] = repliesBy(await threadOf(ada, roadmap, echoed.thread_id), 'Assistant');
      assert.equal(reply?.body, 'The header said Bearer [secret].');

      model.fallback = refusesKey;
      const failed = await comment(ada, roadmap, '@Assistant and now?');
      await engine.drain();
      const [apology] = repliesBy(await threadOf(ada, roadmap, failed.thread_id), 'Assistant');
      assert.match(apology?.body ?? '', /failed/);
      const requests = await h.services.deps.db
        .selectFrom('agent_requests')
        .select(['error'])
        .where('thread_id', 'in', [echoed.thread_id, failed.thread_id])
        .execute();
      assertNoKey(requests, 'the stored request errors');
      assert.ok(requests.some((r) => r.error?.includes('[secret]')));
    });
  });
}

describe('the model key in logs', () => {
  let model: ModelServer;
  before(async () => {
    model = await startModelServer();
  });
  after(() => model.close());

  it('never reaches a log line, whatever field or form it is in', async () => {
    model.fallback = refusesKey;
    const root = fileURLToPath(new URL('..', import.meta.url));
    // A process of its own, so its log lines (written straight to standard error) can be read.
    const script = `
      import { log } from '${root}src/observability/log.ts';
      import { chat } from '${root}src/model/model.ts';
      const config = { url: process.env.MODEL_URL, key: process.env.MODEL_KEY, model: 'test-model' };
      try {
        await chat(config, { instructions: 'x', messages: [{ role: 'user', content: 'hi' }], timeoutMs: 5000 });
      } catch (error) {
        log.error({ err: error, request: { url: config.url + '?key=' + encodeURIComponent(config.key) } }, 'the model call failed');
      }
      log.warn({ apiKey: config.key, quoted: JSON.stringify(config.key) }, 'sent ' + config.key);
      log.flush();
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      env: { ...process.env, MODEL_URL: model.url, MODEL_KEY: KEY, LOG_LEVEL: 'info' },
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, stderr);
    const lines = stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 2, stderr);
    assertNoKey(stderr, 'standard error');
    assert.match(JSON.stringify(lines[0]), /Incorrect API key provided: \[secret\]/);
    assert.equal(lines[1]!.apiKey, '[secret]');
    assert.equal(lines[1]!.msg, 'sent [secret]');
  });
});
