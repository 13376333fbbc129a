import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createEngine } from '../src/engine/engine.ts';
import { fireSchedules } from '../src/engine/schedules.ts';
import { until } from './support/instances.ts';
import { DATABASES } from './support/databases.ts';
import { setup } from './support/harness.ts';
import { approval, chain, lit, plan, postMessage } from './support/automations.ts';

for (const db of DATABASES) {
  describe(`missed schedules on ${db.name}`, () => {
    it('says in the session how many instants a schedule missed, once, and fires it once', async () => {
      const h = await setup(db);
      const ada = h.actor('ada@acme.test');
      const draft = await h.services.automations.draft(ada, {
        plan_json: plan(
          'P',
          [approval('ok', { message: lit('Go?') }), postMessage('post', 'x')],
          chain('ok', 'post'),
        ),
        ask: 'x',
      });
      const pub = await h.services.automations.publish(ada, {
        flow_version_id: draft.flow_version_id,
        name: 'Hourly',
        trigger: { kind: 'schedule', frequency: 'hourly', minute: 0, timezone: 'Europe/Berlin' },
      });
      const hour = 3_600_000;
      const due = Math.floor(Date.now() / hour) * hour - 3 * hour;
      await h.services.deps.db
        .updateTable('automations')
        .set({ next_fire_at: due })
        .where('id', '=', pub.automation_id)
        .execute();
      const fired = await fireSchedules(h.services.deps.db, h.services.deps.dialect, async () => {});
      assert.equal(fired, 1);
      const session = await h.services.automations.session(ada, pub.session_id);
      const notes = session.messages.filter((m) => m.body.includes('were missed'));
      assert.equal(notes.length, 1);
      assert.match(
        notes[0]!.body,
        /^4 scheduled runs were missed while no worker was running \(from .+, Europe\/Berlin\); it ran once, now, in their place\.$/,
      );
      // A second pass fires nothing and posts nothing.
      assert.equal(await fireSchedules(h.services.deps.db, h.services.deps.dialect, async () => {}), 0);
      await h.close();
    });

    it('fires a schedule on its instant, not a poll later, and once', async () => {
      const h = await setup(db);
      const ada = h.actor('ada@acme.test');
      const draft = await h.services.automations.draft(ada, {
        plan_json: plan('P', [postMessage('post', 'x')], []),
        ask: 'x',
        write_approval: 'automatic',
      });
      const pub = await h.services.automations.publish(ada, {
        flow_version_id: draft.flow_version_id,
        name: 'Soon',
        trigger: { kind: 'schedule', frequency: 'hourly', minute: 0, timezone: 'UTC' },
      });
      const due = Date.now() + 600;
      await h.services.deps.db
        .updateTable('automations')
        .set({ next_fire_at: due })
        .where('id', '=', pub.automation_id)
        .execute();
      // The engine polls once a minute here: only a timer set for the instant fires it in time.
      const engine = createEngine(h.services, { pollMs: 60_000 });
      await engine.start();
      try {
        const scheduled = () =>
          h.services.deps.db
            .selectFrom('runs')
            .select('queued_at')
            .where('automation_id', '=', pub.automation_id)
            .where('cause', '=', 'schedule')
            .execute();
        await until(async () => (await scheduled()).length > 0, 'the scheduled run is queued', 20_000);
        const runs = await scheduled();
        assert.equal(runs.length, 1);
        assert.ok(runs[0]!.queued_at >= due, 'not before its instant');
      } finally {
        await engine.stop();
        await h.close();
      }
    });
  });
}
