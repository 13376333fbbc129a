import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { loadConfig } from '../src/config.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { acme, other, setup, type Harness } from './support/harness.ts';
import { ok } from './support/results.ts';

interface ActivityRow {
  id: string;
  tool: string;
  targets: string[];
  outcome: 'ok' | 'error';
  error_code?: string;
  duration_ms: number;
  at: number;
}

function listen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const bound = (server.address() as AddressInfo).port;
      server.close(() => resolve(bound));
    });
  });
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A free port whose successor is free too: the server also listens on PORT+1 for pages. */
async function freePortPair(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = await listen(0);
    if (port !== null && port < 65535 && (await listen(port + 1)) !== null) return port;
  }
  throw new Error('no two adjacent free ports');
}

for (const db of DATABASES) {
  describe(`activity history on ${db.name}`, () => {
    let h: Harness;
    let ids: Record<string, string>;
    beforeEach(async () => {
      h = await setup(db);
      ids = acme(h).artifacts;
    });
    afterEach(() => h.close());

    const activityOf = (email: string) => h.services.activity.list(h.actor(email)) as Promise<ActivityRow[]>;
    const byTool = (rows: ActivityRow[], tool: string) => {
      const found = rows.filter((r) => r.tool === tool);
      assert.equal(found.length, 1, `one ${tool} row expected, found ${found.length}`);
      return found[0]!;
    };

    it('records every successful call, reads included, with tool, target ids, outcome and time', async () => {
      const ada = await h.as('ada@acme.test');
      const before = Date.now();
      ok(await ada.call('read_page', { page_id: ids.landing }));
      ok(await ada.call('read_comments', { document_id: ids.roadmap }));
      const started = ok(await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: 'First' }));
      const threadId = started.thread_id as string;
      const replied = ok(
        await ada.call('add_comment', {
          document_id: ids.roadmap,
          thread_id: threadId,
          body_markdown: 'Second',
        }),
      );
      ok(
        await ada.call('resolve_comment', { document_id: ids.roadmap, thread_id: threadId, resolved: true }),
      );
      const after = Date.now();

      const rows = await activityOf('ada@acme.test');
      assert.equal(rows.length, 5);
      for (const row of rows) {
        assert.equal(row.outcome, 'ok', row.tool);
        assert.equal(row.error_code, undefined, row.tool);
        assert.ok(row.at >= before && row.at <= after, `${row.tool} at ${row.at}`);
      }
      assert.deepEqual(byTool(rows, 'read_page').targets, [ids.landing]);
      assert.deepEqual(byTool(rows, 'read_comments').targets, [ids.roadmap]);
      assert.deepEqual(byTool(rows, 'resolve_comment').targets.sort(), [ids.roadmap!, threadId].sort());
      const adds = rows.filter((r) => r.tool === 'add_comment');
      assert.equal(adds.length, 2);
      const targetSets = adds.map((r) => [...r.targets].sort());
      assert.ok(
        targetSets.some((t) => t.join() === [ids.roadmap!, threadId].sort().join()),
        `a row for the new thread: ${JSON.stringify(targetSets)}`,
      );
      const replyTargets = [ids.roadmap!, threadId, replied.comment_id as string].sort().join();
      assert.ok(
        targetSets.some((t) => t.join() === replyTargets),
        `a row for the reply: ${JSON.stringify(targetSets)}`,
      );
    });

    it('records failed calls with their outcome and error code', async () => {
      const ada = await h.as('ada@acme.test');
      const cy = await h.as('cy@acme.test');
      const readOnly = await h.as('bob@acme.test', ['documents:read']);

      const missing = 'doc_nothinghere000000000000';
      assert.equal((await ada.call('read_comments', { document_id: missing })).isError, true);
      assert.equal(
        (await ada.call('resolve_comment', { document_id: ids.roadmap, thread_id: 'thr_x', resolved: 'yes' }))
          .isError,
        true,
      );
      assert.equal(
        (await cy.call('add_comment', { document_id: ids.plan, body_markdown: 'no' })).isError,
        true,
      );
      assert.equal(
        (await readOnly.call('add_comment', { document_id: ids.roadmap, body_markdown: 'no' })).isError,
        true,
      );

      const adas = await activityOf('ada@acme.test');
      assert.equal(adas.length, 2);
      const notFound = byTool(adas, 'read_comments');
      assert.equal(notFound.outcome, 'error');
      assert.equal(notFound.error_code, 'not_found');
      assert.deepEqual(notFound.targets, [missing]);
      const invalid = byTool(adas, 'resolve_comment');
      assert.equal(invalid.outcome, 'error');
      assert.equal(invalid.error_code, 'invalid_argument');
      assert.deepEqual([...invalid.targets].sort(), [ids.roadmap!, 'thr_x'].sort());

      const cys = await activityOf('cy@acme.test');
      assert.equal(cys.length, 1);
      assert.equal(cys[0]!.tool, 'add_comment');
      assert.equal(cys[0]!.outcome, 'error');
      assert.equal(cys[0]!.error_code, 'read_only');
      assert.deepEqual(cys[0]!.targets, [ids.plan]);

      const bobs = await activityOf('bob@acme.test');
      assert.equal(bobs.length, 1);
      assert.equal(bobs[0]!.tool, 'add_comment');
      assert.equal(bobs[0]!.outcome, 'error');
      assert.equal(bobs[0]!.error_code, 'insufficient_scope');
    });

    it('records a call whose arguments are rejected as malformed', async () => {
      const ada = await h.as('ada@acme.test');
      const r = await ada.call('read_comments', { document_id: ids.roadmap, include_resolved: 'yes' });
      assert.equal(r.isError, true);
      const bad = await ada.call('read_page', { page_id: 42 });
      assert.equal(bad.isError, true);

      const rows = await activityOf('ada@acme.test');
      assert.deepEqual(
        rows.map((row) => [row.tool, row.outcome]).sort(),
        [
          ['read_comments', 'error'],
          ['read_page', 'error'],
        ],
        'every call is recorded, including one refused for its argument types',
      );
    });

    it('lists activity newest first', async () => {
      const ada = await h.as('ada@acme.test');
      const targets: string[] = [];
      for (let i = 0; i < 12; i++) {
        const id = i % 3 === 0 ? ids.roadmap! : `doc_order${String(i).padStart(3, '0')}`;
        targets.push(id);
        await ada.call('read_comments', { document_id: id });
        await pause(2);
      }
      const rows = await activityOf('ada@acme.test');
      assert.deepEqual(
        rows.map((r) => r.targets[0]),
        [...targets].reverse(),
      );
      for (let i = 1; i < rows.length; i++) assert.ok(rows[i - 1]!.at > rows[i]!.at);
    });

    it('keeps calls made within the same millisecond in the order they were made', async (t) => {
      const ada = await h.as('ada@acme.test');
      t.mock.timers.enable({ apis: ['Date'], now: Date.now() });
      const targets: string[] = [];
      for (let i = 0; i < 12; i++) {
        const id = `doc_samems${String(i).padStart(3, '0')}`;
        targets.push(id);
        await ada.call('read_comments', { document_id: id });
      }
      const rows = await activityOf('ada@acme.test');
      assert.deepEqual(
        rows.map((r) => r.targets[0]),
        [...targets].reverse(),
        'the latest call comes first, and every call keeps its place',
      );
    });

    it("never shows one person another's activity", async () => {
      const ada = await h.as('ada@acme.test');
      const bob = await h.as('bob@acme.test');
      const eve = await h.as('eve@other.test');
      ok(await ada.call('read_comments', { document_id: ids.plan }));
      ok(await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: 'Ada was here' }));
      ok(await bob.call('read_comments', { document_id: ids.roadmap }));
      await bob.call('read_comments', { document_id: 'doc_bobonly0000000000000' });
      ok(await eve.call('read_comments', { document_id: other(h).artifacts.eve_doc }));

      const adas = await activityOf('ada@acme.test');
      const bobs = await activityOf('bob@acme.test');
      const eves = await activityOf('eve@other.test');
      assert.deepEqual(adas.map((r) => r.tool).sort(), ['add_comment', 'read_comments']);
      assert.deepEqual(
        bobs.map((r) => r.targets[0]).sort(),
        [ids.roadmap, 'doc_bobonly0000000000000'].sort(),
      );
      assert.deepEqual(
        eves.map((r) => r.targets),
        [[other(h).artifacts.eve_doc]],
      );
      assert.ok(!adas.some((r) => r.targets.includes('doc_bobonly0000000000000')));
      assert.deepEqual(await activityOf('dee@acme.test'), []);
    });

    describe('over HTTP', () => {
      let server: RunningServer;
      let dataDir: string;
      beforeEach(async () => {
        dataDir = mkdtempSync(join(tmpdir(), 'tandem-activity-'));
        const port = await freePortPair();
        const config = loadConfig({ TANDEM_DATA: dataDir, PORT: String(port), LOG_LEVEL: 'silent' });
        server = await startServer(config, h.services);
      });
      afterEach(async () => {
        await server.close();
        rmSync(dataDir, { recursive: true, force: true });
      });

      const tokenFor = async (email: string, ttlMs: number | null = 3_600_000) => {
        const actor = h.actor(email);
        return (await h.services.tokens.create(actor.personId, actor.workspaceId, [...SCOPES], ttlMs)).token;
      };
      const get = (path: string, token?: string) =>
        fetch(
          `${server.url}${path}`,
          token === undefined ? {} : { headers: { Authorization: `Bearer ${token}` } },
        );

      it("serves the caller's own activity at GET /api/activity", async () => {
        const ada = await h.as('ada@acme.test');
        const bob = await h.as('bob@acme.test');
        ok(await ada.call('read_comments', { document_id: ids.roadmap }));
        await ada.call('read_comments', { document_id: 'doc_adaonly0000000000000' });
        ok(await bob.call('read_comments', { document_id: ids.plan }));

        const res = await get('/api/activity', await tokenFor('ada@acme.test'));
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        const body = (await res.json()) as { activity: ActivityRow[] };
        assert.equal(body.activity.length, 2);
        assert.deepEqual(
          body.activity.map((r) => [r.tool, r.targets[0], r.outcome]).sort(),
          [
            ['read_comments', 'doc_adaonly0000000000000', 'error'],
            ['read_comments', ids.roadmap, 'ok'],
          ].sort(),
        );
        for (const row of body.activity) assert.equal(typeof row.at, 'number');
        assert.ok(!body.activity.some((r) => r.targets.includes(ids.plan!)), "Bob's read must not show");

        const bobs = (await (await get('/api/activity', await tokenFor('bob@acme.test'))).json()) as {
          activity: ActivityRow[];
        };
        assert.deepEqual(
          bobs.activity.map((r) => r.targets),
          [[ids.plan]],
        );
      });

      it("serves the caller's own notifications at GET /api/notifications", async () => {
        const ada = await h.as('ada@acme.test');
        const s = ok(
          await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: '@bob over to you' }),
        );

        const res = await get('/api/notifications', await tokenFor('bob@acme.test'));
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /application\/json/);
        const body = (await res.json()) as {
          notifications: {
            kind: string;
            body: string;
            artifact_id?: string;
            thread_id?: string;
            read: boolean;
          }[];
        };
        assert.equal(body.notifications.length, 1);
        const n = body.notifications[0]!;
        assert.equal(n.kind, 'mention');
        assert.equal(n.artifact_id, ids.roadmap);
        assert.equal(n.thread_id, s.thread_id);
        assert.ok(n.body.includes('Roadmap'), n.body);

        for (const email of ['ada@acme.test', 'cy@acme.test']) {
          const mine = await get('/api/notifications', await tokenFor(email));
          assert.equal(mine.status, 200);
          assert.deepEqual(await mine.json(), { notifications: [] }, email);
        }
      });

      it('answers 401 without a valid bearer token', async () => {
        const ada = await h.as('ada@acme.test');
        ok(await ada.call('add_comment', { document_id: ids.roadmap, body_markdown: '@bob secret' }));
        const expired = await tokenFor('bob@acme.test', 1);
        await new Promise((resolve) => setTimeout(resolve, 10));

        for (const path of ['/api/activity', '/api/notifications']) {
          const attempts: [string, RequestInit][] = [
            ['no token', {}],
            ['an unknown token', { headers: { Authorization: 'Bearer tdm_notarealtoken' } }],
            ['a malformed token', { headers: { Authorization: 'Bearer not-a-token' } }],
            ['an expired token', { headers: { Authorization: `Bearer ${expired}` } }],
            [
              'another scheme',
              { headers: { Authorization: `Basic ${Buffer.from('bob:pw').toString('base64')}` } },
            ],
          ];
          for (const [label, init] of attempts) {
            const res = await fetch(`${server.url}${path}`, init);
            assert.equal(res.status, 401, `${path} with ${label}`);
            const body = (await res.json()) as Record<string, unknown>;
            assert.equal(body.activity, undefined);
            assert.equal(body.notifications, undefined);
          }
        }
      });
    });
  });
}
