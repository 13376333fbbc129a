import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { StepError, DomainError } from '../src/errors.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness, type ToolCaller } from './support/harness.ts';
import {
  automationHelpers,
  capability,
  chain,
  lit,
  plan,
  ref,
  transform,
  trig,
  WEEKLY,
  type ConnectorCall,
  STAND_IN_ISSUE,
} from './support/automations.ts';
import { ok } from './support/results.ts';

/** The refusal a promise ends in, as code and sentence. */
async function refusal(promise: Promise<unknown>): Promise<[string, string]> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof DomainError, `a refusal, not ${String(error)}`);
    return [error.code, error.message];
  }
  assert.fail('expected a refusal');
}

for (const db of DATABASES) {
  describe(`retrying and replaying runs on ${db.name}`, () => {
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    /** Who the stand-in tracker was asked to file, in order, and what its reads do now. */
    let filed: string[] = [];
    let getIssue: ConnectorCall = async () => STAND_IN_ISSUE;
    let fileIssue: ConnectorCall = async (input) => {
      filed.push(String(input.title));
      return { number: filed.length, url: `https://example.test/${filed.length}` };
    };
    const t = automationHelpers(
      () => h,
      () => engine,
    );
    const actor = (email = 'ada@acme.test') => h.actor(email);
    const reruns = () => h.services.reruns;
    const inspect = (automationId: string, runId: string) =>
      h.services.automationViews.inspectRun(actor(), { automation_id: automationId, run_id: runId });

    before(async () => {
      h = await setup(db);
      engine = createEngine(h.services, {
        leaseMs: 5000,
        connectorCalls: {
          'github.get_issue': (input, ctx) => getIssue(input, ctx),
          'github.create_issue': (input, ctx) => fileIssue(input, ctx),
        },
      });
      ada = await h.as('ada@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
    });

    const file = (id: string, title: unknown) =>
      capability(id, 'github.create_issue', { repo: lit('acme/app'), title });
    const check = (id: string) =>
      capability(id, 'github.get_issue', { repo: lit('acme/app'), number: lit(7) });

    /** File, then check (which fails on the first run), then a note. */
    const fileThenCheck = () =>
      plan(
        'File then check',
        [
          file('file', lit('Once')),
          check('check'),
          transform('note', 'template', { t: ref('check', 'title') }, { template: 'Checked {{t}}' }),
        ],
        chain('file', 'check', 'note'),
      );

    it('retries a failed run from its failed step: finished steps and their writes are not repeated', async () => {
      filed = [];
      getIssue = async () => {
        throw new StepError('the tracker is down', { retryable: true });
      };
      const a = await t.publish(ada, fileThenCheck(), { write_approval: 'automatic' });
      const first = await t.runToEnd(ada, a);
      assert.equal(first.status, 'failed');
      assert.deepEqual(filed, ['Once']);

      const preview = await reruns().preview(actor(), {
        automation_id: a.automation_id,
        run_id: first.run_id,
      });
      assert.deepEqual(preview.retry, {
        available: true,
        version: 1,
        live_version: 1,
        steps: ['check', 'note'],
        writes_again: [],
      });
      assert.deepEqual(preview.replay.writes_again, [{ node_id: 'file', capability: 'github.create_issue' }]);
      assert.deepEqual(preview.replay.steps, ['file', 'check', 'note']);

      getIssue = async () => STAND_IN_ISSUE;
      const retried = await reruns().rerun(actor(), {
        automation_id: a.automation_id,
        run_id: first.run_id,
        mode: 'retry',
      });
      assert.deepEqual([retried.action, retried.rerun_of, retried.version], ['retry', first.run_id, 1]);
      await engine.drain();
      const second = await t.readRun(ada, a, retried.run_id);
      assert.equal(second.status, 'succeeded');
      assert.equal(second.cause, 'retry');
      assert.deepEqual(second.output, { note: { text: 'Checked Flaky' } });
      assert.deepEqual(filed, ['Once'], 'the write that had happened was not made again');
      const shown = await inspect(a.automation_id, retried.run_id);
      assert.equal(shown?.rerun_of, first.run_id);
      const check2 = shown?.nodes.find((n) => n.node_id === 'check');
      assert.deepEqual(check2?.input, { input: { repo: 'acme/app', number: 7 } }, 'the step’s input is kept');
      assert.equal(check2?.attempt, 1);

      // A run that succeeded is not retried; it can be replayed, and then every write happens again.
      assert.deepEqual(
        await refusal(
          reruns().rerun(actor(), { automation_id: a.automation_id, run_id: retried.run_id, mode: 'retry' }),
        ),
        ['not_rerunnable', 'Only a failed run can be retried; this one succeeded'],
      );
      const replayed = await reruns().rerun(actor(), {
        automation_id: a.automation_id,
        run_id: retried.run_id,
        mode: 'replay',
      });
      await engine.drain();
      assert.equal((await t.readRun(ada, a, replayed.run_id)).status, 'succeeded');
      assert.deepEqual(filed, ['Once', 'Once']);
    });

    it('says which version each would run once the automation was republished, and runs it', async () => {
      getIssue = async () => {
        throw new StepError('the tracker is down', { retryable: true });
      };
      const a = await t.publish(ada, fileThenCheck(), { write_approval: 'automatic' });
      const first = await t.runToEnd(ada, a);
      assert.equal(first.status, 'failed');
      // Version 2 drops the check.
      const drafted = ok(
        await ada.call('draft_automation', {
          automation_id: a.automation_id,
          plan_json: plan('File only', [file('file', lit('Twice'))]),
          ask: 'File only.',
          write_approval: 'automatic',
        }),
      );
      ok(
        await ada.call('edit_automation', {
          action: 'publish',
          automation_id: a.automation_id,
          flow_version_id: drafted.flow_version_id,
          trigger: WEEKLY,
        }),
      );
      const preview = await reruns().preview(actor(), {
        automation_id: a.automation_id,
        run_id: first.run_id,
      });
      assert.deepEqual([preview.retry.version, preview.retry.live_version], [1, 2]);
      assert.deepEqual([preview.replay.version, preview.replay.steps], [2, ['file']]);

      getIssue = async () => STAND_IN_ISSUE;
      filed = [];
      const retried = await reruns().rerun(actor(), {
        automation_id: a.automation_id,
        run_id: first.run_id,
        mode: 'retry',
      });
      await engine.drain();
      const shown = await inspect(a.automation_id, retried.run_id);
      assert.deepEqual(
        [shown?.status, shown?.version],
        ['succeeded', 1],
        'a retry runs the version it failed on',
      );
      assert.deepEqual(filed, []);
    });

    it('goes on with a failed map from its unfinished items', async () => {
      filed = [];
      let refuse = true;
      fileIssue = async (input) => {
        if (input.title === 'b' && refuse) throw new StepError('the tracker refused b', { retryable: false });
        filed.push(String(input.title));
        return { number: filed.length, url: `https://example.test/${filed.length}` };
      };
      const a = await t.publish(
        ada,
        plan('Each', [
          {
            id: 'each',
            kind: 'map',
            items: lit(['a', 'b', 'c']),
            body: { nodes: [file('one', trig('item'))] },
            result: 'one',
          },
        ]),
        { write_approval: 'automatic' },
      );
      const first = await t.runToEnd(ada, a);
      assert.equal(first.status, 'failed');
      // The other items went on when b failed.
      assert.deepEqual(filed, ['a', 'c']);
      const preview = await reruns().preview(actor(), {
        automation_id: a.automation_id,
        run_id: first.run_id,
      });
      assert.deepEqual(preview.retry.steps, ['each', 'one']);
      assert.deepEqual(preview.retry.writes_again, [{ node_id: 'one', capability: 'github.create_issue' }]);

      refuse = false;
      const retried = await reruns().rerun(actor(), {
        automation_id: a.automation_id,
        run_id: first.run_id,
        mode: 'retry',
      });
      await engine.drain();
      const second = await t.readRun(ada, a, retried.run_id);
      assert.equal(second.status, 'succeeded');
      assert.deepEqual(filed, ['a', 'c', 'b'], 'only the failed item was filed again');
    });

    it('refuses with one sentence and changes nothing: not found, not theirs, unknown mode, twice at once', async () => {
      getIssue = async () => {
        throw new StepError('the tracker is down', { retryable: true });
      };
      const a = await t.publish(ada, fileThenCheck(), { write_approval: 'automatic', scope: 'personal' });
      const first = await t.runToEnd(ada, a);
      const before = (await t.runsOf(a.automation_id)).length;
      const args = { automation_id: a.automation_id, run_id: first.run_id };

      assert.deepEqual(await refusal(reruns().preview(actor(), { ...args, run_id: 'run_made_up' })), [
        'not_found',
        'Run not found',
      ]);
      // Bob cannot open Ada's personal automation: the same answer as an id that does not exist.
      assert.deepEqual(await refusal(reruns().rerun(actor('bob@acme.test'), { ...args, mode: 'retry' })), [
        'not_found',
        'Automation not found',
      ]);
      assert.deepEqual(await refusal(reruns().rerun(actor(), { ...args, mode: 'again' })), [
        'invalid_argument',
        'mode must be "retry" or "replay"',
      ]);
      await t.setEnabled(ada, a, false);
      assert.deepEqual(await refusal(reruns().rerun(actor(), { ...args, mode: 'replay' })), [
        'not_rerunnable',
        'Enable the automation before running it',
      ]);
      await t.setEnabled(ada, a, true);
      assert.equal((await t.runsOf(a.automation_id)).length, before, 'no refused rerun queued a run');

      const retried = await reruns().rerun(actor(), { ...args, mode: 'retry' });
      const [code, message] = await refusal(reruns().rerun(actor(), { ...args, mode: 'retry' }));
      assert.equal(code, 'not_rerunnable');
      assert.equal(message, `A retry of this run is already under way: run ${retried.run_id}`);
      await engine.drain();
    });

    it('shows each step’s input as its output is shown: secret-looking values masked', async () => {
      const a = await t.publish(
        ada,
        plan('Masked', [transform('pick', 'coalesce', { api_token: lit('s3cret'), name: lit('Ada') })]),
      );
      const r = await t.runToEnd(ada, a);
      const shown = await inspect(a.automation_id, r.run_id);
      assert.deepEqual(shown?.nodes.find((n) => n.node_id === 'pick')?.input, {
        input: { api_token: '••••••', name: 'Ada' },
      });
    });

    it('does not retry a step whose error says trying again cannot help', async () => {
      let calls = 0;
      getIssue = async () => {
        calls += 1;
        throw new StepError('the tracker refused: no such repository', { retryable: false });
      };
      const a = await t.publish(
        ada,
        plan('Final', [
          capability(
            'check',
            'github.get_issue',
            { repo: lit('acme/app'), number: lit(7) },
            { retry: { max_attempts: 3, backoff_s: 0 } },
          ),
        ]),
      );
      const r = await t.runToEnd(ada, a);
      assert.equal(r.status, 'failed');
      assert.equal(calls, 1);
      getIssue = async () => STAND_IN_ISSUE;
    });
  });
}
