import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_EVENT_DEPTH } from '../src/domains/automations/events.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import { DomainError } from '../src/errors.ts';
import type { Services } from '../src/services.ts';
import { DATABASES } from './support/databases.ts';
import { acme, type Harness, type ToolCaller } from './support/harness.ts';
import { ok } from './support/results.ts';
import {
  automationHelpers,
  capability,
  lit,
  plan,
  sharedDatabase,
  transform,
  trig,
  type Json,
  type Published,
} from './support/automations.ts';

const onWorkspace = (event: string) => ({ kind: 'connector_event', provider: 'workspace', event });
const echo = (name: string) => plan(name, [transform('echo', 'coalesce', { d: trig('') })]);

for (const db of DATABASES) {
  describe(`workspace events through the outbox on ${db.name}`, () => {
    let h: Harness;
    /** The services of another process on the same database (as `tandem worker` or `serve`). */
    let other: Services;
    /** Runs and delivers on the other process; this one writes only, as `tandem mcp` does. */
    let engine: Engine;
    let ada: ToolCaller;
    let bob: ToolCaller;

    const t = automationHelpers(
      () => h,
      () => engine,
    );
    const { publish, runsOf, setEnabled } = t;
    const database = () => h.services.deps.db;
    const artifact = (key: string) => acme(h).artifacts[key] as string;

    before(async () => {
      const shared = await sharedDatabase(db);
      h = shared.h;
      other = await shared.open();
      engine = createEngine(other, { leaseMs: 5000, pollMs: 20 });
      ada = await h.as('ada@acme.test');
      bob = await h.as('bob@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
    });

    /** What the other process does on its own: delivers the outbox and runs what it queued. */
    async function settle() {
      await engine.deliverEvents();
      await engine.drain();
    }

    const payloads = async (a: Published) =>
      (await runsOf(a.automation_id)).map((r) => JSON.parse(r.trigger_json) as { event: string; data: Json });

    async function pageVersion(id: string) {
      const row = await database()
        .selectFrom('artifacts')
        .select('version')
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
      return row.version;
    }

    it('starts a person’s automations only for what that person may open, with the payload', async () => {
      const events = ['document.created', 'document.edited', 'comment.created', 'page.written'];
      const bobs = new Map<string, Published>();
      for (const event of events)
        bobs.set(event, await publish(bob, echo(`Bob hears ${event}`), { trigger: onWorkspace(event) }));
      try {
        // Ada's private document and page, which Bob cannot open.
        const secret = ok(
          await ada.call('create_document', {
            title: 'Ada only',
            scope: 'user',
            content_markdown: 'Mine.\n',
          }),
        );
        const secretId = secret.document_id as string;
        ok(
          await ada.call('edit_document', {
            document_id: secretId,
            mode: 'append',
            content_markdown: 'More.\n',
          }),
        );
        ok(
          await ada.call('add_comment', {
            document_id: secretId,
            body_markdown: 'PRIVATE-BODY the salary list',
          }),
        );
        const privatePage = artifact('empty_page');
        ok(
          await ada.call('write_page', {
            page_id: privatePage,
            html: '<p>private</p>',
            expected_version: await pageVersion(privatePage),
          }),
        );
        await settle();
        const recorded = await database()
          .selectFrom('event_outbox')
          .select(['event', 'delivered_at'])
          .where('artifact_id', 'in', [secretId, privatePage])
          .execute();
        assert.deepEqual(recorded.map((e) => e.event).sort(), [...events].sort(), 'each write was an event');
        assert.ok(
          recorded.every((e) => e.delivered_at !== null),
          'and each was delivered',
        );
        for (const event of events) {
          assert.deepEqual(
            await runsOf(bobs.get(event)!.automation_id),
            [],
            `${event} on a private artifact`,
          );
        }

        // The same on what the whole workspace can open.
        const open = ok(
          await ada.call('create_document', { title: 'For all', scope: 'org', content_markdown: 'Ours.\n' }),
        );
        const openId = open.document_id as string;
        ok(
          await ada.call('edit_document', {
            document_id: openId,
            mode: 'append',
            content_markdown: 'More.\n',
          }),
        );
        const thread = ok(
          await ada.call('add_comment', { document_id: openId, body_markdown: 'Public note' }),
        );
        const orgPage = artifact('org_page');
        ok(
          await ada.call('write_page', {
            page_id: orgPage,
            html: '<p>for all</p>',
            expected_version: await pageVersion(orgPage),
          }),
        );
        await settle();
        const heard = async (event: string) => {
          const runs = await runsOf(bobs.get(event)!.automation_id);
          assert.deepEqual(
            runs.map((r) => [r.cause, r.status]),
            [['event', 'succeeded']],
            event,
          );
          return (await payloads(bobs.get(event)!))[0] as { provider: string; event: string; data: Json };
        };
        const created = await heard('document.created');
        assert.deepEqual([created.provider, created.event], ['workspace', 'document.created']);
        assert.equal(created.data.document_id, openId);
        assert.equal(created.data.title, 'For all');
        assert.equal((await heard('document.edited')).data.document_id, openId);
        const commented = await heard('comment.created');
        assert.equal(commented.data.document_id, openId);
        assert.equal(commented.data.thread_id, thread.thread_id);
        assert.equal(commented.data.body, 'Public note');
        assert.equal((await heard('page.written')).data.page_id, orgPage);

        const everything = await database()
          .selectFrom('runs')
          .select(['trigger_json', 'output_json'])
          .where('acting_id', '=', h.actor('bob@acme.test').personId)
          .execute();
        assert.equal(
          everything.some((r) => `${r.trigger_json}${r.output_json}`.includes('PRIVATE-BODY')),
          false,
          'the private comment reached none of Bob’s runs',
        );
      } finally {
        for (const a of bobs.values()) await setEnabled(bob, a, false);
      }
    });

    it('follows sharing: an automation hears of an artifact while its person may open it, and no longer', async () => {
      const hears = await publish(bob, echo('Bob hears comments'), {
        trigger: onWorkspace('comment.created'),
      });
      try {
        const made = ok(
          await ada.call('create_document', {
            title: 'Shared later',
            scope: 'user',
            content_markdown: 'Hi.\n',
          }),
        );
        const id = made.document_id as string;
        const bobId = h.actor('bob@acme.test').personId;
        await h.services.sharing.put(h.actor('ada@acme.test'), id, {
          scope: 'user',
          people: [{ user_id: bobId, role: 'viewer' }],
        });
        ok(await ada.call('add_comment', { document_id: id, body_markdown: 'While Bob may read.' }));
        await settle();
        assert.equal((await runsOf(hears.automation_id)).length, 1);

        await h.services.sharing.put(h.actor('ada@acme.test'), id, { scope: 'user', people: [] });
        ok(await ada.call('add_comment', { document_id: id, body_markdown: 'PRIVATE-AGAIN after.' }));
        await settle();
        const runs = await runsOf(hears.automation_id);
        assert.equal(runs.length, 1, 'not heard once Bob cannot open it');
        assert.ok(!JSON.stringify(runs).includes('PRIVATE-AGAIN'));
      } finally {
        await setEnabled(bob, hears, false);
      }
    });

    it('is delivered by a started engine of another process', async () => {
      const a = await publish(ada, echo('Heard elsewhere'), { trigger: onWorkspace('document.created') });
      await engine.start();
      try {
        const made = ok(await ada.call('create_document', { title: 'Elsewhere', scope: 'org' }));
        const deadline = Date.now() + 10_000;
        let runs = await runsOf(a.automation_id);
        while (runs[0]?.status !== 'succeeded') {
          assert.ok(Date.now() < deadline, `no run finished: ${JSON.stringify(runs)}`);
          await new Promise((resolve) => setTimeout(resolve, 20));
          runs = await runsOf(a.automation_id);
        }
        assert.equal(runs.length, 1);
        assert.equal((JSON.parse(runs[0].trigger_json) as { data: Json }).data.document_id, made.document_id);
      } finally {
        await engine.stop();
        await setEnabled(ada, a, false);
      }
    });

    it('records no event for a write that is rolled back', async () => {
      const a = await publish(ada, echo('Hears writes'), { trigger: onWorkspace('document.created') });
      const p = await publish(ada, echo('Hears pages'), { trigger: onWorkspace('page.written') });
      const adaActor = h.actor('ada@acme.test');
      const fail = async () => {
        throw new Error('the write could not be completed');
      };
      try {
        const outbox = async () =>
          (await database().selectFrom('event_outbox').select('id').execute()).length;
        const before = await outbox();
        await assert.rejects(
          h.services.documents.create(adaActor, { title: 'Never made', scope: 'org' }, { within: fail }),
          /could not be completed/,
        );
        const orgPage = artifact('org_page');
        const version = await pageVersion(orgPage);
        await assert.rejects(
          h.services.pages.write(
            adaActor,
            { page_id: orgPage, html: '<p>never</p>', expected_version: version },
            { within: fail },
          ),
          /could not be completed/,
        );
        assert.equal(await pageVersion(orgPage), version);
        assert.equal(await outbox(), before);
        await settle();
        assert.deepEqual(await runsOf(a.automation_id), []);
        assert.deepEqual(await runsOf(p.automation_id), []);
      } finally {
        await setEnabled(ada, a, false);
        await setEnabled(ada, p, false);
      }
    });

    it('never triggers the automation whose run caused it, and stops chains at the depth cap', async () => {
      const maker = (title: string) =>
        plan('Maker', [
          capability('create', 'documents.create_document', { title: lit(title), scope: lit('org') }),
        ]);
      const options = { trigger: onWorkspace('document.created'), write_approval: 'automatic' as const };
      const first = await publish(ada, maker('Made by first'), options);
      const second = await publish(ada, maker('Made by second'), options);
      try {
        ok(await ada.call('create_document', { title: 'Chain start', scope: 'org' }));
        for (let i = 0; i < 2 * MAX_EVENT_DEPTH + 2; i++) await settle();
        for (const [mine, theirs] of [
          [first, 'Made by second'],
          [second, 'Made by first'],
        ] as const) {
          const runs = await runsOf(mine.automation_id);
          // One run per level: the person's event, then each event of the other automation's runs.
          assert.deepEqual(
            runs.map((r) => [r.status, r.event_depth]),
            Array.from({ length: MAX_EVENT_DEPTH }, (_, depth) => ['succeeded', depth]),
          );
          const titles = (
            await Promise.all(
              runs.map(async (r) => {
                const id = (JSON.parse(r.trigger_json) as { data: Json }).data.document_id as string;
                const doc = await database()
                  .selectFrom('artifacts')
                  .select('title')
                  .where('id', '=', id)
                  .executeTakeFirstOrThrow();
                return doc.title;
              }),
            )
          ).slice(1);
          assert.deepEqual(
            titles,
            Array(MAX_EVENT_DEPTH - 1).fill(theirs),
            'only the other automation’s documents',
          );
        }
        const made = await database()
          .selectFrom('artifacts')
          .select('id')
          .where('title', 'in', ['Made by first', 'Made by second'])
          .execute();
        assert.equal(made.length, 2 * MAX_EVENT_DEPTH);
      } finally {
        await setEnabled(ada, first, false);
        await setEnabled(ada, second, false);
      }
    });

    it('accepts a signed delivery once: the same delivery id again is refused and starts nothing', async () => {
      const a = await publish(ada, echo('On issues'), {
        trigger: { kind: 'github_event', event: 'issues', actions: ['opened'], repo: 'acme/app' },
      });
      try {
        const event = {
          provider: 'github',
          event: 'issues',
          action: 'opened',
          repo: 'acme/app',
          data: { issue: { number: 1 } },
          delivery_id: 'abc',
        };
        const workspace = acme(h).id;
        const started = await h.services.automations.receiveEvent(workspace, event);
        assert.equal(started.length, 1);
        await assert.rejects(h.services.automations.receiveEvent(workspace, event), (error: unknown) => {
          assert.ok(error instanceof DomainError);
          assert.equal(error.code, 'duplicate_delivery');
          return true;
        });
        await settle();
        const runs = await runsOf(a.automation_id);
        assert.deepEqual(
          runs.map((r) => [r.id, r.status]),
          [[started[0], 'succeeded']],
        );
      } finally {
        await setEnabled(ada, a, false);
      }
    });
  });
}
