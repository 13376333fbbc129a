import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness } from './support/harness.ts';
import {
  approval,
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  type Json,
} from './support/automations.ts';
import { ok } from './support/results.ts';

/** Reads the roadmap, asks for approval, then posts what it read: one read, one write. */
const digest = (roadmap: string): Json =>
  plan(
    'Draft digest',
    [
      capability('read', 'documents.read_document', { document_id: lit(roadmap) }),
      approval('ok', { message: lit('Post it?') }),
      postMessage('post', ref('read', 'markdown')),
    ],
    chain('read', 'ok', 'post'),
  );

for (const db of DATABASES) {
  describe(`dry runs of drafts (${db.name})`, () => {
    let h: Harness;
    let engine: Engine;

    before(async () => {
      h = await setup(db);
      engine = createEngine(h.services, { leaseMs: 5000 });
    });
    after(async () => {
      await engine?.stop();
      await h?.close();
    });

    it('runs a never-published draft as it is, writes simulated, and leaves it a draft', async () => {
      const ada = h.actor('ada@acme.test');
      const agent = await h.as('ada@acme.test');
      const before = ok(await agent.call('list_automations', {}));
      const draft = await h.services.automations.draft(ada, {
        plan_json: digest(acme(h).artifacts.roadmap!),
        ask: 'Post the roadmap once I approve.',
      });
      const started = await h.services.automations.draftRuns.dryRun(ada, draft.flow_version_id);
      assert.equal(started.dry_run, true);
      await engine.drain();
      const run = await h.services.automations.draftRuns.read(ada, draft.flow_version_id, started.run_id);
      assert.equal(run.status, 'succeeded');
      assert.equal(run.dry_run, true);
      assert.equal(run.cause, 'dry_run');
      const status = Object.fromEntries(run.nodes.map((n) => [n.node_id, n.status]));
      assert.deepEqual(status, { read: 'succeeded', ok: 'simulated', post: 'simulated' });
      // Nothing was published: no automation, the draft still listed as a draft, nothing posted.
      const listed = ok(await agent.call('list_automations', {}));
      assert.deepEqual(listed.automations, before.automations);
      const drafts = await h.services.drafts.list(ada);
      assert.ok(drafts.drafts.some((d) => d.flow_version_id === draft.flow_version_id));
      const read = await h.services.drafts.read(ada, draft.flow_version_id);
      assert.equal(read.automation, undefined);
    });

    it('is the drafter’s alone: another person’s draft, or run, is not found', async () => {
      const ada = h.actor('ada@acme.test');
      const bob = h.actor('bob@acme.test');
      const draft = await h.services.automations.draft(ada, {
        plan_json: digest(acme(h).artifacts.roadmap!),
        ask: 'Post the roadmap once I approve.',
      });
      await assert.rejects(h.services.automations.draftRuns.dryRun(bob, draft.flow_version_id), {
        code: 'not_found',
      });
      const started = await h.services.automations.draftRuns.dryRun(ada, draft.flow_version_id);
      await assert.rejects(
        h.services.automations.draftRuns.read(bob, draft.flow_version_id, started.run_id),
        {
          code: 'not_found',
        },
      );
      // A run of another draft is not this draft's.
      const other = await h.services.automations.draft(ada, {
        plan_json: digest(acme(h).artifacts.roadmap!),
        ask: 'Another.',
      });
      await assert.rejects(
        h.services.automations.draftRuns.read(ada, other.flow_version_id, started.run_id),
        {
          code: 'not_found',
        },
      );
      await engine.drain();
    });
  });
}
