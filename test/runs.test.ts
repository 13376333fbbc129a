import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import type { Actor } from '../src/domains/workspace/actor.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import { ok, refused } from './support/results.ts';
import {
  approval,
  automationHelpers,
  capability,
  chain,
  lit,
  plan,
  postMessage,
  ref,
  transform,
  trig,
  type Json,
  type Published,
  type RunInfo,
} from './support/automations.ts';

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 30, timezone: 'Europe/Berlin' };
const HOURLY = { kind: 'schedule', frequency: 'hourly', minute: 15, timezone: 'UTC' };
const ON_DOCUMENT = { kind: 'connector_event', provider: 'workspace', event: 'document.created' };

const ONLY_CREATOR = 'Tool failed: Only its creator can change this automation';
const ONLY_ADMINS = 'Tool failed: Only workspace admins can change this automation';
const ENABLE_FIRST = 'Tool failed: Enable the automation before running it';

for (const db of DATABASES) {
  describe(`automation runs on ${db.name}`, () => {
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    let bob: ToolCaller;
    let adaActor: Actor;
    let bobActor: Actor;
    let hook: Server;
    let hookUrl: string;
    const hookBodies: string[] = [];

    const database = () => h.services.deps.db;
    const roadmap = () => acme(h).artifacts.roadmap as string;
    const landing = () => acme(h).artifacts.landing as string;

    before(async () => {
      hook = createServer((req, res) => {
        let body = '';
        req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
        req.on('end', () => {
          hookBodies.push(body);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end('{"ok":true}');
        });
      });
      await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
      const { port } = hook.address() as AddressInfo;
      hookUrl = `http://127.0.0.1:${port}/hook`;
      h = await setup(db);
      engine = createEngine(h.services, { leaseMs: 5000, httpAllow: [`127.0.0.1:${port}`] });
      ada = await h.as('ada@acme.test');
      bob = await h.as('bob@acme.test');
      adaActor = h.actor('ada@acme.test');
      bobActor = h.actor('bob@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
      await new Promise<void>((resolve) => hook.close(() => resolve()));
    });

    // ── helpers ─────────────────────────────────────────────────────────────────────────────

    const {
      publish,
      run,
      readRun,
      runToEnd,
      nodeOf,
      statuses,
      outputs,
      makeDue,
      runRow,
      automationRow,
      runsOf,
      sessionMessages,
      pendingCard,
    } = automationHelpers(
      () => h,
      () => engine,
    );

    /** Counts of everything a run could write, to compare before and after. */
    async function footprint() {
      const count = async (
        table: 'artifacts' | 'threads' | 'comments' | 'messages' | 'notifications' | 'checkpoints',
      ) => {
        const row = await database()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow();
        return Number(row.n);
      };
      const artifacts = await database()
        .selectFrom('artifacts')
        .select(['id', 'version', 'content'])
        .orderBy('id')
        .execute();
      return {
        artifacts: await count('artifacts'),
        threads: await count('threads'),
        comments: await count('comments'),
        messages: await count('messages'),
        notifications: await count('notifications'),
        checkpoints: await count('checkpoints'),
        contents: artifacts.map((a) => `${a.id}@${a.version}:${a.content ?? ''}`),
        hooks: hookBodies.length,
      };
    }

    async function scratchDocument(title: string, owner: Actor = adaActor, scope = 'org') {
      const made = await h.services.documents.create(owner, {
        title,
        content_markdown: `${title} body.\n`,
        scope,
      });
      return made.document_id;
    }

    /** Delivers the outbox's events, as a started engine does. */
    function listen() {
      return {
        async settled() {
          await engine.deliverEvents();
        },
        off() {},
      };
    }

    const readPlan = (name = 'Read roadmap') =>
      plan(name, [capability('read', 'documents.read_document', { document_id: lit(roadmap()) })]);

    // ── edit_automation run and read_automation runs ─────────────────────────────────────────

    describe('edit_automation run and read_automation', () => {
      it('echoes the action, dry_run and run_id, and lists the run with its nodes and output', async () => {
        const a = await publish(ada, readPlan());
        const queued = ok(
          await ada.call('edit_automation', { action: 'run', automation_id: a.automation_id }),
        );
        assert.equal(queued.action, 'run');
        assert.equal(queued.automation_id, a.automation_id);
        assert.equal(queued.dry_run, false);
        assert.match(String(queued.run_id), /^run_/);
        const dry = ok(
          await ada.call('edit_automation', { action: 'run', automation_id: a.automation_id, dry_run: true }),
        );
        assert.equal(dry.dry_run, true);
        assert.match(String(dry.run_id), /^run_/);
        assert.notEqual(dry.run_id, queued.run_id);

        const before = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, include_runs: true }),
        );
        const queuedRuns = before.runs as RunInfo[];
        assert.deepEqual(
          queuedRuns.map((r) => [r.run_id, r.status, r.dry_run, r.cause]),
          [
            [dry.run_id, 'queued', true, 'dry_run'],
            [queued.run_id, 'queued', false, 'manual'],
          ],
        );
        assert.equal(before.runs_truncated, false);

        await engine.drain();
        const listed = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, include_runs: true }),
        );
        const runs = listed.runs as RunInfo[];
        assert.equal(runs.length, 2);
        for (const r of runs) {
          assert.equal(r.status, 'succeeded');
          for (const field of ['queued_at', 'started_at', 'finished_at'] as const) {
            assert.ok(r[field], `${field} is set`);
            assert.ok(!Number.isNaN(Date.parse(r[field] as string)), `${field} is an instant`);
          }
          assert.ok(Date.parse(r.started_at as string) >= Date.parse(r.queued_at as string));
          assert.ok(Date.parse(r.finished_at as string) >= Date.parse(r.started_at as string));
          assert.equal('nodes' in r, false, 'a run list has no nodes');
        }

        const detail = await readRun(ada, a, queued.run_id as string);
        assert.equal(detail.run_id, queued.run_id);
        assert.equal(detail.status, 'succeeded');
        assert.equal(detail.cause, 'manual');
        assert.deepEqual(detail.nodes, [{ node_id: 'read', status: 'succeeded', attempt: 1 }]);
        const output = detail.output as { read: Json };
        assert.equal(output.read.document_id, roadmap());
        assert.match(String(output.read.markdown), /Ship it\./);
      });

      it('reads a run id of another automation as run: null', async () => {
        const a = await publish(ada, readPlan());
        const b = await publish(ada, readPlan());
        const runId = await run(ada, b, true);
        await engine.drain();
        const read = ok(await ada.call('read_automation', { automation_id: a.automation_id, run_id: runId }));
        assert.equal(read.run, null);
        const made = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, run_id: 'run_nope' }),
        );
        assert.equal(made.run, null);
      });

      it('refuses to run a paused automation unless it is a dry run', async () => {
        const a = await publish(ada, readPlan(), { enabled: false });
        refused(
          await ada.call('edit_automation', { action: 'run', automation_id: a.automation_id }),
          ENABLE_FIRST,
        );
        refused(
          await ada.call('edit_automation', {
            action: 'run',
            automation_id: a.automation_id,
            dry_run: false,
          }),
          ENABLE_FIRST,
        );
        const r = await runToEnd(ada, a, true);
        assert.equal(r.status, 'succeeded');
        assert.equal(r.dry_run, true);
        const listed = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, include_runs: true }),
        );
        assert.equal((listed.runs as RunInfo[]).length, 1, 'the refused runs were not stored');
      });

      it('answers runs asked for together each on its own: a refusal queues nothing and stops no other', async () => {
        const mine = await publish(ada, readPlan('Ada reads'));
        const paused = await publish(ada, readPlan('Ada waits'), { enabled: false });
        const bobs = await publish(bob, readPlan('Bob reads too'));
        const runOf = (automation_id: string) => h.services.automations.run(adaActor, { automation_id });
        // Asked in the same turn, as calls that arrive together are: queued in one transaction.
        const [ran, forbidden, waits, again] = await Promise.allSettled([
          runOf(mine.automation_id),
          runOf(bobs.automation_id),
          runOf(paused.automation_id),
          runOf(mine.automation_id),
        ]);
        assert.equal(ran.status, 'fulfilled');
        assert.equal(again.status, 'fulfilled');
        const ids = [ran, again].map((r) => (r as PromiseFulfilledResult<{ run_id: string }>).value.run_id);
        assert.notEqual(ids[0], ids[1]);
        assert.match(String((forbidden as PromiseRejectedResult).reason), /Only its creator can change/);
        assert.match(
          String((waits as PromiseRejectedResult).reason),
          /Enable the automation before running it/,
        );
        assert.deepEqual((await runsOf(mine.automation_id)).map((r) => r.id).sort(), [...ids].sort());
        assert.deepEqual(await runsOf(bobs.automation_id), []);
        assert.deepEqual(await runsOf(paused.automation_id), []);
        await engine.drain();
        for (const id of ids) assert.equal((await readRun(ada, mine, id)).status, 'succeeded');
      });

      it('lets only the creator run a personal automation and only admins a workspace one', async () => {
        const bobs = await publish(bob, readPlan('Bob reads'));
        refused(
          await ada.call('edit_automation', { action: 'run', automation_id: bobs.automation_id }),
          ONLY_CREATOR,
        );
        refused(
          await ada.call('edit_automation', {
            action: 'run',
            automation_id: bobs.automation_id,
            dry_run: true,
          }),
          ONLY_CREATOR,
        );
        const shared = await publish(ada, readPlan('Shared reads'), { scope: 'workspace' });
        refused(
          await bob.call('edit_automation', { action: 'run', automation_id: shared.automation_id }),
          ONLY_ADMINS,
        );
        refused(
          await bob.call('edit_automation', {
            action: 'run',
            automation_id: shared.automation_id,
            dry_run: true,
          }),
          ONLY_ADMINS,
        );
        assert.equal((await runsOf(bobs.automation_id)).length, 0);
        assert.equal((await runsOf(shared.automation_id)).length, 0);
        // Their own callers may.
        assert.equal((await runToEnd(bob, bobs)).status, 'succeeded');
        assert.equal((await runToEnd(ada, shared)).status, 'succeeded');
      });

      it('shows the latest 20 runs, newest first, and says when there are more', async () => {
        const a = await publish(ada, readPlan());
        const ids: string[] = [];
        for (let i = 0; i < 20; i++) ids.push(await run(ada, a, i % 2 === 0));
        let listed = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, include_runs: true }),
        );
        assert.equal((listed.runs as RunInfo[]).length, 20);
        assert.equal(listed.runs_truncated, false);
        ids.push(await run(ada, a));
        listed = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, include_runs: true }),
        );
        const runs = listed.runs as RunInfo[];
        assert.equal(runs.length, 20);
        assert.equal(listed.runs_truncated, true);
        assert.deepEqual(
          runs.map((r) => r.run_id),
          ids.slice(1).reverse(),
        );
        await engine.drain();
        listed = ok(await ada.call('read_automation', { automation_id: a.automation_id }));
        assert.equal('runs' in listed, false, 'runs only with include_runs');
      });
    });

    // ── node kinds ─────────────────────────────────────────────────────────────────────────

    describe('node kinds', () => {
      it('runs the built-in capabilities, each write landing once, as the creator', async () => {
        const target = await scratchDocument('Append target');
        const commented = await scratchDocument('Comment target');
        const page = (await h.services.pages.read(adaActor, landing())) as { version: number };
        const p = plan(
          'Built-ins',
          [
            capability('read', 'documents.read_document', { document_id: lit(roadmap()) }),
            capability('create', 'documents.create_document', {
              title: lit('Made by a run'),
              content_markdown: ref('read', 'markdown'),
            }),
            capability('append', 'documents.append_to_document', {
              document_id: lit(target),
              content_markdown: lit('Appended by a run.'),
            }),
            capability('page', 'pages.read_page', { page_id: lit(landing()) }),
            capability('write', 'pages.write_page', {
              page_id: lit(landing()),
              html: lit('<h1>Written by a run</h1>'),
              expected_version: ref('page', 'version'),
            }),
            capability('comment', 'comments.add_comment', {
              document_id: lit(commented),
              body: lit('A comment from a run'),
            }),
            postMessage('post', ref('read', 'title')),
          ],
          [
            { from: 'read', to: 'create' },
            { from: 'page', to: 'write' },
            { from: 'read', to: 'post' },
          ],
        );
        const a = await publish(ada, p, { write_approval: 'automatic' });
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        for (const n of r.nodes)
          assert.deepEqual([n.node_id, n.status, n.attempt], [n.node_id, 'succeeded', 1]);
        const out = await outputs(r.run_id);

        assert.equal(out.read?.title, 'Roadmap');
        assert.match(String(out.read?.markdown), /# Roadmap/);

        const created = out.create as { document_id: string; title: string };
        assert.equal(created.title, 'Made by a run');
        const doc = await h.services.documents.read(adaActor, { document_id: created.document_id });
        assert.match(doc.markdown, /Ship it\./);
        const createdRow = await database()
          .selectFrom('artifacts')
          .selectAll()
          .where('id', '=', created.document_id)
          .executeTakeFirstOrThrow();
        assert.equal(createdRow.owner_id, adaActor.personId, 'the run acts as its creator');
        assert.equal(createdRow.conversation_id, a.session_id, 'created in the session by default');

        const appended = await h.services.documents.read(adaActor, { document_id: target });
        assert.match(appended.markdown, /Appended by a run\./);
        assert.equal(out.append?.document_id, target);

        assert.equal(out.page?.version, page.version);
        const written = (await h.services.pages.read(adaActor, landing())) as {
          version: number;
          html: string;
        };
        assert.equal(written.html, '<h1>Written by a run</h1>');
        assert.equal(written.version, page.version + 1);
        assert.equal(out.write?.new_version, page.version + 1);

        const threads = await database()
          .selectFrom('threads')
          .selectAll()
          .where('artifact_id', '=', commented)
          .execute();
        assert.equal(threads.length, 1);
        assert.equal(threads[0]?.body, 'A comment from a run');
        assert.equal(threads[0]?.author_id, adaActor.personId);
        assert.equal(out.comment?.thread_id, threads[0]?.id);

        const posted = (await sessionMessages(a.session_id)).filter((m) => m.body === 'Roadmap');
        assert.equal(posted.length, 1, 'posted to the automation’s session by default');
        assert.equal(out.post?.conversation_id, a.session_id);
        assert.equal(out.post?.message_id, posted[0]?.message_id);

        // The sinks make the run's output.
        assert.deepEqual(Object.keys(r.output ?? {}).sort(), [
          'append',
          'comment',
          'create',
          'post',
          'write',
        ]);
      });

      it('runs every transform op', async () => {
        const data = JSON.stringify({
          items: [
            { title: 'A', n: 3 },
            { title: 'B', n: 1 },
            { title: 'C', n: 5 },
          ],
          meta: { x: 1 },
        });
        const t = (id: string, op: string, input: Json, args?: Json) => ({
          id,
          kind: 'transform',
          op,
          input,
          ...(args ? { args } : {}),
        });
        const p = plan(
          'Transforms',
          [
            capability('read', 'documents.read_document', { document_id: lit(roadmap()) }),
            t(
              'tpl',
              'template',
              { title: ref('read', 'title'), doc: ref('read', '') },
              { template: 'T={{title}} id={{doc.document_id}} missing=[{{nothing}}]' },
            ),
            t('parse', 'json_parse', { text: lit(data) }),
            t('get', 'get', { value: ref('parse', 'value') }, { path: 'items.2.title' }),
            t('pluck', 'pluck', { items: ref('parse', 'value.items') }, { field: 'title' }),
            t('join', 'join', { items: ref('pluck', 'items') }, { separator: ', ' }),
            t('split', 'split', { text: ref('join', 'text') }, { separator: ', ' }),
            t(
              'filter',
              'filter',
              { items: ref('parse', 'value.items') },
              { field: 'n', op: 'gte', value: 3 },
            ),
            t('count', 'count', { items: ref('filter', 'items') }),
            t('first', 'first', { items: ref('filter', 'items') }),
            t('last', 'last', { items: ref('split', 'items') }),
            t('merge', 'merge', { a: ref('parse', 'value.meta'), b: lit({ y: 2, x: 9 }) }),
            t('coalesce', 'coalesce', { a: ref('parse', 'value.missing'), b: lit(null), c: lit('fallback') }),
            t('now', 'now', {}, { timezone: 'Europe/Berlin' }),
            t('stringify', 'json_stringify', { value: ref('merge', 'value') }),
          ],
          [
            { from: 'read', to: 'tpl' },
            { from: 'parse', to: 'get' },
            { from: 'parse', to: 'pluck' },
            { from: 'pluck', to: 'join' },
            { from: 'join', to: 'split' },
            { from: 'parse', to: 'filter' },
            { from: 'filter', to: 'count' },
            { from: 'filter', to: 'first' },
            { from: 'split', to: 'last' },
            { from: 'parse', to: 'merge' },
            { from: 'parse', to: 'coalesce' },
            { from: 'merge', to: 'stringify' },
          ],
        );
        const a = await publish(ada, p);
        const startedAt = Date.now();
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        const out = await outputs(r.run_id);
        assert.deepEqual(out.tpl, { text: `T=Roadmap id=${roadmap()} missing=[]` });
        assert.deepEqual(out.get, { value: 'C' });
        assert.deepEqual(out.pluck, { items: ['A', 'B', 'C'] });
        assert.deepEqual(out.join, { text: 'A, B, C' });
        assert.deepEqual(out.split, { items: ['A', 'B', 'C'] });
        assert.deepEqual(out.filter, {
          items: [
            { title: 'A', n: 3 },
            { title: 'C', n: 5 },
          ],
        });
        assert.deepEqual(out.count, { count: 2 });
        assert.deepEqual(out.first, { value: { title: 'A', n: 3 } });
        assert.deepEqual(out.last, { value: 'C' });
        assert.deepEqual(out.merge, { value: { x: 9, y: 2 } });
        assert.deepEqual(out.coalesce, { value: 'fallback' });
        assert.deepEqual(JSON.parse(String(out.stringify?.text)), { x: 9, y: 2 });
        const now = out.now as { iso: string; epoch_ms: number; local: string };
        assert.ok(now.epoch_ms >= startedAt && now.epoch_ms <= Date.now());
        assert.equal(Date.parse(now.iso), now.epoch_ms);
        assert.match(now.local, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/);
        assert.equal(
          now.local,
          new Date(now.epoch_ms).toLocaleString('sv-SE', { timeZone: 'Europe/Berlin' }).replace(' ', 'T'),
        );
        assert.deepEqual(Object.keys(r.output ?? {}).sort(), [
          'coalesce',
          'count',
          'first',
          'get',
          'last',
          'now',
          'stringify',
          'tpl',
        ]);
      });

      it('fails a transform on bad input and names the node', async () => {
        const p = plan('Bad JSON', [
          { id: 'parse', kind: 'transform', op: 'json_parse', input: { text: lit('{not json') } },
        ]);
        const a = await publish(ada, p);
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'failed');
        assert.equal(nodeOf(r, 'parse').status, 'failed');
        assert.match(nodeOf(r, 'parse').error ?? '', /not JSON/);
        assert.match(r.error ?? '', /^parse: /);
      });

      it('runs the taken side of a branch, skips the other, and runs the node after the join', async () => {
        const tpl = (id: string, text: string) => ({
          id,
          kind: 'transform',
          op: 'template',
          input: {},
          args: { template: text },
        });
        const branchPlan = (n: number) =>
          plan(
            'Branch',
            [
              {
                id: 'parse',
                kind: 'transform',
                op: 'json_parse',
                input: { text: lit(JSON.stringify({ n })) },
              },
              {
                id: 'check',
                kind: 'branch',
                condition: { op: 'gt', left: ref('parse', 'value.n'), right: lit(3) },
              },
              tpl('big', 'big'),
              tpl('small', 'small'),
              tpl('small2', 'still small'),
              {
                id: 'join',
                kind: 'transform',
                op: 'coalesce',
                input: { a: ref('big', 'text'), b: ref('small2', 'text') },
              },
            ],
            [
              { from: 'parse', to: 'check' },
              { from: 'check', to: 'big', when: true },
              { from: 'check', to: 'small', when: false },
              { from: 'small', to: 'small2' },
              { from: 'big', to: 'join' },
              { from: 'small2', to: 'join' },
            ],
          );
        const yes = await runToEnd(ada, await publish(ada, branchPlan(5)));
        assert.equal(yes.status, 'succeeded', JSON.stringify(yes));
        assert.deepEqual(statuses(yes), {
          parse: 'succeeded',
          check: 'succeeded',
          big: 'succeeded',
          small: 'skipped',
          small2: 'skipped',
          join: 'succeeded',
        });
        assert.equal(nodeOf(yes, 'small').attempt, 0);
        const yesOut = await outputs(yes.run_id);
        assert.deepEqual(yesOut.check, { value: true });
        assert.deepEqual(yes.output, { join: { value: 'big' } });

        const no = await runToEnd(ada, await publish(ada, branchPlan(1)));
        assert.equal(no.status, 'succeeded', JSON.stringify(no));
        assert.deepEqual(statuses(no), {
          parse: 'succeeded',
          check: 'succeeded',
          big: 'skipped',
          small: 'succeeded',
          small2: 'succeeded',
          join: 'succeeded',
        });
        assert.deepEqual(no.output, { join: { value: 'still small' } });
      });

      it('maps over items in order, no more than concurrency at a time', async () => {
        const p = plan(
          'Map',
          [
            {
              id: 'each',
              kind: 'map',
              items: lit(['a', 'b', 'c', 'd', 'e']),
              concurrency: 2,
              result: 'label',
              body: {
                nodes: [
                  { id: 'pause', kind: 'delay', seconds: 60 },
                  {
                    id: 'label',
                    kind: 'transform',
                    op: 'template',
                    input: { item: trig('item'), index: trig('index') },
                    args: { template: '{{index}}:{{item}}' },
                  },
                ],
                edges: [{ from: 'pause', to: 'label' }],
              },
            },
            { id: 'count', kind: 'transform', op: 'count', input: { items: ref('each', 'results') } },
          ],
          [{ from: 'each', to: 'count' }],
        );
        const a = await publish(ada, p);
        const runId = await run(ada, a);
        const started: string[][] = [];
        for (let round = 0; round < 5; round++) {
          await engine.drain();
          const r = await readRun(ada, a, runId);
          if (r.status === 'succeeded') break;
          assert.equal(r.status, 'waiting');
          const waiting = r.nodes.filter((n) => n.status === 'waiting').map((n) => n.node_id);
          assert.ok(waiting.length <= 2, `at most 2 items at a time, got ${waiting.join(', ')}`);
          started.push(waiting.sort());
          await makeDue(runId);
        }
        assert.deepEqual(started, [
          ['each[0].pause', 'each[1].pause'],
          ['each[2].pause', 'each[3].pause'],
          ['each[4].pause'],
        ]);
        const r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        const out = await outputs(runId);
        assert.deepEqual(out.each, {
          results: ['0:a', '1:b', '2:c', '3:d', '4:e'].map((text) => ({ text })),
        });
        assert.deepEqual(r.output, { count: { count: 5 } });
      });

      it('maps with a capability in the body and collects per-item results in order', async () => {
        const first = await scratchDocument('Map one');
        const second = await scratchDocument('Map two');
        const p = plan(
          'Map reads',
          [
            {
              id: 'each',
              kind: 'map',
              items: lit([second, first, roadmap()]),
              concurrency: 3,
              result: 'read',
              body: {
                nodes: [capability('read', 'documents.read_document', { document_id: trig('item') })],
              },
            },
            {
              id: 'titles',
              kind: 'transform',
              op: 'pluck',
              input: { items: ref('each', 'results') },
              args: { field: 'title' },
            },
          ],
          [{ from: 'each', to: 'titles' }],
        );
        const r = await runToEnd(ada, await publish(ada, p));
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        assert.deepEqual(r.output, { titles: { items: ['Map two', 'Map one', 'Roadmap'] } });
      });

      it('does every item of a map whose worker died after marking it running, before storing its items', async () => {
        const p = plan('Map posts', [
          {
            id: 'each',
            kind: 'map',
            items: lit(['one', 'two', 'three']),
            concurrency: 2,
            result: 'post',
            body: {
              nodes: [
                transform('line', 'template', { i: trig('item') }, { template: 'posted {{i}}' }),
                postMessage('post', ref('line', 'text')),
              ],
              edges: chain('line', 'post'),
            },
          },
        ]);
        const automation = await publish(ada, p, { write_approval: 'automatic' });
        const runId = await run(ada, automation);
        // What a worker leaves when it dies between storing the map as running and storing its items.
        await database()
          .updateTable('runs')
          .set({ status: 'running', started_at: Date.now() })
          .where('id', '=', runId)
          .execute();
        await database()
          .insertInto('run_nodes')
          .values({
            run_id: runId,
            node_key: 'each',
            node_id: 'each',
            status: 'running',
            attempt: 1,
            error: null,
            error_code: null,
            wait_until: null,
            started_at: Date.now(),
            finished_at: null,
            output_json: null,
            input_json: null,
          })
          .execute();
        await engine.drain();
        const r = await readRun(ada, automation, runId);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        const posted = (await sessionMessages(automation.session_id))
          .map((m) => m.body)
          .filter((body) => body.startsWith('posted '));
        assert.deepEqual(posted.sort(), ['posted one', 'posted three', 'posted two']);
      });

      it('runs a subflow as a child run of the other automation’s live version', async () => {
        const child = await publish(
          ada,
          plan('Greeter', [
            {
              id: 'greet',
              kind: 'transform',
              op: 'template',
              input: { name: trig('name') },
              args: { template: 'Hello {{name}}' },
            },
          ]),
        );
        const parent = await publish(
          ada,
          plan(
            'Parent',
            [
              { id: 'sub', kind: 'subflow', automation_id: child.automation_id, input: { name: lit('Ada') } },
              {
                id: 'after',
                kind: 'transform',
                op: 'template',
                input: { said: ref('sub', 'greet.text') },
                args: { template: '{{said}}!' },
              },
            ],
            [{ from: 'sub', to: 'after' }],
          ),
        );
        const r = await runToEnd(ada, parent);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        const out = await outputs(r.run_id);
        assert.deepEqual(out.sub, { greet: { text: 'Hello Ada' } });
        assert.deepEqual(r.output, { after: { text: 'Hello Ada!' } });

        const childRuns = ok(
          await ada.call('read_automation', { automation_id: child.automation_id, include_runs: true }),
        ).runs as RunInfo[];
        assert.equal(childRuns.length, 1);
        assert.equal(childRuns[0]?.cause, 'subflow');
        assert.equal(childRuns[0]?.status, 'succeeded');
        assert.equal(childRuns[0]?.dry_run, false);
        const childRun = await readRun(ada, child, childRuns[0]?.run_id as string);
        assert.deepEqual(childRun.output, { greet: { text: 'Hello Ada' } });
        const row = await runRow(childRuns[0]?.run_id as string);
        assert.equal(row.parent_run_id, r.run_id);
        assert.deepEqual(JSON.parse(row.trigger_json), { name: 'Ada' });
        // The parent's own runs list does not include the child.
        const parentRuns = ok(
          await ada.call('read_automation', { automation_id: parent.automation_id, include_runs: true }),
        ).runs as RunInfo[];
        assert.deepEqual(
          parentRuns.map((x) => x.run_id),
          [r.run_id],
        );
      });

      it('fails the subflow node when the child run fails', async () => {
        const child = await publish(
          ada,
          plan('Failing child', [
            capability('read', 'documents.read_document', { document_id: lit('doc_made_up') }),
          ]),
        );
        const parent = await publish(
          ada,
          plan('Parent of failing', [{ id: 'sub', kind: 'subflow', automation_id: child.automation_id }]),
        );
        const r = await runToEnd(ada, parent);
        assert.equal(r.status, 'failed');
        assert.equal(nodeOf(r, 'sub').status, 'failed');
        assert.match(nodeOf(r, 'sub').error ?? '', /Artifact not found/);
        assert.match(r.error ?? '', /^sub: /);
      });

      describe('approval', () => {
        const guarded = (text: string, extra: Json = {}) =>
          plan('Guarded post', [approval('ok', extra), postMessage('post', text)], chain('ok', 'post'));

        it('puts a card in the session and continues once approved', async () => {
          const a = await publish(ada, guarded('approved text'));
          const runId = await run(ada, a);
          await engine.drain();
          let r = await readRun(ada, a, runId);
          assert.equal(r.status, 'waiting');
          assert.deepEqual(statuses(r), { ok: 'waiting' });
          const card = await pendingCard(a.session_id);
          assert.equal(card.run_id, runId);
          assert.equal(card.node_id, 'ok');
          assert.equal(card.message, 'Go ahead with ok?');
          assert.equal(
            (await sessionMessages(a.session_id)).filter((m) => m.body === 'approved text').length,
            0,
          );

          const decided = await h.services.automations.decideApproval(adaActor, card.approval_id, {
            decision: 'approve',
            note: 'fine',
          });
          assert.equal(decided.status, 'approved');
          await engine.drain();
          r = await readRun(ada, a, runId);
          assert.equal(r.status, 'succeeded', JSON.stringify(r));
          assert.deepEqual(statuses(r), { ok: 'succeeded', post: 'succeeded' });
          const out = await outputs(runId);
          assert.equal(out.ok?.approved, true);
          assert.equal(out.ok?.by, 'ada@acme.test');
          assert.equal(out.ok?.note, 'fine');
          assert.ok(!Number.isNaN(Date.parse(String(out.ok?.at))));
          const messages = await sessionMessages(a.session_id);
          assert.equal(messages.filter((m) => m.body === 'approved text').length, 1);
          const cardAfter = messages.map((m) => m.card).find((c) => c?.approval_id === card.approval_id);
          assert.equal(cardAfter?.status, 'approved');
        });

        it('cancels the run when rejected', async () => {
          const a = await publish(ada, guarded('rejected text'));
          const runId = await run(ada, a);
          await engine.drain();
          const card = await pendingCard(a.session_id);
          await h.services.automations.decideApproval(adaActor, card.approval_id, {
            decision: 'reject',
            note: 'no',
          });
          await engine.drain();
          const r = await readRun(ada, a, runId);
          assert.equal(r.status, 'cancelled');
          assert.equal(nodeOf(r, 'ok').status, 'failed');
          assert.equal(
            r.nodes.some((n) => n.node_id === 'post' && n.status === 'succeeded'),
            false,
          );
          assert.equal(
            (await sessionMessages(a.session_id)).filter((m) => m.body === 'rejected text').length,
            0,
          );
          assert.equal((await automationRow(a.automation_id)).consecutive_failures, 0);
        });

        it('refuses a decision from someone who is not an approver', async () => {
          const shared = await publish(ada, guarded('shared text'), { scope: 'workspace' });
          const runId = await run(ada, shared);
          await engine.drain();
          const card = await pendingCard(shared.session_id);
          await assert.rejects(
            h.services.automations.decideApproval(bobActor, card.approval_id, { decision: 'approve' }),
            { message: 'Only the automation’s creator can decide this approval' },
          );
          assert.equal((await readRun(ada, shared, runId)).status, 'waiting');

          const named = await publish(ada, guarded('named text', { approvers: ['cy@acme.test'] }), {
            scope: 'workspace',
          });
          const namedRun = await run(ada, named);
          await engine.drain();
          const namedCard = await pendingCard(named.session_id);
          await assert.rejects(
            h.services.automations.decideApproval(adaActor, namedCard.approval_id, { decision: 'approve' }),
            { message: 'Only cy@acme.test can decide this approval' },
          );
          await h.services.automations.decideApproval(h.actor('cy@acme.test'), namedCard.approval_id, {
            decision: 'approve',
          });
          await engine.drain();
          assert.equal((await readRun(ada, named, namedRun)).status, 'succeeded');
          await assert.rejects(
            h.services.automations.decideApproval(h.actor('cy@acme.test'), namedCard.approval_id, {
              decision: 'reject',
            }),
            { message: 'This approval is already approved' },
          );
        });

        it('lets a named approver decide on a personal automation', async () => {
          const a = await publish(ada, guarded('named personal text', { approvers: ['bob@acme.test'] }));
          const runId = await run(ada, a);
          await engine.drain();
          const card = await pendingCard(a.session_id);
          await h.services.automations.decideApproval(bobActor, card.approval_id, { decision: 'approve' });
          await engine.drain();
          assert.equal((await readRun(ada, a, runId)).status, 'succeeded');
        });

        it('fails the run when the approval times out with on_timeout fail', async () => {
          const a = await publish(ada, guarded('late text', { timeout_s: 60 }));
          const runId = await run(ada, a);
          await engine.drain();
          assert.equal((await readRun(ada, a, runId)).status, 'waiting');
          await makeDue(runId);
          await engine.drain();
          const r = await readRun(ada, a, runId);
          assert.equal(r.status, 'failed');
          assert.equal(nodeOf(r, 'ok').status, 'failed');
          assert.match(nodeOf(r, 'ok').error ?? '', /timed out/);
          assert.match(r.error ?? '', /^ok: /);
          assert.equal((await sessionMessages(a.session_id)).filter((m) => m.body === 'late text').length, 0);
          const stored = await database()
            .selectFrom('approvals')
            .select('status')
            .where('run_id', '=', runId)
            .executeTakeFirstOrThrow();
          assert.equal(stored.status, 'timed_out');
        });

        it('skips what it guards and succeeds when it times out with on_timeout skip', async () => {
          const p = plan(
            'Skip on timeout',
            [
              capability('read', 'documents.read_document', { document_id: lit(roadmap()) }),
              approval('ok', { timeout_s: 60, on_timeout: 'skip' }),
              postMessage('post', 'skipped text'),
              { id: 'after', kind: 'notify', message: lit('after the post') },
              {
                id: 'aside',
                kind: 'transform',
                op: 'get',
                input: { value: ref('read', 'title') },
                args: { path: '' },
              },
            ],
            [...chain('read', 'ok', 'post', 'after'), { from: 'read', to: 'aside' }],
          );
          const a = await publish(ada, p);
          const runId = await run(ada, a);
          await engine.drain();
          await makeDue(runId);
          await engine.drain();
          const r = await readRun(ada, a, runId);
          assert.equal(r.status, 'succeeded', JSON.stringify(r));
          assert.deepEqual(statuses(r), {
            read: 'succeeded',
            aside: 'succeeded',
            ok: 'skipped',
            post: 'skipped',
            after: 'skipped',
          });
          const bodies = (await sessionMessages(a.session_id)).map((m) => m.body);
          assert.equal(bodies.includes('skipped text'), false);
          assert.equal(bodies.includes('after the post'), false);
          assert.deepEqual(r.output, { aside: { value: 'Roadmap' } });
        });
      });

      it('notifies the session or the creator', async () => {
        const p = plan('Notify', [
          { id: 'here', kind: 'notify', message: lit('to the session') },
          { id: 'creator', kind: 'notify', message: lit('to the creator'), to: 'creator' },
        ]);
        const a = await publish(bob, p);
        const r = await runToEnd(bob, a);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        const messages = await sessionMessages(a.session_id, bobActor);
        const posted = messages.filter((m) => m.body === 'to the session');
        assert.equal(posted.length, 1);
        const out = await outputs(r.run_id);
        assert.equal(out.here?.message_id, posted[0]?.message_id);
        const notes = await database()
          .selectFrom('notifications')
          .selectAll()
          .where('id', '=', String(out.creator?.message_id))
          .execute();
        assert.equal(notes.length, 1);
        assert.equal(notes[0]?.person_id, bobActor.personId);
        assert.match(notes[0]?.body ?? '', /to the creator/);
        assert.equal(
          messages.some((m) => m.body.includes('to the creator')),
          false,
        );
      });

      it('waits on a delay and finishes once it is due', async () => {
        const p = plan(
          'Delay',
          [
            { id: 'wait', kind: 'delay', seconds: 3600 },
            { id: 'done', kind: 'notify', message: lit('delay over') },
          ],
          chain('wait', 'done'),
        );
        const a = await publish(ada, p);
        const runId = await run(ada, a);
        await engine.drain();
        let r = await readRun(ada, a, runId);
        assert.equal(r.status, 'waiting');
        assert.deepEqual(statuses(r), { wait: 'waiting' });
        const waitRow = await database()
          .selectFrom('run_nodes')
          .select('wait_until')
          .where('run_id', '=', runId)
          .where('node_key', '=', 'wait')
          .executeTakeFirstOrThrow();
        assert.ok((waitRow.wait_until ?? 0) > Date.now() + 3_500_000, 'waits about an hour');
        // Nothing is due yet: another drain changes nothing.
        await engine.drain();
        assert.equal((await readRun(ada, a, runId)).status, 'waiting');

        await makeDue(runId);
        await engine.drain();
        r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        assert.deepEqual(statuses(r), { wait: 'succeeded', done: 'succeeded' });
        const out = await outputs(runId);
        assert.ok(!Number.isNaN(Date.parse(String(out.wait?.resumed_at))));
        assert.equal((await sessionMessages(a.session_id)).filter((m) => m.body === 'delay over').length, 1);
      });

      it('waits on a delay until an instant given by a binding', async () => {
        const soon = new Date(Date.now() + 3_600_000).toISOString();
        const p = plan('Delay until', [{ id: 'wait', kind: 'delay', until: lit(soon) }]);
        const a = await publish(ada, p);
        const runId = await run(ada, a);
        await engine.drain();
        assert.equal((await readRun(ada, a, runId)).status, 'waiting');
        const row = await database()
          .selectFrom('run_nodes')
          .select('wait_until')
          .where('run_id', '=', runId)
          .executeTakeFirstOrThrow();
        assert.equal(row.wait_until, Date.parse(soon));
        await makeDue(runId);
        await engine.drain();
        assert.equal((await readRun(ada, a, runId)).status, 'succeeded');
      });
    });

    // ── bindings ──────────────────────────────────────────────────────────────────────────

    describe('bindings', () => {
      it('resolves literals, refs with paths into arrays, and the manual trigger payload', async () => {
        const data = JSON.stringify({ items: [{ title: 'first' }, { title: 'second', tags: ['x', 'y'] }] });
        const p = plan(
          'Bindings',
          [
            { id: 'parse', kind: 'transform', op: 'json_parse', input: { text: lit(data) } },
            {
              id: 'use',
              kind: 'transform',
              op: 'merge',
              input: {
                literal: lit({ literal: { nested: [1, 2] } }),
                refs: lit({}),
              },
            },
            {
              id: 'pick',
              kind: 'transform',
              op: 'coalesce',
              input: { title: ref('parse', 'value.items.0.title') },
            },
            {
              id: 'deep',
              kind: 'transform',
              op: 'coalesce',
              input: { tag: ref('parse', 'value.items.1.tags.1') },
            },
            {
              id: 'whole',
              kind: 'transform',
              op: 'coalesce',
              input: { all: ref('parse', '') },
            },
            {
              id: 'absent',
              kind: 'transform',
              op: 'coalesce',
              input: { none: ref('parse', 'value.items.5.title'), then: lit('default') },
            },
            { id: 'payload', kind: 'transform', op: 'coalesce', input: { p: trig('') } },
            { id: 'by', kind: 'transform', op: 'coalesce', input: { by: trig('by') } },
          ],
          [
            { from: 'parse', to: 'pick' },
            { from: 'parse', to: 'deep' },
            { from: 'parse', to: 'whole' },
            { from: 'parse', to: 'absent' },
          ],
        );
        const a = await publish(ada, p);
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        const out = await outputs(r.run_id);
        assert.deepEqual(out.use, { value: { literal: { nested: [1, 2] } } });
        assert.deepEqual(out.pick, { value: 'first' });
        assert.deepEqual(out.deep, { value: 'y' });
        assert.deepEqual(out.whole, { value: { value: JSON.parse(data) } });
        assert.deepEqual(out.absent, { value: 'default' });
        assert.deepEqual(out.payload, { value: { manual: true, by: 'Ada Lovelace' } });
        assert.deepEqual(out.by, { value: 'Ada Lovelace' });
        const row = await runRow(r.run_id);
        assert.deepEqual(JSON.parse(row.trigger_json), { manual: true, by: 'Ada Lovelace' });

        // Bob's manual run names Bob.
        const mine = await publish(
          bob,
          plan('Who', [{ id: 'by', kind: 'transform', op: 'coalesce', input: { by: trig('by') } }]),
        );
        const bobRun = await runToEnd(bob, mine);
        assert.deepEqual(bobRun.output, { by: { value: 'Bob Stone' } });
      });
    });

    // ── dry runs ──────────────────────────────────────────────────────────────────────────

    describe('dry runs', () => {
      it('simulates every built-in write and changes nothing, while reads run for real', async () => {
        const target = await scratchDocument('Dry target');
        const p = plan(
          'Everything dry',
          [
            capability('read', 'documents.read_document', { document_id: lit(roadmap()) }),
            capability('page', 'pages.read_page', { page_id: lit(landing()) }),
            approval('ok'),
            capability('create', 'documents.create_document', {
              title: lit('Never made'),
              content_markdown: ref('read', 'markdown'),
            }),
            capability('append', 'documents.append_to_document', {
              document_id: lit(target),
              content_markdown: lit('Never appended.'),
            }),
            capability('write', 'pages.write_page', {
              page_id: lit(landing()),
              html: lit('<p>never written</p>'),
              expected_version: ref('page', 'version'),
            }),
            capability('comment', 'comments.add_comment', {
              document_id: lit(target),
              body: lit('Never commented'),
            }),
            postMessage('post', 'never posted'),
            capability('hook', 'http.post', { url: lit(hookUrl), json: lit({ never: 'sent' }) }),
            { id: 'tell', kind: 'notify', message: lit('never notified') },
            { id: 'tellme', kind: 'notify', message: lit('never notified either'), to: 'creator' },
            { id: 'wait', kind: 'delay', seconds: 86_400 },
            {
              id: 'afterwait',
              kind: 'transform',
              op: 'template',
              input: {},
              args: { template: 'after the wait' },
            },
          ],
          [
            { from: 'read', to: 'ok' },
            { from: 'page', to: 'ok' },
            ...['create', 'append', 'write', 'comment', 'post', 'hook', 'tell', 'tellme', 'wait'].map(
              (to) => ({
                from: 'ok',
                to,
              }),
            ),
            { from: 'wait', to: 'afterwait' },
          ],
        );
        const a = await publish(ada, p);
        const pageBefore = (await h.services.pages.read(adaActor, landing())) as {
          version: number;
          html: string;
        };
        const before = await footprint();
        const r = await runToEnd(ada, a, true);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        assert.equal(r.dry_run, true);
        assert.equal(r.cause, 'dry_run');
        assert.deepEqual(statuses(r), {
          read: 'succeeded',
          page: 'succeeded',
          ok: 'simulated',
          create: 'simulated',
          append: 'simulated',
          write: 'simulated',
          comment: 'simulated',
          post: 'simulated',
          hook: 'simulated',
          tell: 'simulated',
          tellme: 'simulated',
          wait: 'skipped',
          afterwait: 'succeeded',
        });
        const after = await footprint();
        assert.deepEqual(after, before, 'a dry run writes nothing');
        assert.deepEqual(
          hookBodies.filter((b) => b.includes('never')),
          [],
        );

        const out = await outputs(r.run_id);
        assert.match(String(out.read?.markdown), /Ship it\./, 'reads ran for real');
        assert.equal(out.page?.version, pageBefore.version);
        const described = (id: string) => out[id] as { simulated: boolean; would_call: string; with: Json };
        assert.deepEqual(described('create'), {
          simulated: true,
          would_call: 'documents.create_document',
          with: { title: 'Never made', content_markdown: out.read?.markdown },
        });
        assert.deepEqual(described('append').with, {
          document_id: target,
          content_markdown: 'Never appended.',
        });
        assert.deepEqual(described('write').with, {
          page_id: landing(),
          html: '<p>never written</p>',
          expected_version: pageBefore.version,
        });
        assert.equal(described('comment').would_call, 'comments.add_comment');
        assert.equal(described('comment').with.body, 'Never commented');
        assert.deepEqual(described('post').with, { text: 'never posted' });
        assert.deepEqual(described('hook').with, { url: hookUrl, json: { never: 'sent' } });
        assert.equal(out.tell?.simulated, true);
        assert.equal(out.tell?.message, 'never notified');
        assert.equal(out.tellme?.would_notify, 'creator');
        assert.equal(out.ok?.approved, true);
        const waitRow = await database()
          .selectFrom('run_nodes')
          .select('wait_until')
          .where('run_id', '=', r.run_id)
          .where('node_key', '=', 'wait')
          .executeTakeFirstOrThrow();
        assert.equal(waitRow.wait_until, null, 'the delay did not wait');
        const approvals = await database()
          .selectFrom('approvals')
          .select('id')
          .where('run_id', '=', r.run_id)
          .execute();
        assert.equal(approvals.length, 0, 'no approval was asked for');
        // A dry run neither counts as a failure nor resets anything.
        assert.equal((await automationRow(a.automation_id)).consecutive_failures, 0);
        const page = (await h.services.pages.read(adaActor, landing())) as { version: number; html: string };
        assert.deepEqual([page.version, page.html], [pageBefore.version, pageBefore.html]);
      });

      it('runs a subflow child as a dry run too', async () => {
        const child = await publish(ada, plan('Writing child', [postMessage('post', 'child wrote')]), {
          write_approval: 'automatic',
        });
        const parent = await publish(
          ada,
          plan(
            'Dry parent',
            [approval('ok'), { id: 'sub', kind: 'subflow', automation_id: child.automation_id }],
            chain('ok', 'sub'),
          ),
        );
        const before = await footprint();
        const r = await runToEnd(ada, parent, true);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        assert.deepEqual(await footprint(), before);
        const childRuns = await runsOf(child.automation_id);
        assert.equal(childRuns.length, 1);
        assert.equal(childRuns[0]?.dry_run, 1);
        assert.equal(childRuns[0]?.cause, 'subflow');
      });
    });

    // ── retries ───────────────────────────────────────────────────────────────────────────

    describe('retries', () => {
      it('tries a failing capability max_attempts times, then fails the run naming the node', async () => {
        const p = plan('Retry', [
          capability(
            'read',
            'documents.read_document',
            { document_id: lit('doc_does_not_exist') },
            { retry: { max_attempts: 3, backoff_s: 0 } },
          ),
        ]);
        const a = await publish(ada, p);
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'failed');
        const node = nodeOf(r, 'read');
        assert.equal(node.status, 'failed');
        assert.equal(node.attempt, 3);
        assert.match(node.error ?? '', /Artifact not found/);
        assert.match(r.error ?? '', /^read: .*Artifact not found/);
        const listed = ok(
          await ada.call('read_automation', { automation_id: a.automation_id, include_runs: true }),
        );
        const row = (listed.runs as RunInfo[])[0];
        assert.deepEqual([row?.status, row?.error], ['failed', r.error]);
      });

      it('fails at the first attempt without retry', async () => {
        const p = plan(
          'No retry',
          [
            capability('read', 'documents.read_document', { document_id: lit('doc_does_not_exist') }),
            { id: 'next', kind: 'notify', message: lit('never reached') },
          ],
          chain('read', 'next'),
        );
        const a = await publish(ada, p);
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'failed');
        assert.equal(nodeOf(r, 'read').attempt, 1);
        assert.equal(nodeOf(r, 'read').status, 'failed');
        assert.match(r.error ?? '', /^read: .*Artifact not found/);
        assert.equal(
          r.nodes.some((n) => n.node_id === 'next' && n.status === 'succeeded'),
          false,
        );
        assert.equal(
          (await sessionMessages(a.session_id)).some((m) => m.body === 'never reached'),
          false,
        );
      });

      it('waits for the backoff between attempts', async () => {
        const p = plan('Backoff', [
          capability(
            'read',
            'documents.read_document',
            { document_id: lit('doc_does_not_exist') },
            { retry: { max_attempts: 2, backoff_s: 600 } },
          ),
        ]);
        const a = await publish(ada, p);
        const runId = await run(ada, a);
        await engine.drain();
        let r = await readRun(ada, a, runId);
        assert.notEqual(r.status, 'failed');
        assert.equal(nodeOf(r, 'read').attempt, 1);
        await database()
          .updateTable('run_nodes')
          .set({ wait_until: Date.now() - 1 })
          .where('run_id', '=', runId)
          .execute();
        await database()
          .updateTable('jobs')
          .set({ available_at: Date.now() - 1 })
          .where('run_id', '=', runId)
          .execute();
        await engine.drain();
        r = await readRun(ada, a, runId);
        assert.equal(r.status, 'failed');
        assert.equal(nodeOf(r, 'read').attempt, 2);
      });
    });

    // ── writes happen once ────────────────────────────────────────────────────────────────

    describe('built-in writes happen once', () => {
      it('does nothing more when a finished run is advanced again', async () => {
        const p = plan('Once', [
          postMessage('post', 'only once'),
          capability('create', 'documents.create_document', { title: lit('Once made') }),
        ]);
        const a = await publish(ada, p, { write_approval: 'automatic' });
        const runId = await run(ada, a);
        await Promise.all([engine.drain(), createEngine(h.services, { leaseMs: 5000 }).drain()]);
        await engine.advance(runId);
        await engine.advance(runId);
        await engine.drain();
        const r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded');
        assert.equal((await sessionMessages(a.session_id)).filter((m) => m.body === 'only once').length, 1);
        const made = await database()
          .selectFrom('artifacts')
          .select('id')
          .where('title', '=', 'Once made')
          .execute();
        assert.equal(made.length, 1);
      });

      interface WriteCase {
        key: string;
        /** The node's input, and how many times the write has landed since. */
        prepare(): Promise<{ input: Json; landed: () => Promise<number> }>;
      }
      const rowsWhere = async (table: 'messages' | 'artifacts' | 'threads', column: string, value: string) =>
        (
          await database()
            .selectFrom(table)
            .select('id')
            .where(column as 'id', '=', value)
            .execute()
        ).length;
      const writes: WriteCase[] = [
        {
          key: 'conversations.post_message',
          prepare: async () => ({
            input: { text: lit('effect reused') },
            landed: () => rowsWhere('messages', 'body', 'effect reused'),
          }),
        },
        {
          key: 'documents.create_document',
          prepare: async () => ({
            input: { title: lit('Effect document'), scope: lit('org') },
            landed: () => rowsWhere('artifacts', 'title', 'Effect document'),
          }),
        },
        {
          key: 'documents.append_to_document',
          prepare: async () => {
            const id = await scratchDocument('Append once');
            return {
              input: { document_id: lit(id), content_markdown: lit('Appended exactly once.') },
              landed: async () => {
                const doc = await h.services.documents.read(adaActor, { document_id: id });
                return doc.markdown.split('Appended exactly once.').length - 1;
              },
            };
          },
        },
        {
          key: 'pages.write_page',
          prepare: async () => {
            const page = (await h.services.pages.read(adaActor, landing())) as { version: number };
            return {
              input: {
                page_id: lit(landing()),
                html: lit('<p>once</p>'),
                expected_version: lit(page.version),
              },
              landed: async () =>
                ((await h.services.pages.read(adaActor, landing())) as { version: number }).version -
                page.version,
            };
          },
        },
        {
          key: 'comments.add_comment',
          prepare: async () => ({
            input: {
              document_id: lit(await scratchDocument('Comment once')),
              body: lit('Commented exactly once'),
            },
            landed: () => rowsWhere('threads', 'body', 'Commented exactly once'),
          }),
        },
        {
          key: 'http.post',
          prepare: async () => ({
            input: { url: lit(hookUrl), body: lit('posted exactly once') },
            landed: async () => hookBodies.filter((b) => b === 'posted exactly once').length,
          }),
        },
      ];

      for (const write of writes) {
        it(`does not repeat ${write.key} when its node is run again`, async () => {
          const { input, landed } = await write.prepare();
          const p = plan(`Effect ${write.key}`, [capability('w', write.key, input)]);
          const a = await publish(ada, p, { write_approval: 'automatic' });
          const runId = await run(ada, a);
          await engine.drain();
          const first = await readRun(ada, a, runId);
          assert.equal(first.status, 'succeeded', JSON.stringify(first));
          const output = (await outputs(runId)).w;
          assert.equal(await landed(), 1);

          // As if the worker died after the write but before storing the node's outcome.
          await database()
            .updateTable('run_nodes')
            .set({ status: 'pending', attempt: 0, output_json: null, finished_at: null })
            .where('run_id', '=', runId)
            .execute();
          await database()
            .updateTable('runs')
            .set({ status: 'running', finished_at: null })
            .where('id', '=', runId)
            .execute();
          await engine.advance(runId);
          const again = await readRun(ada, a, runId);
          assert.equal(again.status, 'succeeded', JSON.stringify(again));
          assert.equal(await landed(), 1, `${write.key} was not repeated`);
          assert.deepEqual((await outputs(runId)).w, output, 'the recorded outcome is reused');
        });
      }
    });

    // ── acting as the creator ─────────────────────────────────────────────────────────────

    describe('rights', () => {
      it('runs with the creator’s rights at run time', async () => {
        const secret = await scratchDocument('Ada only', adaActor, 'user');
        const bobs = await publish(
          bob,
          plan('Peek', [capability('read', 'documents.read_document', { document_id: lit(secret) })]),
        );
        const r = await runToEnd(bob, bobs);
        assert.equal(r.status, 'failed');
        assert.equal(nodeOf(r, 'read').error, 'Artifact not found');
        assert.equal(r.error, 'read: Artifact not found');

        // Ada's own automation reads it.
        const adas = await publish(
          ada,
          plan('Own', [capability('read', 'documents.read_document', { document_id: lit(secret) })]),
        );
        assert.equal((await runToEnd(ada, adas)).status, 'succeeded');

        // A role given later counts at the next run, and taking it away counts too.
        await database()
          .insertInto('artifact_roles')
          .values({ artifact_id: secret, person_id: bobActor.personId, role: 'viewer' })
          .execute();
        assert.equal((await runToEnd(bob, bobs)).status, 'succeeded');
        await database()
          .deleteFrom('artifact_roles')
          .where('artifact_id', '=', secret)
          .where('person_id', '=', bobActor.personId)
          .execute();
        assert.equal((await runToEnd(bob, bobs)).status, 'failed');
      });

      it('refuses a write the creator may not make', async () => {
        // Bob is only a commenter on the landing page.
        const p = plan(
          'Bob writes',
          [
            capability('page', 'pages.read_page', { page_id: lit(landing()) }),
            capability('write', 'pages.write_page', {
              page_id: lit(landing()),
              html: lit('<p>bob</p>'),
              expected_version: ref('page', 'version'),
            }),
          ],
          chain('page', 'write'),
        );
        const before = (await h.services.pages.read(adaActor, landing())) as { version: number };
        const r = await runToEnd(bob, await publish(bob, p, { write_approval: 'automatic' }));
        assert.equal(r.status, 'failed');
        assert.equal(nodeOf(r, 'page').status, 'succeeded');
        assert.equal(nodeOf(r, 'write').status, 'failed');
        const afterPage = (await h.services.pages.read(adaActor, landing())) as { version: number };
        assert.equal(afterPage.version, before.version);
      });
    });

    // ── pausing ───────────────────────────────────────────────────────────────────────────

    describe('pausing', () => {
      it('holds the next write of a waiting run until the automation is enabled again', async () => {
        const p = plan(
          'Pause me',
          [approval('ok'), postMessage('post', 'after the pause')],
          chain('ok', 'post'),
        );
        const a = await publish(ada, p);
        const runId = await run(ada, a);
        await engine.drain();
        const card = await pendingCard(a.session_id);
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: false,
          }),
        );
        await h.services.automations.decideApproval(adaActor, card.approval_id, { decision: 'approve' });
        await engine.drain();
        let r = await readRun(ada, a, runId);
        assert.equal(r.status, 'waiting');
        assert.deepEqual(statuses(r), { ok: 'succeeded' });
        const count = async () =>
          (await sessionMessages(a.session_id)).filter((m) => m.body === 'after the pause').length;
        assert.equal(await count(), 0);
        await engine.drain();
        assert.equal(await count(), 0);

        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: true,
          }),
        );
        await engine.drain();
        r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        assert.equal(await count(), 1);
      });

      it('does not start a queued run of a paused automation until it is enabled', async () => {
        const a = await publish(ada, plan('Queued', [postMessage('post', 'queued write')]), {
          write_approval: 'automatic',
        });
        const runId = await run(ada, a);
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: false,
          }),
        );
        await engine.drain();
        let r = await readRun(ada, a, runId);
        assert.equal(r.status, 'queued');
        assert.deepEqual(r.nodes, []);

        // Dry runs go on while paused.
        const dry = await runToEnd(ada, a, true);
        assert.equal(dry.status, 'succeeded');
        assert.deepEqual(statuses(dry), { post: 'simulated' });
        assert.equal(
          (await sessionMessages(a.session_id)).filter((m) => m.body === 'queued write').length,
          0,
        );

        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: true,
          }),
        );
        await engine.drain();
        r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded');
        assert.equal(
          (await sessionMessages(a.session_id)).filter((m) => m.body === 'queued write').length,
          1,
        );
      });

      it('holds every step of a paused automation, reads included, until it is enabled', async () => {
        const child = await publish(
          ada,
          plan('Paused child', [{ id: 'x', kind: 'transform', op: 'now', input: {} }]),
        );
        const p = plan(
          'Paused mix',
          [
            { id: 'wait', kind: 'delay', seconds: 60 },
            capability('read', 'documents.read_document', { document_id: lit(roadmap()) }),
            { id: 'tell', kind: 'notify', message: lit('paused notify') },
            { id: 'sub', kind: 'subflow', automation_id: child.automation_id },
          ],
          [
            { from: 'wait', to: 'read' },
            { from: 'wait', to: 'tell' },
            { from: 'wait', to: 'sub' },
          ],
        );
        const a = await publish(ada, p);
        const runId = await run(ada, a);
        await engine.drain();
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: false,
          }),
        );
        await makeDue(runId);
        await engine.drain();
        let r = await readRun(ada, a, runId);
        assert.equal(r.status, 'waiting');
        assert.deepEqual(statuses(r), { wait: 'succeeded' });
        assert.equal((await runsOf(child.automation_id)).length, 0);
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: true,
          }),
        );
        await engine.drain();
        r = await readRun(ada, a, runId);
        assert.equal(r.status, 'succeeded', JSON.stringify(r));
        assert.equal(
          (await sessionMessages(a.session_id)).filter((m) => m.body === 'paused notify').length,
          1,
        );
      });
    });

    // ── schedules ─────────────────────────────────────────────────────────────────────────

    describe('schedules', () => {
      const echo = () =>
        plan('Echo schedule', [{ id: 'payload', kind: 'transform', op: 'coalesce', input: { p: trig('') } }]);

      async function makeDueNow(automationId: string, at = Date.now() - 60_000) {
        await database()
          .updateTable('automations')
          .set({ next_fire_at: at })
          .where('id', '=', automationId)
          .execute();
        return at;
      }

      it('fires a due schedule once with its payload and moves next_fire_at on', async () => {
        const a = await publish(ada, echo(), { trigger: DAILY });
        const published = await automationRow(a.automation_id);
        assert.ok((published.next_fire_at ?? 0) > Date.now());
        const due = await makeDueNow(a.automation_id);
        const before = Date.now();
        assert.equal(await engine.fireSchedules(), 1);
        const after = Date.now();
        const runs = await runsOf(a.automation_id);
        assert.equal(runs.length, 1);
        assert.equal(runs[0]?.cause, 'schedule');
        assert.equal(runs[0]?.dry_run, 0);
        const payload = JSON.parse(runs[0]?.trigger_json ?? '{}') as Json;
        assert.deepEqual(Object.keys(payload).sort(), ['fired_at', 'scheduled_for', 'timezone']);
        assert.equal(payload.scheduled_for, new Date(due).toISOString());
        assert.equal(payload.timezone, 'Europe/Berlin');
        const firedAt = Date.parse(String(payload.fired_at));
        assert.ok(firedAt >= before && firedAt <= after);
        const row = await automationRow(a.automation_id);
        assert.equal(row.last_fired_at, firedAt);
        assert.ok((row.next_fire_at ?? 0) > after, 'the next fire time is in the future');
        const read = ok(await ada.call('read_automation', { automation_id: a.automation_id }));
        assert.equal(read.last_fired_at, new Date(firedAt).toISOString());

        assert.equal(await engine.fireSchedules(), 0, 'a second call fires nothing');
        await engine.drain();
        assert.equal((await runsOf(a.automation_id)).length, 1);
        const r = await readRun(ada, a, runs[0]?.id as string);
        assert.equal(r.status, 'succeeded');
        assert.deepEqual(r.output, { payload: { value: payload } });
      });

      it('fires once when two engines look at the same time', async () => {
        const a = await publish(ada, echo(), { trigger: DAILY });
        await makeDueNow(a.automation_id);
        const second = createEngine(h.services, { leaseMs: 5000 });
        const fired = await Promise.all([
          engine.fireSchedules(),
          second.fireSchedules(),
          engine.fireSchedules(),
        ]);
        assert.equal(
          fired.reduce((x, y) => x + y, 0),
          1,
        );
        assert.equal((await runsOf(a.automation_id)).length, 1);
        await engine.drain();
      });

      it('fires a schedule missed over several instants once', async () => {
        const a = await publish(ada, echo(), { trigger: HOURLY });
        await makeDueNow(a.automation_id, Date.now() - 5 * 3_600_000);
        await engine.drain();
        const runs = await runsOf(a.automation_id);
        assert.equal(runs.length, 1);
        assert.equal(runs[0]?.status, 'succeeded');
      });

      it('does not fire a paused automation', async () => {
        const a = await publish(ada, echo(), { trigger: DAILY });
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: false,
          }),
        );
        assert.equal((await automationRow(a.automation_id)).next_fire_at, null);
        await makeDueNow(a.automation_id);
        assert.equal(await engine.fireSchedules(), 0);
        await engine.drain();
        assert.equal((await runsOf(a.automation_id)).length, 0);

        const paused = await publish(ada, echo(), { trigger: DAILY, enabled: false });
        await makeDueNow(paused.automation_id);
        await engine.drain();
        assert.equal((await runsOf(paused.automation_id)).length, 0);
      });
    });

    // ── events ────────────────────────────────────────────────────────────────────────────

    describe('workspace events', () => {
      const echo = () =>
        plan('Echo event', [
          { id: 'doc', kind: 'transform', op: 'coalesce', input: { id: trig('data.document_id') } },
        ]);

      async function pause(a: Published) {
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: a.automation_id,
            enabled: false,
          }),
        );
      }

      it('starts a run when a document is created in the workspace, not in another', async () => {
        const events = listen();
        const a = await publish(ada, echo(), { trigger: ON_DOCUMENT });
        try {
          const viaService = await scratchDocument('Event one');
          await events.settled();
          const viaTool = ok(await bob.call('create_document', { title: 'Event two', scope: 'org' }));
          await events.settled();
          const eve = h.actor('eve@other.test');
          await h.services.documents.create(eve, { title: 'Elsewhere', scope: 'org' });
          await events.settled();
          await engine.drain();
          const runs = await runsOf(a.automation_id);
          assert.equal(runs.length, 2);
          for (const r of runs) {
            assert.equal(r.cause, 'event');
            assert.equal(r.status, 'succeeded');
          }
          const payload = JSON.parse(runs[0]?.trigger_json ?? '{}') as Json;
          assert.equal(payload.provider, 'workspace');
          assert.equal(payload.event, 'document.created');
          assert.equal((payload.data as Json).document_id, viaService);
          assert.deepEqual(JSON.parse(runs[0]?.output_json ?? '{}'), { doc: { value: viaService } });
          assert.deepEqual(JSON.parse(runs[1]?.output_json ?? '{}'), { doc: { value: viaTool.document_id } });
          assert.equal((await automationRow(a.automation_id)).dropped_events, 0);
        } finally {
          events.off();
          await pause(a);
        }
      });

      it('drops events inside the cooldown and counts them', async () => {
        const events = listen();
        const a = await publish(ada, echo(), { trigger: ON_DOCUMENT, cooldown_s: 3600 });
        try {
          await scratchDocument('Cool one');
          await events.settled();
          await scratchDocument('Cool two');
          await scratchDocument('Cool three');
          await events.settled();
          await engine.drain();
          assert.equal((await runsOf(a.automation_id)).length, 1);
          assert.equal((await automationRow(a.automation_id)).dropped_events, 2);
          // Once the window has passed, the next event starts a run again.
          await database()
            .updateTable('automations')
            .set({ last_event_at: Date.now() - 3_601_000 })
            .where('id', '=', a.automation_id)
            .execute();
          await scratchDocument('Cool four');
          await events.settled();
          await engine.drain();
          assert.equal((await runsOf(a.automation_id)).length, 2);
          assert.equal((await automationRow(a.automation_id)).dropped_events, 2);
        } finally {
          events.off();
          await pause(a);
        }
      });

      it('does not start a paused automation', async () => {
        const events = listen();
        const a = await publish(ada, echo(), { trigger: ON_DOCUMENT, enabled: false });
        try {
          await scratchDocument('While paused');
          await events.settled();
          await engine.drain();
          assert.equal((await runsOf(a.automation_id)).length, 0);
        } finally {
          events.off();
        }
      });

      it('does not trigger itself with the document its own run creates', async () => {
        const events = listen();
        const p = plan('Self', [
          capability('create', 'documents.create_document', {
            title: lit('Made by the event run'),
            scope: lit('org'),
          }),
        ]);
        const a = await publish(ada, p, { trigger: ON_DOCUMENT, write_approval: 'automatic' });
        try {
          await scratchDocument('Starts it');
          await events.settled();
          await engine.drain();
          await events.settled();
          await engine.drain();
          const runs = await runsOf(a.automation_id);
          assert.equal(runs.length, 1);
          assert.equal(runs[0]?.status, 'succeeded');
          const made = await database()
            .selectFrom('artifacts')
            .select('id')
            .where('title', '=', 'Made by the event run')
            .execute();
          assert.equal(made.length, 1);
        } finally {
          events.off();
          await pause(a);
        }
      });
      it('stops a chain of automations triggering each other', async () => {
        const events = listen();
        const maker = (title: string) =>
          plan('Chain', [
            capability('create', 'documents.create_document', { title: lit(title), scope: lit('org') }),
          ]);
        const first = await publish(ada, maker('Chain A'), {
          trigger: ON_DOCUMENT,
          write_approval: 'automatic',
        });
        const second = await publish(ada, maker('Chain B'), {
          trigger: ON_DOCUMENT,
          write_approval: 'automatic',
        });
        try {
          await scratchDocument('Chain start');
          for (let i = 0; i < 6; i++) {
            await events.settled();
            await engine.drain();
          }
          const runs = [...(await runsOf(first.automation_id)), ...(await runsOf(second.automation_id))];
          assert.ok(runs.length >= 2, 'the event started both');
          assert.ok(runs.length <= 6, `the chain stopped (${runs.length} runs)`);
          const pending = await database()
            .selectFrom('runs')
            .select('id')
            .where('automation_id', 'in', [first.automation_id, second.automation_id])
            .where('status', '=', 'queued')
            .execute();
          assert.deepEqual(pending, []);
        } finally {
          events.off();
          await pause(first);
          await pause(second);
        }
      });
    });

    // ── failures and notifications ────────────────────────────────────────────────────────

    describe('failures', () => {
      it('counts consecutive failures, resets them on success, and tells the creator about problems', async () => {
        const secret = await scratchDocument('Sometimes readable', adaActor, 'user');
        const a = await publish(
          bob,
          plan('Flaky', [capability('read', 'documents.read_document', { document_id: lit(secret) })]),
        );
        const notes = async () =>
          database()
            .selectFrom('notifications')
            .selectAll()
            .where('person_id', '=', bobActor.personId)
            .where('kind', '=', 'automation')
            .execute();
        const failures = async () =>
          ok(await bob.call('read_automation', { automation_id: a.automation_id })).consecutive_failures;
        const notesBefore = (await notes()).length;

        const first = await runToEnd(bob, a);
        assert.equal(first.status, 'failed');
        assert.equal(await failures(), 1);
        const afterFirst = await notes();
        assert.equal(afterFirst.length, notesBefore + 1, 'notify problems tells the creator of a failure');
        assert.match(afterFirst.at(-1)?.body ?? '', /failed/);
        // Linked to the run by its stored id, said in words without it.
        assert.equal(afterFirst.at(-1)?.run_id, first.run_id);
        assert.doesNotMatch(afterFirst.at(-1)?.body ?? '', /run_/);
        const session = await sessionMessages(a.session_id, bobActor);
        assert.ok(
          session.some(
            (m) =>
              m.body.startsWith('A run failed') && (m.card as { run_id?: string })?.run_id === first.run_id,
          ),
        );

        assert.equal((await runToEnd(bob, a)).status, 'failed');
        assert.equal(await failures(), 2);
        // A dry run does not count.
        assert.equal((await runToEnd(bob, a, true)).status, 'failed');
        assert.equal(await failures(), 2);

        await database()
          .insertInto('artifact_roles')
          .values({ artifact_id: secret, person_id: bobActor.personId, role: 'viewer' })
          .execute();
        const fine = await runToEnd(bob, a);
        assert.equal(fine.status, 'succeeded');
        assert.equal(await failures(), 0);
        assert.equal((await notes()).length, notesBefore + 2, 'a success is not a problem');
      });

      it('with notify off says nothing; with everyRun tells every run', async () => {
        const count = async () =>
          (
            await database()
              .selectFrom('notifications')
              .select('id')
              .where('person_id', '=', adaActor.personId)
              .where('kind', '=', 'automation')
              .execute()
          ).length;
        const failing = plan('Quiet', [
          capability('read', 'documents.read_document', { document_id: lit('doc_gone') }),
        ]);
        const quiet = await publish(ada, failing, { notify: 'off' });
        let before = await count();
        assert.equal((await runToEnd(ada, quiet)).status, 'failed');
        assert.equal(await count(), before);

        const loud = await publish(ada, readPlan('Loud'), { notify: 'everyRun' });
        before = await count();
        assert.equal((await runToEnd(ada, loud)).status, 'succeeded');
        assert.equal(await count(), before + 1);
      });
    });

    // ── the polling loop ──────────────────────────────────────────────────────────────────

    it('a started engine picks up runs and workspace events by itself', async () => {
      const looping = createEngine(h.services, { leaseMs: 5000, pollMs: 20 });
      const onEvent = await publish(
        ada,
        plan('Loop event', [
          { id: 'doc', kind: 'transform', op: 'coalesce', input: { id: trig('data.document_id') } },
        ]),
        { trigger: ON_DOCUMENT },
      );
      const manual = await publish(ada, readPlan('Loop manual'));
      await looping.start();
      try {
        const runId = await run(ada, manual);
        const created = ok(await bob.call('create_document', { title: 'Loop doc', scope: 'org' }));
        const deadline = Date.now() + 10_000;
        let status = '';
        let eventRuns: Awaited<ReturnType<typeof runsOf>> = [];
        while (Date.now() < deadline) {
          status = (await readRun(ada, manual, runId)).status;
          eventRuns = await runsOf(onEvent.automation_id);
          if (status === 'succeeded' && eventRuns[0]?.status === 'succeeded') break;
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        assert.equal(status, 'succeeded');
        assert.equal(eventRuns.length, 1);
        assert.equal(eventRuns[0]?.status, 'succeeded');
        assert.deepEqual(JSON.parse(eventRuns[0]?.output_json ?? '{}'), {
          doc: { value: created.document_id },
        });
      } finally {
        await looping.stop();
        ok(
          await ada.call('edit_automation', {
            action: 'set_enabled',
            automation_id: onEvent.automation_id,
            enabled: false,
          }),
        );
      }
    });
  });
}
