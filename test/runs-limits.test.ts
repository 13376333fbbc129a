import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createEngine, type Engine, type EngineOptions } from '../src/engine/engine.ts';
import { DEFAULT_LIMITS } from '../src/engine/limits.ts';
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
} from './support/automations.ts';

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

for (const db of DATABASES) {
  describe(`run limits on ${db.name}`, () => {
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    let bob: ToolCaller;
    /** Answers every request with 300,000 characters. */
    let server: Server;
    let serverHost: string;
    const engines: Engine[] = [];

    const t = automationHelpers(
      () => h,
      () => engine,
    );
    const { publish, run, readRun, runToEnd, statuses, nodeOf, nodeRows, runsOf } = t;

    /** An engine of its own (stopped after the suite), e.g. with small limits. */
    function engineWith(options: EngineOptions = {}): Engine {
      const made = createEngine(h.services, { leaseMs: 5000, httpAllow: [serverHost], ...options });
      engines.push(made);
      return made;
    }

    const storedBytes = async (runId: string) =>
      (await nodeRows(runId)).reduce((sum, r) => sum + (r.output_json?.length ?? 0), 0);

    before(async () => {
      server = createServer((req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end('z'.repeat(300_000));
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      serverHost = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      h = await setup(db);
      engine = engineWith();
      ada = await h.as('ada@acme.test');
      bob = await h.as('bob@acme.test');
    });

    after(async () => {
      for (const e of engines) await e.stop();
      await h.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    });

    describe('output that grows without end', () => {
      it('ends a member’s dry run of doubling templates at the step cap, before anything after it runs', async () => {
        const ids = range(19).map((i) => `t${i + 1}`);
        const nodes = ids.map((id, i) =>
          transform(
            id,
            'template',
            { x: i === 0 ? lit('x'.repeat(1024)) : ref(ids[i - 1] as string, 'text') },
            { template: '{{x}}{{x}}' },
          ),
        );
        const a = await publish(bob, plan('Doubling', nodes, chain(...ids)));
        const r = await runToEnd(bob, a, true);
        assert.equal(r.status, 'failed');
        // t8 would hold 256 KB of text: its output passes the default cap of a step.
        assert.deepEqual(
          r.nodes.filter((n) => n.status === 'failed').map((n) => n.node_id),
          ['t8'],
        );
        assert.match(nodeOf(r, 't8').error ?? '', /a step's output may be at most 256 KB/);
        assert.match(r.error ?? '', /^t8: .*a step's output may be at most 256 KB/);
        assert.deepEqual(Object.keys(statuses(r)).sort(), ids.slice(0, 8).sort(), 'nothing after t8 ran');
        const bytes = await storedBytes(r.run_id);
        assert.ok(bytes < DEFAULT_LIMITS.runOutputBytes, `the run stored ${bytes} bytes`);
        assert.ok(bytes < 300_000, `the run stored ${bytes} bytes`);
      });

      it('refuses a join whose separator would multiply its text past the cap, before building it', async () => {
        const a = await publish(
          bob,
          plan(
            'Wide join',
            [
              transform('split', 'split', { text: lit('a'.repeat(4000)) }, { separator: 'a' }),
              transform('join', 'join', { items: ref('split', 'items') }, { separator: 'b'.repeat(100) }),
              transform('size', 'count', { items: ref('join', 'text') }),
            ],
            chain('split', 'join', 'size'),
          ),
        );
        const r = await runToEnd(bob, a, true);
        assert.equal(r.status, 'failed');
        assert.deepEqual(statuses(r), { split: 'succeeded', join: 'failed' });
        assert.match(
          nodeOf(r, 'join').error ?? '',
          /joined text would be 400000 characters; a step's output may be at most 256 KB/,
        );
        assert.ok((await storedBytes(r.run_id)) < 20_000);
      });

      it('pretty-prints JSON only while it stays under the cap and not nested without end', async () => {
        const wide = `${'['.repeat(60)}${range(3000).join(',')}${']'.repeat(60)}`;
        const deep = `${'['.repeat(3000)}${']'.repeat(3000)}`;
        const a = await publish(
          bob,
          plan(
            'Pretty',
            [
              transform('deep', 'json_parse', { text: lit(deep) }),
              transform('deep_text', 'json_stringify', { value: ref('deep', 'value') }, { pretty: true }),
              transform('wide', 'json_parse', { text: lit(wide) }),
              transform('wide_text', 'json_stringify', { value: ref('wide', 'value') }, { pretty: true }),
              transform('size', 'count', { items: ref('wide_text', 'text') }),
            ],
            chain('wide', 'wide_text', 'size').concat(chain('deep', 'deep_text')),
          ),
        );
        const r = await runToEnd(bob, a, true);
        assert.equal(r.status, 'failed');
        // Indenting 3,000 levels would take 18 million characters; it is written compactly instead.
        assert.equal(nodeOf(r, 'deep_text').status, 'succeeded');
        assert.equal(((await t.outputs(r.run_id)).deep_text as { text: string }).text, deep);
        assert.equal(nodeOf(r, 'wide_text').status, 'failed');
        assert.match(
          nodeOf(r, 'wide_text').error ?? '',
          /the JSON text would be \d+ characters; a step's output may be at most 256 KB/,
        );
        assert.equal(
          r.nodes.some((n) => n.node_id === 'size'),
          false,
        );
      });

      it('fails a step whose output is over the cap, and the run whose outputs add up past its cap', async () => {
        const big = await publish(
          ada,
          plan(
            'Big page',
            [
              capability('fetch', 'http.get', { url: lit(`http://${serverHost}/big`) }),
              { id: 'tell', kind: 'notify', message: ref('fetch', 'status') },
            ],
            chain('fetch', 'tell'),
          ),
        );
        let r = await runToEnd(ada, big);
        assert.equal(r.status, 'failed');
        assert.match(
          nodeOf(r, 'fetch').error ?? '',
          /^the output is \d+ bytes; a step's output may be at most 256 KB$/,
        );
        assert.equal(
          r.nodes.some((n) => n.node_id === 'tell'),
          false,
        );

        const small = engineWith({ limits: { nodeOutputBytes: 1024, runOutputBytes: 4096 } });
        const ids = range(8).map((i) => `p${i}`);
        const many = await publish(
          ada,
          plan(
            'Many parts',
            ids.map((id) => transform(id, 'template', {}, { template: `${id} ${'y'.repeat(900)}` })),
            chain(...ids),
          ),
        );
        const runId = await run(ada, many);
        await small.drain();
        r = await readRun(ada, many, runId);
        assert.equal(r.status, 'failed');
        // Four outputs of about 915 bytes fit in 4 KB; the fifth does not.
        assert.deepEqual(statuses(r), {
          p0: 'succeeded',
          p1: 'succeeded',
          p2: 'succeeded',
          p3: 'succeeded',
          p4: 'failed',
        });
        assert.match(
          nodeOf(r, 'p4').error ?? '',
          /^the run's outputs would reach \d+ bytes; a run's outputs may be at most 4 KB together$/,
        );
        assert.ok((await storedBytes(runId)) <= 4096);
      });

      it('posts an object a notify step is given as its JSON', async () => {
        const a = await publish(
          ada,
          plan(
            'Tell object',
            [
              transform('parse', 'json_parse', { text: lit('{"total":3,"names":["a","b"]}') }),
              { id: 'tell', kind: 'notify', message: ref('parse', 'value') },
            ],
            chain('parse', 'tell'),
          ),
        );
        const r = await runToEnd(ada, a);
        assert.equal(r.status, 'succeeded');
        const bodies = (await t.sessionMessages(a.session_id)).map((m) => m.body);
        assert.ok(bodies.includes('{"total":3,"names":["a","b"]}'), JSON.stringify(bodies));
        assert.equal(
          bodies.some((b) => b.includes('[object Object]')),
          false,
        );
      });
    });

    describe('work that multiplies', () => {
      it('fails a map of maps at the step-execution cap, having stored no more than the cap', async () => {
        // 350 × 350 would be 122,851 steps; the outer map (350 items × 2 steps) starts under the cap.
        const small = engineWith({ limits: { nodeExecutions: 1000 } });
        const a = await publish(
          bob,
          plan('Grid', [
            {
              id: 'rows',
              kind: 'map',
              items: lit(range(350)),
              concurrency: 10,
              result: 'cols',
              body: {
                nodes: [
                  {
                    id: 'cols',
                    kind: 'map',
                    items: lit(range(350)),
                    concurrency: 10,
                    result: 'cell',
                    body: { nodes: [transform('cell', 'coalesce', { v: trig('item') })], edges: [] },
                  },
                ],
                edges: [],
              },
            },
          ]),
        );
        const runId = await run(bob, a, true);
        const started = Date.now();
        await small.drain();
        const r = await readRun(bob, a, runId);
        assert.equal(r.status, 'failed');
        assert.match(r.error ?? '', /1000 step executions/);
        const rows = (await nodeRows(runId)).length;
        assert.ok(rows <= 1000, `the run stored ${rows} node rows`);
        assert.ok(Date.now() - started < 15_000, 'it failed fast');
      });

      it('refuses by default a map that would run more steps than a run may', async () => {
        const a = await publish(
          bob,
          plan('Wide map', [
            {
              id: 'each',
              kind: 'map',
              items: lit(range(1000)),
              result: 'c',
              body: {
                nodes: [
                  transform('a', 'coalesce', { v: trig('item') }),
                  transform('b', 'coalesce', { v: ref('a', 'value') }),
                  transform('c', 'coalesce', { v: ref('b', 'value') }),
                ],
                edges: chain('a', 'b', 'c'),
              },
            },
          ]),
        );
        const r = await runToEnd(bob, a, true);
        assert.equal(r.status, 'failed');
        assert.match(
          r.error ?? '',
          /^each: the map would take the run to 3001 step executions .*a run may execute at most 2500$/,
        );
        assert.deepEqual(statuses(r), { each: 'failed' });
      });
    });

    describe('subflows', () => {
      const leafPlan = () => plan('Leaf', [transform('leaf', 'coalesce', { v: trig('n') })]);
      const callPlan = (name: string, child: string) =>
        plan(name, [{ id: 'sub', kind: 'subflow', automation_id: child, input: { n: lit(1) } }]);

      it('fails a chain of subflows nested deeper than the cap, and the deepest child never runs', async () => {
        const leaf = await publish(ada, leafPlan());
        let next = leaf;
        const chainOf = [leaf];
        for (let i = 0; i < 5; i++) {
          next = await publish(ada, callPlan(`Level ${5 - i}`, next.automation_id));
          chainOf.unshift(next);
        }
        const r = await runToEnd(ada, chainOf[0] as typeof leaf);
        assert.equal(r.status, 'failed');
        assert.match(r.error ?? '', /subflows may nest at most 4 deep; this one would be 5 deep/);
        assert.equal((await runsOf(leaf.automation_id)).length, 0);
        assert.equal((await runsOf((chainOf[4] as typeof leaf).automation_id)).length, 1);
      });

      it('fails a map of subflow calls past the tree cap', async () => {
        const small = engineWith({ limits: { subflowRuns: 4 } });
        const leaf = await publish(ada, leafPlan());
        const a = await publish(
          ada,
          plan('Fan out', [
            {
              id: 'each',
              kind: 'map',
              items: lit(range(8)),
              concurrency: 10,
              result: 'sub',
              body: {
                nodes: [
                  {
                    id: 'sub',
                    kind: 'subflow',
                    automation_id: leaf.automation_id,
                    input: { n: trig('item') },
                  },
                ],
                edges: [],
              },
            },
          ]),
        );
        const runId = await run(ada, a);
        await small.drain();
        const r = await readRun(ada, a, runId);
        assert.equal(r.status, 'failed');
        assert.match(r.error ?? '', /a run may start at most 3 subflow runs in all; this one would be more/);
        assert.equal((await runsOf(leaf.automation_id)).length, 3);
      });

      it('fails the node, and never runs the child, when the acting person lost the right to run it', async () => {
        const bobId = h.actor('bob@acme.test').personId;
        const promote = (admin: number) =>
          h.services.deps.db.updateTable('people').set({ admin }).where('id', '=', bobId).execute();
        const shared = await publish(ada, leafPlan(), { scope: 'workspace' });
        await promote(1);
        let mine;
        try {
          mine = await publish(bob, callPlan('Calls shared', shared.automation_id));
        } finally {
          await promote(0);
        }
        const r = await runToEnd(bob, mine);
        assert.equal(r.status, 'failed');
        assert.equal(
          nodeOf(r, 'sub').error,
          `automation ${shared.automation_id} can be run only by workspace admins, and this automation’s acting person may not run it, so it cannot run as their subflow`,
        );
        assert.equal((await runsOf(shared.automation_id)).length, 0);
      });
    });
  });
}
