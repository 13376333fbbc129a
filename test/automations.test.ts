import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { z } from 'zod';
import type { ConnectorPlugin } from '../src/capabilities/capability.ts';
import { importFixture } from '../src/domains/import/import.ts';
import { SCOPES } from '../src/domains/workspace/actor.ts';
import { DATABASES } from './support/databases.ts';
import { acme, connect, setup, type CallResult, type Harness, type ToolCaller } from './support/harness.ts';
import { connectPeople, personId } from './support/people.ts';
import { ok, refused } from './support/results.ts';

const NOT_FOUND = 'Tool failed: Automation not found';
const DRAFT_NOT_FOUND = 'Tool failed: Draft not found: pass a flow_version_id returned by draft_automation';
const ONLY_CREATOR = 'Tool failed: Only its creator can change this automation';
const ONLY_ADMINS = 'Tool failed: Only workspace admins can change this automation';
const ONLY_ADMINS_PUBLISH = 'Tool failed: Only workspace admins can publish workspace automations';
const NOT_THIS_AUTOMATION = 'Tool failed: That draft is not a version of this automation';
const ASK_REQUIRED = 'Tool failed: ask is required: the request the plan implements, in one sentence';
const NAME_REQUIRED = 'Tool failed: name is required to publish a new automation';

const BUILTINS = ['documents', 'pages', 'comments', 'conversations', 'http'];
const NODE_KINDS = [
  'capability',
  'agent',
  'transform',
  'branch',
  'map',
  'subflow',
  'approval',
  'notify',
  'delay',
];

const DAILY = { kind: 'schedule', frequency: 'daily', hour: 9, minute: 30, timezone: 'Europe/Berlin' };
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 1, hour: 8, minute: 0, timezone: 'UTC' };
const ON_DOCUMENT = { kind: 'connector_event', provider: 'workspace', event: 'document.created' };

type Json = Record<string, unknown>;

const lit = (value: unknown) => ({ kind: 'literal', value });
const ref = (node: string, path: string) => ({ kind: 'ref', node, path });

/** Read a document, ask the creator, post it to the session: a plan with one guarded write. */
function digestPlan(name = 'Roadmap digest'): Json {
  return {
    planVersion: 1,
    name,
    description: 'Post the roadmap after approval.',
    nodes: [
      {
        id: 'read',
        kind: 'capability',
        capability: 'documents.read_document',
        input: { document_id: lit('doc_123') },
      },
      { id: 'ok', kind: 'approval', message: lit('Post the digest?') },
      {
        id: 'post',
        kind: 'capability',
        capability: 'conversations.post_message',
        input: { text: ref('read', 'markdown') },
      },
    ],
    edges: [
      { from: 'read', to: 'ok' },
      { from: 'ok', to: 'post' },
    ],
  };
}

/** A plan that only reads. */
function listPlan(name = 'Document census'): Json {
  return {
    planVersion: 1,
    name,
    description: 'Count the documents.',
    nodes: [
      { id: 'list', kind: 'capability', capability: 'documents.list_documents', input: {} },
      { id: 'count', kind: 'transform', op: 'count', input: { items: ref('list', 'documents') } },
    ],
    edges: [{ from: 'list', to: 'count' }],
  };
}

/** A plan with a write capability of the given namespace behind an approval. */
function writePlan(capability: string, input: Json, name = 'Connector write'): Json {
  return {
    planVersion: 1,
    name,
    description: 'Write through a connector after approval.',
    nodes: [
      { id: 'ok', kind: 'approval', message: lit('Go ahead?') },
      { id: 'write', kind: 'capability', capability, input },
    ],
    edges: [{ from: 'ok', to: 'write' }],
  };
}

const slackPlan = () =>
  writePlan('slack.post_message', { channel: lit('#general'), text: lit('Hello') }, 'Slack hello');

const githubPlan = () =>
  writePlan(
    'github.create_issue',
    { repo: lit('acme/app'), title: lit('Weekly check') },
    'Weekly GitHub issue',
  );

/** A plan whose only step asks the model. */
function agentPlan(): Json {
  return {
    planVersion: 1,
    name: 'Think',
    description: 'Ask the model.',
    nodes: [{ id: 'think', kind: 'agent', instructions: lit('Summarise the week in one line.') }],
    edges: [],
  };
}

function futureIso(value: unknown): void {
  assert.equal(typeof value, 'string', 'next_fire_at is an ISO string');
  const ms = Date.parse(value as string);
  assert.ok(Number.isFinite(ms), `next_fire_at ${String(value)} parses`);
  assert.equal(new Date(ms).toISOString(), value, 'next_fire_at is an ISO-8601 UTC instant');
  assert.ok(ms > Date.now(), `next_fire_at ${String(value)} lies in the future`);
}

/** A failed plan: isError with kind failed, every error well formed; returns the errors. */
function failedWith(
  r: CallResult,
): { rule: string; path: (string | number)[]; node_id?: string; message: string }[] {
  assert.equal(r.isError, true, `expected a failed plan, got: ${r.text}`);
  assert.match(r.text, /^Tool failed: the plan has \d+ problems?; nothing was stored\./);
  const s = r.structured;
  assert.ok(s, 'a failed plan carries structuredContent');
  assert.equal(s.kind, 'failed');
  const errors = s.errors as { rule: string; path: (string | number)[]; node_id?: string; message: string }[];
  assert.ok(Array.isArray(errors) && errors.length > 0, 'errors[] lists the problems');
  for (const e of errors) {
    assert.equal(typeof e.rule, 'string');
    assert.ok(Array.isArray(e.path), 'each error has a path array');
    for (const part of e.path) assert.ok(typeof part === 'string' || typeof part === 'number');
    assert.equal(typeof e.message, 'string');
    assert.ok(e.message.length > 0);
    if (e.node_id !== undefined) assert.equal(typeof e.node_id, 'string');
  }
  return errors;
}

/**
 * Runs `work` on Postgres while the messages table is locked, so a publish cannot post its session
 * notice (its last step) and commit until every one of `waiters` calls has got that far or is
 * blocked behind one that has; then lets them go. On SQLite, where writes take turns, it just runs.
 */
async function whileNoticesHeld<T>(h: Harness, waiters: number, work: () => Promise<T>): Promise<T> {
  if (h.services.deps.dialect !== 'postgres') return work();
  const trx = await h.services.deps.db.startTransaction().execute();
  let running: Promise<T> | undefined;
  try {
    await sql`lock table messages in exclusive mode`.execute(trx);
    running = work();
    const deadline = Date.now() + 5000;
    while (Date.now() < deadline) {
      await sql`select pg_stat_clear_snapshot()`.execute(trx);
      const { rows } = await sql<{ n: number }>`
        with recursive blocked(pid) as (
          select pid from pg_stat_activity where pg_backend_pid() = any(pg_blocking_pids(pid))
          union
          select a.pid from pg_stat_activity a join blocked b on b.pid = any(pg_blocking_pids(a.pid))
        )
        select count(*)::int as n from blocked`.execute(trx);
      if ((rows[0]?.n ?? 0) >= waiters) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    await trx.commit().execute();
  }
  return running;
}

/** Helpers bound to one harness. */
function tools(get: () => Harness) {
  const sql = () => get().services.deps.db;

  async function counts() {
    const n = async (table: 'flows' | 'flow_versions' | 'automations' | 'conversations' | 'messages') =>
      (await sql().selectFrom(table).select('id').execute()).length;
    return {
      flows: await n('flows'),
      flow_versions: await n('flow_versions'),
      automations: await n('automations'),
      conversations: await n('conversations'),
      messages: await n('messages'),
    };
  }

  async function draft(caller: ToolCaller, args: Json = {}): Promise<Json> {
    return ok(
      await caller.call('draft_automation', {
        plan_json: digestPlan(),
        ask: 'Post the roadmap every morning.',
        ...args,
      }),
    );
  }

  async function publish(caller: ToolCaller, args: Json): Promise<Json> {
    return ok(await caller.call('edit_automation', { action: 'publish', trigger: DAILY, ...args }));
  }

  /** Drafts and publishes a new automation; returns the publish result plus the draft. */
  async function create(
    caller: ToolCaller,
    options: { name?: string; plan?: Json; draft?: Json; publish?: Json } = {},
  ): Promise<{ id: string; fv: string; flowId: string; published: Json }> {
    const name = options.name ?? 'Roadmap digest';
    const d = await draft(caller, { plan_json: options.plan ?? digestPlan(name), ...options.draft });
    const published = await publish(caller, { flow_version_id: d.flow_version_id, name, ...options.publish });
    return {
      id: published.automation_id as string,
      fv: d.flow_version_id as string,
      flowId: d.flow_id as string,
      published,
    };
  }

  async function read(caller: ToolCaller, id: string, args: Json = {}): Promise<Json> {
    return ok(await caller.call('read_automation', { automation_id: id, ...args }));
  }

  async function listed(caller: ToolCaller, args: Json = {}): Promise<Json[]> {
    return ok(await caller.call('list_automations', args)).automations as Json[];
  }

  return { sql, counts, draft, publish, create, read, listed };
}

for (const db of DATABASES) {
  describe(`automations on ${db.name}`, () => {
    describe('describe_capabilities', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;

      before(async () => {
        h = await setup(db);
        ({ ada, bob } = await connectPeople(h));
      });
      after(() => h.close());

      const namespaces = (s: Json) => s.namespaces as Json[];
      const ns = (s: Json, name: string) => {
        const found = namespaces(s).find((n) => n.namespace === name);
        assert.ok(found, `namespace ${name} is listed`);
        return found;
      };

      it('returns plan_version 1, max_nodes 200 and the five contract sections', async () => {
        const s = ok(await ada.call('describe_capabilities'));
        assert.equal(s.plan_version, 1);
        assert.equal(s.max_nodes, 200);
        assert.equal(s.truncated, false);
        assert.equal(s.schemas_dropped, undefined);

        const shapes = s.node_shapes as Record<string, Json>;
        assert.deepEqual(Object.keys(shapes).sort(), [...NODE_KINDS].sort());
        for (const kind of NODE_KINDS) {
          assert.equal(typeof shapes[kind], 'object', `node_shapes.${kind} is a JSON Schema`);
          assert.ok(JSON.stringify(shapes[kind]).includes(`"${kind}"`), `node_shapes.${kind} names its kind`);
        }

        const ops = s.transform_ops as Record<string, Json>;
        for (const op of ['get', 'template', 'json_parse', 'join', 'split', 'filter', 'count', 'now']) {
          assert.ok(ops[op], `transform op ${op} is listed`);
          assert.equal(typeof ops[op]?.describe, 'string');
          assert.ok(ops[op]?.input !== undefined || op === 'now', `${op} declares its input`);
          assert.equal(typeof ops[op]?.output, 'object');
        }

        const bindings = JSON.stringify(s.bindings);
        for (const kind of ['literal', 'ref', 'trigger']) assert.ok(bindings.includes(`"${kind}"`), kind);

        const triggers = JSON.stringify(s.trigger_input);
        for (const kind of ['schedule', 'connector_event', 'github_event', 'timezone', 'frequency'])
          assert.ok(triggers.includes(kind), `trigger_input mentions ${kind}`);

        assert.deepEqual((s.write_approval as Json).enum, ['required', 'automatic']);
      });

      it('lists built-ins and github as connected, email as not connected, by default', async () => {
        const s = ok(await ada.call('describe_capabilities'));
        const names = namespaces(s).map((n) => n.namespace);
        for (const name of [...BUILTINS, 'github', 'slack', 'email']) assert.ok(names.includes(name), name);
        for (const name of BUILTINS) assert.equal(ns(s, name).connected, true, `${name} is connected`);
        assert.equal(ns(s, 'github').connected, true);
        assert.equal(ns(s, 'email').connected, false);

        const keys = (ns(s, 'documents').capabilities as Json[]).map((c) => c.key);
        assert.deepEqual(keys, [
          'documents.read_document',
          'documents.list_documents',
          'documents.create_document',
          'documents.append_to_document',
        ]);
        for (const entry of namespaces(s)) {
          for (const cap of entry.capabilities as Json[]) {
            assert.ok((cap.key as string).startsWith(`${entry.namespace as string}.`), `${cap.key} key form`);
            assert.ok(cap.kind === 'read' || cap.kind === 'write');
            assert.equal(typeof cap.describe, 'string');
            assert.equal(typeof cap.input, 'object', `${cap.key} has an input schema`);
            assert.equal(typeof cap.output, 'object', `${cap.key} has an output schema`);
          }
        }
        const post = (ns(s, 'conversations').capabilities as Json[]).find(
          (c) => c.key === 'conversations.post_message',
        );
        assert.equal(post?.kind, 'write');
        assert.deepEqual(((post?.input as Json).required as string[]).includes('text'), true);
      });

      it('shows slack connected for Bob, whose personal connection it is, and not for Ada', async () => {
        const forAda = ok(await ada.call('describe_capabilities'));
        const forBob = ok(await bob.call('describe_capabilities'));
        assert.equal(ns(forAda, 'slack').connected, false);
        assert.equal(ns(forBob, 'slack').connected, true);

        const slackEntry = (s: Json) => (s.connectors as Json[]).find((c) => c.provider === 'slack');
        assert.equal(slackEntry(forAda)?.connected, false);
        assert.equal(slackEntry(forBob)?.connected, true);
      });

      it('gives connector entries with provider, name, personal and namespace', async () => {
        const s = ok(await bob.call('describe_capabilities'));
        const entries = (s.connectors as Json[]).map(({ provider, name, personal, namespace }) => ({
          provider,
          name,
          personal,
          namespace,
        }));
        const byProvider = (p: string) => entries.find((e) => e.provider === p);
        assert.equal(entries.length, 3);
        assert.deepEqual(byProvider('github'), {
          provider: 'github',
          name: 'GitHub',
          personal: false,
          namespace: 'github',
        });
        assert.deepEqual(byProvider('slack'), {
          provider: 'slack',
          name: 'Slack',
          personal: true,
          namespace: 'slack',
        });
        assert.deepEqual(byProvider('gmail'), {
          provider: 'gmail',
          name: 'Gmail',
          personal: false,
          namespace: 'email',
        });
      });

      it('narrows to the namespaces asked for', async () => {
        const s = ok(await ada.call('describe_capabilities', { namespaces: ['github', 'documents'] }));
        assert.deepEqual(
          namespaces(s)
            .map((n) => n.namespace)
            .sort(),
          ['documents', 'github'],
        );
        assert.equal(s.plan_version, 1);
        assert.ok(s.node_shapes, 'the contract sections stay when narrowed');
      });

      it('refuses an unknown namespace name, naming it and the known ones', async () => {
        const r = await ada.call('describe_capabilities', { namespaces: ['documents', 'jira'] });
        assert.equal(r.isError, true);
        assert.match(r.text, /^Tool failed: unknown namespace jira; known: documents, pages/);
        assert.match(r.text, /github/);
      });

      it('drops input and output schemas with include_schemas false', async () => {
        const s = ok(await ada.call('describe_capabilities', { include_schemas: false }));
        assert.equal(s.truncated, false);
        for (const entry of namespaces(s)) {
          for (const cap of entry.capabilities as Json[]) {
            assert.equal('input' in cap, false, `${cap.key} has no input schema`);
            assert.equal('output' in cap, false, `${cap.key} has no output schema`);
            assert.equal(typeof cap.describe, 'string');
          }
        }
        const full = ok(await ada.call('describe_capabilities'));
        assert.ok(JSON.stringify(s).length < JSON.stringify(full).length);
      });
    });

    describe('describe_capabilities past the size budget', () => {
      const BUDGET = 90_000;
      /** Input fields with long descriptions, so the namespace weighs tens of kilobytes. */
      const wide = (prefix: string, fields: number) =>
        z.strictObject(
          Object.fromEntries(
            Array.from({ length: fields }, (_, i) => [
              `${prefix}_${i}`,
              z
                .string()
                .optional()
                .describe(
                  `Setting ${i} of the ${prefix} request, ${'described at length so it weighs '.repeat(2)}`,
                ),
            ]),
          ),
        );
      /** A plugin whose two capabilities take `fields` inputs each. */
      const bigPlugin = (fields: number): ConnectorPlugin => ({
        namespace: 'bigco',
        name: 'BigCo',
        providers: ['bigco'],
        builtin: false,
        events: ['record.changed'],
        capabilities: [
          {
            key: 'bigco.fetch_record',
            kind: 'read',
            describe: 'Fetch a record.',
            input: wide('fetch', fields),
            output: z.object({ id: z.string() }),
          },
          {
            key: 'bigco.update_record',
            kind: 'write',
            describe: 'Update a record.',
            input: wide('update', fields),
            output: z.object({ id: z.string() }),
          },
        ],
      });
      const tailPlugin: ConnectorPlugin = {
        namespace: 'tinyco',
        name: 'TinyCo',
        providers: ['tinyco'],
        builtin: false,
        events: [],
        capabilities: [
          {
            key: 'tinyco.ping',
            kind: 'read',
            describe: 'Ping.',
            input: z.strictObject({ host: z.string() }),
            output: z.object({ ok: z.boolean() }),
          },
        ],
      };

      let h: Harness;
      let ada: ToolCaller;
      let fields: number;
      before(async () => {
        // Size BigCo so that everything together is over the budget, but BigCo with the
        // plan contract alone is under it.
        const plain = await setup(db);
        const caller = await plain.as('ada@acme.test');
        const bytes = async (args: Json) =>
          Buffer.byteLength(JSON.stringify(ok(await caller.call('describe_capabilities', args))));
        const everything = await bytes({});
        const contractOnly = await bytes({ namespaces: [] });
        await plain.close();
        assert.ok(everything < BUDGET && contractOnly < everything);
        const target = (BUDGET - everything + (BUDGET - contractOnly)) / 2;
        const perField = JSON.stringify(z.toJSONSchema(wide('update', 100))).length / 100;
        fields = Math.round(target / 2 / perField);
        h = await setup(db, { automations: { plugins: [bigPlugin(fields), tailPlugin] } });
        ada = await h.as('ada@acme.test');
      });
      after(() => h.close());

      it('lists a plugin namespace the workspace never connected, as not connected', async () => {
        const s = ok(await ada.call('describe_capabilities', { include_schemas: false }));
        const big = (s.namespaces as Json[]).find((n) => n.namespace === 'bigco');
        assert.ok(big, 'bigco is listed');
        assert.equal(big.connected, false);
        assert.deepEqual(
          (big.capabilities as Json[]).map((c) => c.key),
          ['bigco.fetch_record', 'bigco.update_record'],
        );
        assert.equal(
          (s.connectors as Json[]).some((c) => c.provider === 'bigco'),
          false,
          'no connector entry exists without a connection',
        );
      });

      it('sheds the tail namespaces’ schemas to stay under about 90 KB', async () => {
        const r = await ada.call('describe_capabilities');
        const s = ok(r);
        assert.equal(s.truncated, true);
        assert.deepEqual(s.schemas_dropped, ['bigco', 'tinyco']);
        const size = Buffer.byteLength(JSON.stringify(s));
        assert.ok(size <= BUDGET, `the result is ${size} bytes`);
        assert.ok(Buffer.byteLength(r.text) <= BUDGET + 1000, 'the text form is as small');
        for (const entry of s.namespaces as Json[]) {
          const dropped = (s.schemas_dropped as string[]).includes(entry.namespace as string);
          for (const cap of entry.capabilities as Json[]) {
            assert.equal('input' in cap, !dropped, `${cap.key} input schema ${dropped ? 'dropped' : 'kept'}`);
            assert.equal(
              'output' in cap,
              !dropped,
              `${cap.key} output schema ${dropped ? 'dropped' : 'kept'}`,
            );
            assert.equal(typeof cap.describe, 'string', `${cap.key} keeps its description`);
          }
        }
      });

      it('returns the dropped schemas when called again with namespaces set to schemas_dropped', async () => {
        const first = ok(await ada.call('describe_capabilities'));
        const again = ok(await ada.call('describe_capabilities', { namespaces: first.schemas_dropped }));
        assert.equal(again.truncated, false);
        assert.equal(again.schemas_dropped, undefined);
        assert.deepEqual(
          (again.namespaces as Json[]).map((n) => n.namespace),
          ['bigco', 'tinyco'],
        );
        for (const entry of again.namespaces as Json[]) {
          for (const cap of entry.capabilities as Json[]) {
            assert.equal(typeof cap.input, 'object', `${cap.key} input schema is back`);
            assert.equal(typeof cap.output, 'object', `${cap.key} output schema is back`);
          }
        }
        const fetch = ((again.namespaces as Json[])[0]?.capabilities as Json[])[0];
        assert.equal(Object.keys((fetch?.input as Json).properties as Json).length, fields);
        assert.ok(Buffer.byteLength(JSON.stringify(again)) <= BUDGET);
      });
    });

    describe('draft_automation', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      let eve: ToolCaller;
      const t = tools(() => h);

      before(async () => {
        h = await setup(db);
        ({ ada, bob, cy, eve } = await connectPeople(h));
      });
      after(() => h.close());

      it('stores a valid plan as draft version 1 of a new flow and schedules nothing', async () => {
        const before = await t.counts();
        const r = await ada.call('draft_automation', { plan_json: digestPlan(), ask: 'Post the roadmap.' });
        const s = ok(r);
        assert.equal(s.kind, 'plan');
        assert.match(s.flow_version_id as string, /^fv_/);
        assert.match(s.flow_id as string, /^flw_/);
        assert.equal(s.version, 1);
        assert.equal(s.ask, 'Post the roadmap.');
        assert.deepEqual(s.steps, [
          '1. Read a document’s markdown (documents.read_document)',
          '2. Ask the creator to approve: "Post the digest?" (fails after 7 days)',
          '3. Post a message to a conversation (conversations.post_message)',
        ]);
        assert.deepEqual(s.writes, ['conversations.post_message']);
        assert.deepEqual(s.namespaces, ['documents', 'conversations']);
        assert.deepEqual(s.connectors, []);
        assert.equal(s.write_approval, 'required');
        assert.match(r.text, /^Stored draft version 1 \(flow_version_id: fv_/);

        const now = await t.counts();
        assert.equal(now.flows, before.flows + 1);
        assert.equal(now.flow_versions, before.flow_versions + 1);
        assert.equal(now.automations, before.automations, 'a draft creates no automation');
        assert.deepEqual(await t.listed(ada), []);
      });

      it('numbers steps in run order and names the connectors a plan uses', async () => {
        const s = await t.draft(ada, { plan_json: githubPlan(), ask: 'Open a weekly issue.' });
        for (const [i, step] of (s.steps as string[]).entries())
          assert.match(step, new RegExp(`^${i + 1}\\. `));
        assert.deepEqual(s.writes, ['github.create_issue']);
        assert.deepEqual(s.namespaces, ['github']);
        assert.deepEqual(s.connectors, ['github']);
      });

      it('requires ask, storing nothing without it', async () => {
        const before = await t.counts();
        refused(await ada.call('draft_automation', { plan_json: digestPlan() }), ASK_REQUIRED);
        refused(await ada.call('draft_automation', { plan_json: digestPlan(), ask: '   ' }), ASK_REQUIRED);
        assert.deepEqual(await t.counts(), before);
      });

      it('refuses a bad write_approval value', async () => {
        refused(
          await ada.call('draft_automation', { plan_json: digestPlan(), ask: 'x', write_approval: 'never' }),
          'Tool failed: write_approval must be required or automatic',
        );
      });

      it('reports every problem of an invalid plan as kind failed and stores nothing', async () => {
        const before = await t.counts();
        const listBefore = await t.listed(ada);
        const plan = {
          planVersion: 1,
          name: 'Broken',
          description: 'Several problems at once.',
          nodes: [
            { id: 'a', kind: 'capability', capability: 'documents.list_documents', input: {} },
            { id: 'b', kind: 'transform', op: 'count', input: { items: ref('c', 'documents') } },
            { id: 'c', kind: 'capability', capability: 'documents.list_documents', input: {} },
            {
              id: 'mail',
              kind: 'capability',
              capability: 'email.send',
              input: { to: lit(['x@acme.test']), subject: lit('Hi'), body: lit('Hello') },
            },
            {
              id: 'post',
              kind: 'capability',
              capability: 'conversations.post_message',
              input: { text: lit('Hi') },
            },
            { id: 'x', kind: 'notify', message: lit('loop') },
            { id: 'y', kind: 'notify', message: lit('loop') },
          ],
          edges: [
            { from: 'a', to: 'b' },
            { from: 'a', to: 'post' },
            { from: 'x', to: 'y' },
            { from: 'y', to: 'x' },
          ],
        };
        const r = await ada.call('draft_automation', { plan_json: plan, ask: 'Do several things.' });
        const errors = failedWith(r);
        const rules = errors.map((e) => e.rule);
        for (const rule of [
          'binding/not-upstream',
          'capability/not-connected',
          'write/needs-approval',
          'dag/cycle',
        ])
          assert.ok(rules.includes(rule), `${rule} is reported (got ${rules.join(', ')})`);

        const notUpstream = errors.find((e) => e.rule === 'binding/not-upstream');
        assert.equal(notUpstream?.node_id, 'b');
        assert.deepEqual(notUpstream?.path, ['nodes', 1, 'input', 'items', 'node']);
        const notConnected = errors.find((e) => e.rule === 'capability/not-connected');
        assert.equal(notConnected?.node_id, 'mail');
        assert.deepEqual(notConnected?.path, ['nodes', 3, 'capability']);
        const needsApproval = errors.find((e) => e.rule === 'write/needs-approval' && e.node_id === 'post');
        assert.ok(needsApproval, 'the unguarded post is named');
        assert.deepEqual(needsApproval.path, ['nodes', 4]);
        assert.match(needsApproval.message, /approval/);
        assert.match(r.text, new RegExp(`^Tool failed: the plan has ${errors.length} problems`));

        assert.deepEqual(await t.counts(), before, 'nothing was stored');
        assert.deepEqual(await t.listed(ada), listBefore);
        const next = await t.draft(ada, { plan_json: listPlan('After a failure') });
        assert.equal(next.version, 1, 'the next new draft starts its own flow at version 1');
      });

      it('reports a shape error with its path', async () => {
        const plan = { ...digestPlan(), planVersion: 2 };
        const errors = failedWith(await ada.call('draft_automation', { plan_json: plan, ask: 'x' }));
        assert.ok(errors.some((e) => e.rule === 'shape' && e.path[0] === 'planVersion'));
      });

      it('accepts max_nodes nodes and refuses one more, counting map bodies', async () => {
        const notify = (i: number) => ({ id: `n${i}`, kind: 'notify', message: lit(`Step ${i}`) });
        const plan = (nodes: unknown[]) => ({
          planVersion: 1,
          name: 'Big',
          description: 'Many steps.',
          nodes,
        });
        const full = await t.draft(ada, {
          plan_json: plan(Array.from({ length: 200 }, (_, i) => notify(i))),
          ask: 'Notify a lot.',
        });
        assert.equal((full.steps as string[]).length, 200);
        assert.equal((full.steps as string[])[199], '200. Notify the session: "Step 199"');

        const before = await t.counts();
        const map = {
          id: 'each',
          kind: 'map',
          items: lit([1, 2]),
          body: { nodes: Array.from({ length: 50 }, (_, i) => notify(1000 + i)) },
          result: 'n1000',
        };
        const nested = plan([...Array.from({ length: 150 }, (_, i) => notify(i)), map]);
        const errors = failedWith(
          await ada.call('draft_automation', { plan_json: nested, ask: 'Too many.' }),
        );
        assert.deepEqual(
          errors.map((e) => [e.rule, e.path]),
          [['plan/too-many-nodes', ['nodes']]],
        );
        assert.match(errors[0]!.message, /201 nodes/);
        assert.deepEqual(await t.counts(), before);
      });

      it('numbers concurrent drafts of one automation without gaps or clashes', async () => {
        const { id } = await t.create(ada, { name: 'Busy' });
        const results = await Promise.all(
          Array.from({ length: 6 }, (_, i) =>
            ada.call('draft_automation', {
              automation_id: id,
              plan_json: listPlan(`Busy ${i}`),
              ask: 'Count.',
            }),
          ),
        );
        const versions = results.map((r) => ok(r).version as number).sort((a, b) => a - b);
        assert.deepEqual(versions, [2, 3, 4, 5, 6, 7]);
      });

      it('accepts an unguarded write with write_approval automatic, and refuses approvals under it', async () => {
        const plan = {
          planVersion: 1,
          name: 'Unattended',
          description: 'Post without asking.',
          nodes: [
            {
              id: 'post',
              kind: 'capability',
              capability: 'conversations.post_message',
              input: { text: lit('Hi') },
            },
          ],
          edges: [],
        };
        failedWith(await ada.call('draft_automation', { plan_json: plan, ask: 'Post.' }));
        const s = await t.draft(ada, { plan_json: plan, ask: 'Post.', write_approval: 'automatic' });
        assert.equal(s.write_approval, 'automatic');
        assert.deepEqual(s.writes, ['conversations.post_message']);

        const errors = failedWith(
          await ada.call('draft_automation', {
            plan_json: digestPlan(),
            ask: 'x',
            write_approval: 'automatic',
          }),
        );
        assert.deepEqual(
          errors.map((e) => [e.rule, e.node_id]),
          [['write/approval-with-automatic', 'ok']],
        );
      });

      it('drafts version 2 of an automation with automation_id', async () => {
        const first = await t.create(ada, { name: 'Versioned' });
        const v2 = await t.draft(ada, { automation_id: first.id, plan_json: listPlan('Versioned v2') });
        assert.equal(v2.version, 2);
        assert.equal(v2.flow_id, first.flowId, 'the same flow gets the new version');
        assert.equal(v2.automation_id, first.id);
        assert.match(
          (await ada.call('draft_automation', { automation_id: first.id, plan_json: listPlan(), ask: 'x' }))
            .text,
          /^Stored draft version 3 /,
        );
        const live = await t.read(ada, first.id);
        assert.equal(live.version, 1, 'drafting does not change the live version');
      });

      it('refuses drafts for automations the caller may not change, storing nothing', async () => {
        const bobs = await t.create(bob, { name: 'Bob personal' });
        const workspace = await t.create(ada, { name: 'Team digest', publish: { scope: 'workspace' } });
        const before = await t.counts();
        const attempt = (caller: ToolCaller, id: string) =>
          caller.call('draft_automation', {
            automation_id: id,
            plan_json: listPlan(),
            ask: 'Count documents.',
          });

        refused(await attempt(cy, bobs.id), NOT_FOUND);
        refused(await attempt(eve, bobs.id), NOT_FOUND);
        refused(await attempt(ada, bobs.id), ONLY_CREATOR);
        refused(await attempt(bob, workspace.id), ONLY_ADMINS);
        refused(await attempt(cy, workspace.id), ONLY_ADMINS);
        refused(await attempt(ada, 'aut_madeup'), NOT_FOUND);
        assert.deepEqual(await t.counts(), before);

        assert.equal((await t.draft(bob, { automation_id: bobs.id, plan_json: listPlan() })).version, 2);
        assert.equal((await t.draft(ada, { automation_id: workspace.id, plan_json: listPlan() })).version, 2);
      });
    });

    describe('edit_automation publish', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      let eve: ToolCaller;
      const t = tools(() => h);

      before(async () => {
        h = await setup(db);
        ({ ada, bob, cy, eve } = await connectPeople(h));
      });
      after(() => h.close());

      it('requires a name for a new automation and creates nothing without it', async () => {
        const d = await t.draft(ada);
        const before = await t.counts();
        refused(
          await ada.call('edit_automation', {
            action: 'publish',
            flow_version_id: d.flow_version_id,
            trigger: DAILY,
          }),
          NAME_REQUIRED,
        );
        refused(
          await ada.call('edit_automation', {
            action: 'publish',
            flow_version_id: d.flow_version_id,
            trigger: DAILY,
            name: '  ',
          }),
          'Tool failed: name must not be empty',
        );
        assert.deepEqual(await t.counts(), before);
      });

      it('creates an enabled automation and echoes what was published', async () => {
        const d = await t.draft(ada);
        const r = await ada.call('edit_automation', {
          action: 'publish',
          flow_version_id: d.flow_version_id,
          name: 'Morning digest',
          trigger: DAILY,
        });
        const s = ok(r);
        assert.equal(s.action, 'publish');
        assert.match(s.automation_id as string, /^aut_/);
        assert.equal(s.name, 'Morning digest');
        assert.equal(s.version, 1);
        assert.equal(s.enabled, true);
        assert.match(s.session_id as string, /^cnv_/);
        assert.ok((s.url as string).endsWith(`/automations/${s.automation_id as string}`), String(s.url));
        futureIso(s.next_fire_at);
        assert.match(
          r.text,
          /^Published Morning digest \(automation_id: aut_\w+\) at version 1; it is enabled/,
        );

        const row = (await t.listed(ada)).find((a) => a.automation_id === s.automation_id);
        assert.equal(row?.enabled, true);
        assert.equal(row?.scope, 'personal');
        assert.deepEqual(row?.trigger, DAILY);
      });

      it('leaves it paused with enabled false', async () => {
        const { id, published } = await t.create(ada, { name: 'Review first', publish: { enabled: false } });
        assert.equal(published.enabled, false);
        assert.equal(published.next_fire_at, undefined);
        const detail = await t.read(ada, id);
        assert.equal(detail.enabled, false);
        assert.equal(detail.next_fire_at, undefined);
      });

      it('publishes a new draft as version 2, keeping a paused automation paused', async () => {
        const { id } = await t.create(ada, { name: 'Kept paused' });
        ok(await ada.call('edit_automation', { action: 'set_enabled', automation_id: id, enabled: false }));
        const v2 = await t.draft(ada, {
          automation_id: id,
          plan_json: listPlan('Kept paused v2'),
          ask: 'Count.',
        });
        const before = await t.counts();
        const s = await t.publish(ada, {
          automation_id: id,
          flow_version_id: v2.flow_version_id,
          trigger: WEEKLY,
        });
        assert.equal(s.automation_id, id);
        assert.equal(s.version, 2);
        assert.equal(s.enabled, false, 'the paused automation stays paused');
        assert.equal(s.name, 'Kept paused', 'the name stays');
        assert.equal(s.next_fire_at, undefined);
        assert.equal((await t.counts()).automations, before.automations, 'no second automation');

        const detail = await t.read(ada, id);
        assert.equal(detail.version, 2);
        assert.equal(detail.flow_version_id, v2.flow_version_id);
        assert.equal(detail.enabled, false);
        assert.equal(detail.ask, 'Count.');
        assert.deepEqual(detail.trigger, WEEKLY);
        assert.deepEqual(detail.writes, []);

        const v3 = await t.draft(ada, { automation_id: id, plan_json: digestPlan('Kept paused v3') });
        const enabled = await t.publish(ada, {
          automation_id: id,
          flow_version_id: v3.flow_version_id,
          enabled: true,
        });
        assert.equal(enabled.version, 3);
        assert.equal(enabled.enabled, true);
        futureIso(enabled.next_fire_at);
      });

      it('keeps an enabled automation enabled when republished without enabled', async () => {
        const { id } = await t.create(ada, { name: 'Stays on' });
        const v2 = await t.draft(ada, { automation_id: id, plan_json: listPlan() });
        const s = await t.publish(ada, { automation_id: id, flow_version_id: v2.flow_version_id });
        assert.equal(s.enabled, true);
        assert.equal(s.version, 2);
      });

      it('republishing the live flow_version_id changes only the trigger', async () => {
        const { id, fv } = await t.create(ada, { name: 'Trigger only' });
        const before = await t.counts();
        const s = await t.publish(ada, { automation_id: id, flow_version_id: fv, trigger: WEEKLY });
        assert.equal(s.version, 1, 'the version is unchanged');
        assert.equal(s.automation_id, id);
        const after = await t.counts();
        assert.equal(after.flow_versions, before.flow_versions, 'no new version');
        assert.equal(after.automations, before.automations);
        const detail = await t.read(ada, id);
        assert.equal(detail.version, 1);
        assert.equal(detail.flow_version_id, fv);
        assert.deepEqual(detail.trigger, WEEKLY);
        assert.equal(detail.name, 'Trigger only');
        assert.equal(detail.ask, 'Post the roadmap every morning.');
        futureIso(detail.next_fire_at);
        assert.equal(
          new Date(detail.next_fire_at as string).getUTCDay(),
          1,
          'the weekly trigger fires on Monday',
        );
      });

      it('refuses a draft that belongs to another automation', async () => {
        const first = await t.create(ada, { name: 'First' });
        const second = await t.create(ada, { name: 'Second' });
        const draftOfFirst = await t.draft(ada, { automation_id: first.id, plan_json: listPlan() });
        const loose = await t.draft(ada, { plan_json: listPlan('Loose draft') });
        const before = await t.counts();
        for (const fv of [draftOfFirst.flow_version_id, first.fv, loose.flow_version_id]) {
          refused(
            await ada.call('edit_automation', {
              action: 'publish',
              automation_id: second.id,
              flow_version_id: fv,
              trigger: DAILY,
            }),
            NOT_THIS_AUTOMATION,
          );
        }
        assert.deepEqual(await t.counts(), before);
        assert.equal((await t.read(ada, second.id)).flow_version_id, second.fv);
      });

      it('refuses to make a second automation from a draft that was already published', async () => {
        const { id, fv } = await t.create(ada, { name: 'Only once' });
        const before = await t.counts();
        const r = await ada.call('edit_automation', {
          action: 'publish',
          flow_version_id: fv,
          name: 'Copy',
          trigger: DAILY,
        });
        assert.equal(r.isError, true);
        assert.equal(
          r.text,
          `Tool failed: That draft is a version of automation ${id}; pass automation_id ${id} to publish it there`,
        );
        const v2 = await t.draft(ada, { automation_id: id, plan_json: listPlan() });
        refused(
          await ada.call('edit_automation', {
            action: 'publish',
            flow_version_id: v2.flow_version_id,
            name: 'Copy',
            trigger: DAILY,
          }),
          `Tool failed: That draft is a version of automation ${id}; pass automation_id ${id} to publish it there`,
        );
        const after = await t.counts();
        assert.equal(after.automations, before.automations);
        assert.equal(after.conversations, before.conversations);
      });

      it('makes one automation when the same new draft is published several times at once', async () => {
        const d = await t.draft(ada, { plan_json: listPlan('Raced') });
        const before = await t.counts();
        const attempts = 8;
        const publishAll = () =>
          Promise.all(
            Array.from({ length: attempts }, () =>
              ada.call('edit_automation', {
                action: 'publish',
                flow_version_id: d.flow_version_id,
                name: 'Raced',
                trigger: DAILY,
              }),
            ),
          );
        const results = await whileNoticesHeld(h, attempts, publishAll);
        const published = results.filter((r) => !r.isError);
        assert.equal(published.length, 1, results.map((r) => r.text).join('\n'));
        const id = ok(published[0]!).automation_id as string;
        for (const r of results.filter((x) => x.isError)) {
          assert.equal(
            r.text,
            `Tool failed: That draft is a version of automation ${id}; pass automation_id ${id} to publish it there`,
          );
        }
        const after = await t.counts();
        assert.equal(after.automations, before.automations + 1);
        assert.equal(after.conversations, before.conversations + 1, 'one session');
      });

      it('refuses unknown drafts and other people’s unpublished drafts as not found', async () => {
        const bobsDraft = await t.draft(bob, { plan_json: listPlan('Bob draft') });
        const before = await t.counts();
        refused(
          await ada.call('edit_automation', {
            action: 'publish',
            flow_version_id: 'fv_madeup',
            name: 'X',
            trigger: DAILY,
          }),
          DRAFT_NOT_FOUND,
        );
        for (const caller of [ada, cy, eve]) {
          refused(
            await caller.call('edit_automation', {
              action: 'publish',
              flow_version_id: bobsDraft.flow_version_id,
              name: 'Taken',
              trigger: DAILY,
            }),
            DRAFT_NOT_FOUND,
          );
        }
        const r = await ada.call('edit_automation', { action: 'publish', name: 'X', trigger: DAILY });
        assert.equal(r.isError, true);
        assert.match(r.text, /^Tool failed: flow_version_id is required for publish/);
        assert.deepEqual(await t.counts(), before);
      });

      it('answers a draft the caller cannot open as not found even when publishing into their own automation', async () => {
        const bobsDraft = await t.draft(bob, { plan_json: listPlan('Bob private draft') });
        const cys = await t.create(cy, { name: 'Cy own' });
        refused(
          await cy.call('edit_automation', {
            action: 'publish',
            automation_id: cys.id,
            flow_version_id: bobsDraft.flow_version_id,
            trigger: DAILY,
          }),
          DRAFT_NOT_FOUND,
        );
      });

      it('requires a trigger and checks every field of it', async () => {
        const d = await t.draft(ada);
        const before = await t.counts();
        const attempt = (trigger: unknown) =>
          ada.call('edit_automation', {
            action: 'publish',
            flow_version_id: d.flow_version_id,
            name: 'Checked trigger',
            ...(trigger === undefined ? {} : { trigger }),
          });
        const cases: [unknown, string][] = [
          [
            undefined,
            'Tool failed: trigger is required for publish (schedule, connector_event or github_event)',
          ],
          [
            { ...DAILY, timezone: 'Mars/Olympus' },
            'Tool failed: trigger.timezone "Mars/Olympus" is not an IANA time zone; use a name such as Europe/Berlin or UTC',
          ],
          [
            { ...DAILY, weekday: 3 },
            'Tool failed: trigger.weekday does not apply to a daily schedule; remove it (daily takes hour, minute)',
          ],
          [
            { kind: 'schedule', frequency: 'daily', minute: 0, timezone: 'UTC' },
            'Tool failed: trigger.hour is required for a daily schedule',
          ],
          [{ ...WEEKLY, weekday: 8 }, 'Tool failed: trigger.weekday must be at most 7'],
          [{ ...DAILY, hour: 24 }, 'Tool failed: trigger.hour must be at most 23'],
          [{ ...DAILY, minute: 60 }, 'Tool failed: trigger.minute must be at most 59'],
          [
            { kind: 'connector_event', provider: 'gmail', event: 'received' },
            'Tool failed: trigger.provider "gmail" is not connected for you in this workspace; connect it first',
          ],
          [
            { kind: 'connector_event', provider: 'slack', event: 'message' },
            'Tool failed: trigger.provider "slack" is not connected for you in this workspace; connect it first',
          ],
          [
            { kind: 'github_event', event: 'push', repo: 'just-a-name' },
            'Tool failed: trigger.repo must be owner/name',
          ],
        ];
        for (const [trigger, text] of cases) refused(await attempt(trigger), text);

        const unknown = await attempt({ kind: 'connector_event', provider: 'jira', event: 'issue' });
        assert.equal(unknown.isError, true);
        assert.match(
          unknown.text,
          /^Tool failed: trigger\.provider "jira" is not a provider of this workspace; use one of /,
        );
        const badEvent = await attempt({ kind: 'connector_event', provider: 'github', event: 'teleported' });
        assert.equal(badEvent.isError, true);
        assert.match(
          badEvent.text,
          /trigger\.event "teleported" is not an event of github; use one of .*pull_request/,
        );

        assert.deepEqual(await t.counts(), before, 'nothing was published');
      });

      it('accepts event triggers, which have no next_fire_at', async () => {
        const onDoc = await t.create(ada, { name: 'On new document', publish: { trigger: ON_DOCUMENT } });
        assert.equal(onDoc.published.enabled, true);
        assert.equal(onDoc.published.next_fire_at, undefined);
        const gh = { kind: 'github_event', event: 'pull_request', actions: ['opened'], repo: 'acme/app' };
        const onPr = await t.create(ada, { name: 'On pull request', publish: { trigger: gh } });
        assert.deepEqual((await t.read(ada, onPr.id)).trigger, gh);
        const onSlack = { kind: 'connector_event', provider: 'slack', event: 'message' };
        const bobs = await t.create(bob, { name: 'On slack message', publish: { trigger: onSlack } });
        assert.deepEqual((await t.read(bob, bobs.id)).trigger, onSlack);
      });

      it('refuses scope workspace from someone who is not an admin', async () => {
        const d = await t.draft(bob);
        const before = await t.counts();
        refused(
          await bob.call('edit_automation', {
            action: 'publish',
            flow_version_id: d.flow_version_id,
            name: 'Team thing',
            trigger: DAILY,
            scope: 'workspace',
          }),
          ONLY_ADMINS_PUBLISH,
        );
        assert.deepEqual(await t.counts(), before);
      });

      it('keeps the scope once published', async () => {
        const { id } = await t.create(ada, { name: 'Personal forever' });
        const v2 = await t.draft(ada, { automation_id: id, plan_json: listPlan() });
        const r = await ada.call('edit_automation', {
          action: 'publish',
          automation_id: id,
          flow_version_id: v2.flow_version_id,
          trigger: DAILY,
          scope: 'workspace',
        });
        assert.equal(r.isError, true);
        assert.match(r.text, /^Tool failed: scope stays personal once published/);
        assert.equal((await t.read(ada, id)).scope, 'personal');
        assert.equal((await t.read(ada, id)).version, 1);
      });

      it('stores cooldown_s, notify, tags and description, and read_automation shows them', async () => {
        const { id } = await t.create(ada, {
          name: 'Detailed',
          publish: {
            trigger: ON_DOCUMENT,
            cooldown_s: 600,
            notify: 'everyRun',
            tags: ['digest', 'roadmap', 'digest'],
            description: 'Posts the roadmap when a document appears.',
          },
        });
        const detail = await t.read(ada, id);
        assert.equal(detail.cooldown_s, 600);
        assert.equal(detail.notify, 'everyRun');
        assert.deepEqual(detail.tags, ['digest', 'roadmap']);
        assert.equal(detail.description, 'Posts the roadmap when a document appears.');

        const defaults = await t.create(ada, { name: 'Defaults' });
        const plain = await t.read(ada, defaults.id);
        assert.equal(plain.cooldown_s, 0);
        assert.equal(plain.notify, 'problems');
        assert.deepEqual(plain.tags, []);
        assert.equal(
          plain.description,
          'Post the roadmap after approval.',
          'the plan’s description by default',
        );

        const v2 = await t.draft(ada, { automation_id: id, plan_json: listPlan() });
        await t.publish(ada, {
          automation_id: id,
          flow_version_id: v2.flow_version_id,
          trigger: ON_DOCUMENT,
        });
        const kept = await t.read(ada, id);
        assert.equal(kept.cooldown_s, 600, 'a republish keeps cooldown_s');
        assert.equal(kept.notify, 'everyRun', 'a republish keeps notify');
        assert.deepEqual(kept.tags, ['digest', 'roadmap']);
        assert.equal(kept.description, 'Posts the roadmap when a document appears.');
      });

      it('refuses bad notify, scope, cooldown_s, tags and enabled values with clear errors', async () => {
        const d = await t.draft(ada);
        const before = await t.counts();
        const attempt = (extra: Json) =>
          ada.call('edit_automation', {
            action: 'publish',
            flow_version_id: d.flow_version_id,
            name: 'Bad values',
            trigger: DAILY,
            ...extra,
          });
        const cooldown = 'Tool failed: cooldown_s must be a whole number of seconds from 0 to 2592000';
        const tagsText = 'Tool failed: tags must be a list of non-empty strings of at most 50 characters';
        const cases: [Json, string][] = [
          [{ notify: 'sometimes' }, 'Tool failed: notify must be off, problems or everyRun'],
          [{ scope: 'team' }, 'Tool failed: scope must be personal or workspace'],
          [{ cooldown_s: -1 }, cooldown],
          [{ cooldown_s: 1.5 }, cooldown],
          [{ cooldown_s: '60' }, cooldown],
          [{ cooldown_s: 2592001 }, cooldown],
          [{ tags: 'digest' }, tagsText],
          [{ tags: [''] }, tagsText],
          [{ tags: [42] }, tagsText],
          [{ tags: ['x'.repeat(51)] }, tagsText],
          [
            { tags: Array.from({ length: 21 }, (_, i) => `t${i}`) },
            'Tool failed: tags may list at most 20 tags',
          ],
          [{ enabled: 'yes' }, 'Tool failed: enabled must be a boolean'],
          [{ description: 42 }, 'Tool failed: description must be a string'],
        ];
        for (const [extra, text] of cases) refused(await attempt(extra), text);
        assert.deepEqual(await t.counts(), before);
      });

      it('refuses publishing into an automation the caller may not change', async () => {
        const bobs = await t.create(bob, { name: 'Bob only' });
        const team = await t.create(ada, { name: 'Team only', publish: { scope: 'workspace' } });
        const bobV2 = await t.draft(bob, { automation_id: bobs.id, plan_json: listPlan() });
        const teamV2 = await t.draft(ada, { automation_id: team.id, plan_json: listPlan() });
        const before = await t.counts();
        const attempt = (caller: ToolCaller, id: string, fv: unknown) =>
          caller.call('edit_automation', {
            action: 'publish',
            automation_id: id,
            flow_version_id: fv,
            trigger: WEEKLY,
          });
        refused(await attempt(ada, bobs.id, bobV2.flow_version_id), ONLY_CREATOR);
        refused(await attempt(cy, bobs.id, bobV2.flow_version_id), NOT_FOUND);
        refused(await attempt(eve, bobs.id, bobV2.flow_version_id), NOT_FOUND);
        refused(await attempt(bob, team.id, teamV2.flow_version_id), ONLY_ADMINS);
        refused(await attempt(bob, team.id, team.fv), ONLY_ADMINS);
        assert.deepEqual(await t.counts(), before);
        assert.equal((await t.read(bob, bobs.id)).version, 1);
        assert.deepEqual((await t.read(ada, team.id)).trigger, DAILY);
      });
    });

    describe('workspace scope and personal connectors', () => {
      let h: Harness;
      let sol: ToolCaller;
      let solWorkspace: string;
      let solo: { id: string; users: Record<string, string> };
      let team: ToolCaller;
      const t = tools(() => h);

      before(async () => {
        h = await setup(db);
        const { workspaces } = await importFixture(h.services.deps, {
          workspaces: [
            {
              name: 'Solo',
              users: [
                { email: 'sol@solo.test', name: 'Sol Admin', admin: true },
                { email: 'tam@solo.test', name: 'Tam Member' },
                { email: 'sam@solo.test', name: 'Sam Admin', admin: true },
              ],
              connectors: [
                { provider: 'slack', connected: true, personal: true, owner: 'sol@solo.test' },
                { provider: 'github', connected: true, personal: false },
              ],
            },
          ],
        });
        solo = workspaces.Solo!;
        solWorkspace = solo.id;
        sol = await connect(h.services, {
          personId: solo.users['sol@solo.test']!,
          workspaceId: solo.id,
          scopes: new Set(SCOPES),
        });
        team = await connect(h.services, {
          personId: solo.users['tam@solo.test']!,
          workspaceId: solo.id,
          scopes: new Set(SCOPES),
        });
      });
      after(async () => {
        await sol.close();
        await team.close();
        await h.close();
      });

      it('names the admin’s own personal connection in the draft', async () => {
        const d = await t.draft(sol, { plan_json: slackPlan(), ask: 'Say hello on Slack.' });
        assert.deepEqual(d.connectors, ['slack']);
        assert.deepEqual(d.personal_connectors, ['slack']);
      });

      it('refuses a workspace automation that uses a personal connector, changing nothing', async () => {
        const d = await t.draft(sol, { plan_json: slackPlan(), ask: 'Say hello on Slack.' });
        const before = await t.counts();
        const r = await sol.call('edit_automation', {
          action: 'publish',
          flow_version_id: d.flow_version_id,
          name: 'Team hello',
          trigger: DAILY,
          scope: 'workspace',
        });
        const errors = failedWith(r);
        assert.deepEqual(
          errors.map((e) => ({ rule: e.rule, path: e.path, node_id: e.node_id })),
          [{ rule: 'scope/personal-connector', path: ['nodes', 1], node_id: 'write' }],
        );
        assert.match(errors[0]!.message, /personal Slack connection/);
        assert.deepEqual(await t.counts(), before, 'nothing was published');
        assert.deepEqual(await t.listed(sol), []);
      });

      it('refuses a workspace automation whose trigger listens on a personal connection', async () => {
        const d = await t.draft(sol, { plan_json: listPlan(), ask: 'Count documents on each message.' });
        const before = await t.counts();
        const errors = failedWith(
          await sol.call('edit_automation', {
            action: 'publish',
            flow_version_id: d.flow_version_id,
            name: 'Team listener',
            trigger: { kind: 'connector_event', provider: 'slack', event: 'message' },
            scope: 'workspace',
          }),
        );
        assert.deepEqual(
          errors.map((e) => [e.rule, e.path]),
          [['scope/personal-connector', []]],
        );
        assert.deepEqual(await t.counts(), before);
      });

      it('publishes the same draft as personal, and shared connectors as workspace', async () => {
        const d = await t.draft(sol, { plan_json: slackPlan(), ask: 'Say hello on Slack.' });
        const personal = await t.publish(sol, { flow_version_id: d.flow_version_id, name: 'My hello' });
        assert.equal(personal.enabled, true);
        const detail = await t.read(sol, personal.automation_id as string);
        assert.deepEqual(detail.personal_connectors, ['slack']);
        assert.equal(detail.scope, 'personal');

        const gh = await t.draft(sol, { plan_json: githubPlan(), ask: 'Open an issue.' });
        const workspace = await t.publish(sol, {
          flow_version_id: gh.flow_version_id,
          name: 'Team issue',
          scope: 'workspace',
        });
        const teamDetail = await t.read(team, workspace.automation_id as string);
        assert.equal(teamDetail.scope, 'workspace');
        assert.equal(teamDetail.can_control, false);
        assert.deepEqual(teamDetail.connectors, ['github']);
        assert.deepEqual(teamDetail.personal_connectors, []);
        const sessionOf = async (published: Json) =>
          (
            await t
              .sql()
              .selectFrom('conversation_participants')
              .select('person_id')
              .where('conversation_id', '=', published.session_id as string)
              .execute()
          )
            .map((r) => r.person_id)
            .sort();
        assert.deepEqual(await sessionOf(personal), [solo.users['sol@solo.test']]);
        assert.deepEqual(
          await sessionOf(workspace),
          [solo.users['sol@solo.test'], solo.users['sam@solo.test']].sort(),
          'every admin takes part in a workspace automation’s session',
        );
        const workspaceIds = (await t.sql().selectFrom('automations').select('workspace_id').execute()).map(
          (r) => r.workspace_id,
        );
        assert.ok(workspaceIds.every((w) => w === solWorkspace));
      });
    });

    describe('edit_automation set_enabled', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      let eve: ToolCaller;
      const t = tools(() => h);

      before(async () => {
        h = await setup(db);
        ({ ada, bob, cy, eve } = await connectPeople(h));
      });
      after(() => h.close());

      const setEnabled = (caller: ToolCaller, id: string, enabled?: unknown) =>
        caller.call('edit_automation', {
          action: 'set_enabled',
          automation_id: id,
          ...(enabled === undefined ? {} : { enabled }),
        });

      it('pauses and resumes a scheduled automation, giving the next fire time only while enabled', async () => {
        const { id } = await t.create(bob, { name: 'Bob schedule' });
        const paused = await setEnabled(bob, id, false);
        const p = ok(paused);
        assert.equal(p.action, 'set_enabled');
        assert.equal(p.automation_id, id);
        assert.equal(p.enabled, false);
        assert.equal(p.next_fire_at, undefined);
        assert.equal(
          paused.text,
          'Bob schedule is now paused: its triggers start nothing until it is enabled again.',
        );
        assert.equal((await t.read(bob, id)).enabled, false);
        assert.equal((await t.listed(bob)).find((a) => a.automation_id === id)?.next_fire_at, undefined);

        const again = ok(await setEnabled(bob, id, false));
        assert.equal(again.enabled, false, 'pausing twice is harmless');

        const resumed = ok(await setEnabled(bob, id, true));
        assert.equal(resumed.enabled, true);
        futureIso(resumed.next_fire_at);
        const detail = await t.read(bob, id);
        assert.equal(detail.enabled, true);
        assert.equal(detail.next_fire_at, resumed.next_fire_at);
      });

      it('gives no next_fire_at for an event trigger', async () => {
        const { id } = await t.create(bob, { name: 'Bob event', publish: { trigger: ON_DOCUMENT } });
        ok(await setEnabled(bob, id, false));
        const resumed = ok(await setEnabled(bob, id, true));
        assert.equal(resumed.enabled, true);
        assert.equal(resumed.next_fire_at, undefined);
      });

      it('requires enabled and automation_id', async () => {
        const { id } = await t.create(bob, { name: 'Bob needs args' });
        refused(await setEnabled(bob, id), 'Tool failed: enabled is required for set_enabled: true or false');
        refused(await setEnabled(bob, id, 'false'), 'Tool failed: enabled must be a boolean');
        refused(
          await bob.call('edit_automation', { action: 'set_enabled', enabled: false }),
          'Tool failed: automation_id is required for set_enabled',
        );
        assert.equal((await t.read(bob, id)).enabled, true);
      });

      it('refuses people who may not change it, in the spec’s words, leaving it as it was', async () => {
        const bobs = await t.create(bob, { name: 'Bob guarded' });
        const team = await t.create(ada, { name: 'Team guarded', publish: { scope: 'workspace' } });
        refused(await setEnabled(ada, bobs.id, false), ONLY_CREATOR);
        refused(await setEnabled(cy, bobs.id, false), NOT_FOUND);
        refused(await setEnabled(bob, team.id, false), ONLY_ADMINS);
        refused(await setEnabled(cy, team.id, false), ONLY_ADMINS);
        refused(await setEnabled(eve, team.id, false), NOT_FOUND);
        refused(await setEnabled(eve, bobs.id, false), NOT_FOUND);
        refused(await setEnabled(bob, 'aut_madeup', false), NOT_FOUND);
        assert.equal((await t.read(bob, bobs.id)).enabled, true);
        assert.equal((await t.read(ada, team.id)).enabled, true);

        const paused = ok(await setEnabled(ada, team.id, false));
        assert.equal(paused.enabled, false, 'an admin may pause a workspace automation');
      });
    });

    describe('list_automations', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      let dee: ToolCaller;
      let eve: ToolCaller;
      const t = tools(() => h);
      const ids: Record<string, string> = {};

      before(async () => {
        h = await setup(db);
        ({ ada, bob, cy, dee, eve } = await connectPeople(h));
      });
      after(() => h.close());

      it('says so when there is nothing to list', async () => {
        const r = await ada.call('list_automations');
        assert.deepEqual(ok(r), { automations: [], truncated: false });
        assert.equal(r.text, 'No automations found.');
      });

      it('lists newest first what each person may see, with can_control', async () => {
        ids.bob = (await t.create(bob, { name: 'Bob personal' })).id;
        ids.cy = (await t.create(cy, { name: 'Cy personal', publish: { trigger: ON_DOCUMENT } })).id;
        ids.team = (await t.create(ada, { name: 'Team digest', publish: { scope: 'workspace' } })).id;
        ids.ada = (await t.create(ada, { name: 'Ada personal', publish: { enabled: false } })).id;

        const view = async (caller: ToolCaller) =>
          (await t.listed(caller)).map((a) => [a.name, a.can_control] as [unknown, unknown]);
        assert.deepEqual(await view(ada), [
          ['Ada personal', true],
          ['Team digest', true],
          ['Cy personal', false],
          ['Bob personal', false],
        ]);
        assert.deepEqual(await view(bob), [
          ['Team digest', false],
          ['Bob personal', true],
        ]);
        assert.deepEqual(await view(cy), [
          ['Team digest', false],
          ['Cy personal', true],
        ]);
        assert.deepEqual(await view(dee), [['Team digest', false]]);
        const forEve = await eve.call('list_automations');
        assert.deepEqual(ok(forEve).automations, []);
        assert.equal(forEve.text, 'No automations found.');
      });

      it('gives each row the automation’s identity, trigger, state and version', async () => {
        const rows = await t.listed(ada);
        const team = rows.find((a) => a.automation_id === ids.team);
        assert.ok(team);
        const detail = await t.read(ada, ids.team!);
        assert.deepEqual(team, {
          automation_id: ids.team,
          name: 'Team digest',
          enabled: true,
          trigger: DAILY,
          scope: 'workspace',
          can_control: true,
          version: 1,
          step_count: 3,
          namespaces: ['documents', 'conversations'],
          session_id: detail.session_id,
          next_fire_at: detail.next_fire_at,
          consecutive_failures: 0,
          created_at: detail.created_at,
          url: detail.url,
        });
        assert.ok(Math.abs(Date.parse(team.created_at as string) - Date.now()) < 60_000, 'created just now');
        const paused = rows.find((a) => a.automation_id === ids.ada);
        assert.equal(paused?.enabled, false);
        assert.equal('next_fire_at' in (paused ?? {}), false);
        const cys = rows.find((a) => a.automation_id === ids.cy);
        assert.deepEqual(cys?.trigger, ON_DOCUMENT);
        assert.equal(cys?.scope, 'personal');
      });

      it('writes one line per row in the text form', async () => {
        const r = await ada.call('list_automations');
        const lines = r.text.split('\n');
        assert.equal(lines.length, 4);
        const rows = ok(r).automations as Json[];
        rows.forEach((row, i) => {
          const line = lines[i] ?? '';
          assert.ok(line.startsWith(`${row.name as string} — ${row.scope as string}, version 1, `), line);
          assert.ok(line.endsWith(`(automation_id: ${row.automation_id as string})`), line);
        });
        assert.match(lines[0]!, /paused/);
      });

      it('honours limit, clamps it to 1–200 and says when more exist', async () => {
        const two = ok(await ada.call('list_automations', { limit: 2 }));
        assert.deepEqual(
          (two.automations as Json[]).map((a) => a.name),
          ['Ada personal', 'Team digest'],
        );
        assert.equal(two.truncated, true);
        const twoText = await ada.call('list_automations', { limit: 2 });
        assert.equal(twoText.text.split('\n').length, 3);
        assert.match(twoText.text, /\nMore automations exist; raise limit to see them\.$/);

        for (const limit of [0, -5]) {
          const s = ok(await ada.call('list_automations', { limit }));
          assert.equal((s.automations as Json[]).length, 1, `limit ${limit} gives one row`);
          assert.equal(s.truncated, true);
        }
        const exact = ok(await ada.call('list_automations', { limit: 4 }));
        assert.equal((exact.automations as Json[]).length, 4);
        assert.equal(exact.truncated, false);

        refused(
          await ada.call('list_automations', { limit: 'ten' }),
          'Tool failed: limit must be a number from 1 to 200',
        );
      });

      it('defaults to 50 rows and never returns more than 200', async () => {
        // Many workspace automations, made through the service to keep the seeding quick.
        const admin = h.actor('ada@acme.test');
        for (let i = 0; i < 205; i++) {
          const copy = await h.services.automations.draft(admin, {
            plan_json: listPlan(`Copy ${i}`),
            ask: 'Count.',
          });
          await h.services.automations.publish(admin, {
            flow_version_id: copy.flow_version_id,
            name: `Copy ${i}`,
            trigger: ON_DOCUMENT,
            scope: 'workspace',
          });
        }
        const byDefault = ok(await dee.call('list_automations'));
        assert.equal((byDefault.automations as Json[]).length, 50);
        assert.equal(byDefault.truncated, true);
        const names = (byDefault.automations as Json[]).map((a) => a.name);
        assert.equal(names[0], 'Copy 204', 'the newest comes first');
        assert.equal(names[49], 'Copy 155');

        const most = ok(await dee.call('list_automations', { limit: 1000 }));
        assert.equal((most.automations as Json[]).length, 200);
        assert.equal(most.truncated, true);
        const all200 = ok(await dee.call('list_automations', { limit: 200 }));
        assert.equal((all200.automations as Json[]).length, 200);
        assert.equal(all200.truncated, true, 'dee sees 206 automations');
      });
    });

    describe('read_automation', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      let cy: ToolCaller;
      let eve: ToolCaller;
      const t = tools(() => h);

      before(async () => {
        h = await setup(db);
        ({ ada, bob, cy, eve } = await connectPeople(h));
      });
      after(() => h.close());

      it('returns the detail of the live version', async () => {
        const plan = githubPlan();
        const d = await t.draft(bob, { plan_json: plan, ask: 'Open a weekly issue.' });
        const p = await t.publish(bob, {
          flow_version_id: d.flow_version_id,
          name: 'Weekly issue',
          trigger: WEEKLY,
          tags: ['github'],
          description: 'Opens an issue every Monday.',
        });
        const id = p.automation_id as string;
        const r = await bob.call('read_automation', { automation_id: id });
        const s = ok(r);
        assert.equal(s.automation_id, id);
        assert.equal(s.name, 'Weekly issue');
        assert.equal(s.description, 'Opens an issue every Monday.');
        assert.deepEqual(s.tags, ['github']);
        assert.equal(s.ask, 'Open a weekly issue.');
        assert.deepEqual(s.steps, d.steps);
        assert.deepEqual(s.steps, [
          '1. Ask the creator to approve: "Go ahead?" (fails after 7 days)',
          '2. Open an issue (github.create_issue)',
        ]);
        assert.deepEqual(s.writes, ['github.create_issue']);
        assert.deepEqual(s.namespaces, ['github']);
        assert.deepEqual(s.connectors, ['github']);
        assert.deepEqual(s.personal_connectors, []);
        assert.deepEqual(s.trigger, WEEKLY);
        assert.equal(s.scope, 'personal');
        assert.equal(s.enabled, true);
        assert.equal(s.degraded_reason, undefined);
        assert.equal(s.can_control, true);
        assert.equal(s.created_by, 'Bob Stone');
        assert.equal(s.version, 1);
        assert.equal(s.flow_version_id, d.flow_version_id);
        assert.equal(s.write_approval, 'required');
        assert.equal(s.session_id, p.session_id);
        assert.equal(s.url, p.url);
        futureIso(s.next_fire_at);
        assert.equal(s.plan_json, undefined, 'no plan unless asked');
        assert.match(r.text, new RegExp(`^# Weekly issue \\(automation_id: ${id}\\)\n`));
        assert.match(
          r.text,
          /\nTrigger: runs every Monday at 08:00 \(UTC\)\. Writes: github\.create_issue \(approval required\)\./,
        );
      });

      it('gives the drafted plan with include_plan', async () => {
        const plan = digestPlan('Planned');
        const { id } = await t.create(ada, { name: 'Planned', plan });
        const s = await t.read(ada, id, { include_plan: true });
        assert.deepEqual(s.plan_json, plan);

        const v2plan = listPlan('Planned v2');
        const v2 = await t.draft(ada, { automation_id: id, plan_json: v2plan });
        assert.deepEqual(
          (await t.read(ada, id, { include_plan: true })).plan_json,
          plan,
          'a draft is not live',
        );
        await t.publish(ada, { automation_id: id, flow_version_id: v2.flow_version_id });
        assert.deepEqual((await t.read(ada, id, { include_plan: true })).plan_json, v2plan);
        refused(
          await ada.call('read_automation', { automation_id: id, include_plan: 'yes' }),
          'Tool failed: include_plan must be a boolean',
        );
      });

      it('reports unknown ids, other people’s personal automations and other workspaces as not found', async () => {
        const bobs = await t.create(bob, { name: 'Bob secret' });
        const team = await t.create(ada, { name: 'Team visible', publish: { scope: 'workspace' } });
        refused(await ada.call('read_automation', { automation_id: 'aut_madeup' }), NOT_FOUND);
        refused(await ada.call('read_automation', { automation_id: '' }), NOT_FOUND);
        refused(await cy.call('read_automation', { automation_id: bobs.id }), NOT_FOUND);
        refused(await eve.call('read_automation', { automation_id: bobs.id }), NOT_FOUND);
        refused(await eve.call('read_automation', { automation_id: team.id }), NOT_FOUND);

        const forCy = await cy.call('read_automation', { automation_id: team.id });
        assert.equal(ok(forCy).can_control, false);
        assert.match(forCy.text, /\nYou can read this automation but not change it\./);
        const forAda = await t.read(ada, bobs.id);
        assert.equal(forAda.can_control, false, 'an admin sees a personal automation but may not change it');
        assert.equal(forAda.created_by, 'Bob Stone');
      });
    });

    describe('degraded_reason model_unavailable', () => {
      for (const modelConfigured of [false, true]) {
        describe(modelConfigured ? 'with a model configured' : 'without a model', () => {
          let h: Harness;
          let ada: ToolCaller;
          const t = tools(() => h);
          before(async () => {
            h = await setup(db, modelConfigured ? { automations: { modelConfigured: true } } : undefined);
            ada = await h.as('ada@acme.test');
          });
          after(() => h.close());

          it(
            modelConfigured
              ? 'shows no degraded_reason for a plan with an agent node'
              : 'marks a plan with an agent node model_unavailable',
            async () => {
              const { id } = await t.create(ada, { name: 'Thinker', plan: agentPlan() });
              const { id: plain } = await t.create(ada, { name: 'No model needed', plan: listPlan() });
              const detail = await t.read(ada, id);
              const row = (await t.listed(ada)).find((a) => a.automation_id === id);
              const r = await ada.call('read_automation', { automation_id: id });
              if (modelConfigured) {
                assert.equal(detail.degraded_reason, undefined);
                assert.equal(row?.degraded_reason, undefined);
                assert.doesNotMatch(r.text, /degraded/);
              } else {
                assert.equal(detail.degraded_reason, 'model_unavailable');
                assert.equal(row?.degraded_reason, 'model_unavailable');
                assert.match(r.text, /degraded: model_unavailable/);
              }
              assert.equal((await t.read(ada, plain)).degraded_reason, undefined);
            },
          );
        });
      }
    });

    describe('the automation’s session', () => {
      let h: Harness;
      let ada: ToolCaller;
      let bob: ToolCaller;
      const t = tools(() => h);

      before(async () => {
        h = await setup(db);
        ({ ada, bob } = await connectPeople(h));
      });
      after(() => h.close());

      const participants = async (conversationId: string) =>
        (
          await t
            .sql()
            .selectFrom('conversation_participants')
            .select('person_id')
            .where('conversation_id', '=', conversationId)
            .execute()
        )
          .map((p) => p.person_id)
          .sort();
      const messages = (conversationId: string) =>
        t
          .sql()
          .selectFrom('messages')
          .selectAll()
          .where('conversation_id', '=', conversationId)
          .orderBy('created_at')
          .orderBy('id')
          .execute();

      it('publishing creates a session the creator takes part in, with a notice posted', async () => {
        const { id, published } = await t.create(bob, { name: 'Bob session' });
        const sessionId = published.session_id as string;
        const conversation = await t
          .sql()
          .selectFrom('conversations')
          .selectAll()
          .where('id', '=', sessionId)
          .executeTakeFirstOrThrow();
        assert.equal(conversation.kind, 'session');
        assert.equal(conversation.workspace_id, acme(h).id);
        assert.equal(conversation.title, 'Bob session');
        assert.equal(conversation.archived, 0);
        assert.deepEqual(await participants(sessionId), [personId(h, 'bob@acme.test')]);

        const posted = await messages(sessionId);
        assert.equal(posted.length, 1);
        assert.equal(posted[0]?.author_id, personId(h, 'bob@acme.test'));
        assert.match(
          posted[0]?.body ?? '',
          /Bob Stone published “Bob session” \(version 1\); it runs daily at 09:30 \(Europe\/Berlin\)/,
        );
        assert.equal((await t.read(bob, id)).session_id, sessionId);
      });

      it('keeps one session across republishing and pausing, posting each change there', async () => {
        const { id, published } = await t.create(ada, {
          name: 'Team session',
          publish: { scope: 'workspace' },
        });
        const sessionId = published.session_id as string;
        assert.deepEqual(await participants(sessionId), [personId(h, 'ada@acme.test')]);

        const v2 = await t.draft(ada, { automation_id: id, plan_json: listPlan() });
        const republished = await t.publish(ada, { automation_id: id, flow_version_id: v2.flow_version_id });
        assert.equal(republished.session_id, sessionId, 'a republish keeps the session');
        ok(await ada.call('edit_automation', { action: 'set_enabled', automation_id: id, enabled: false }));
        const bodies = (await messages(sessionId)).map((m) => m.body);
        assert.equal(bodies.length, 3);
        assert.match(bodies[1] ?? '', /published version 2/);
        assert.match(bodies[2] ?? '', /paused this automation/);
        const sessions = await t
          .sql()
          .selectFrom('conversations')
          .select('id')
          .where('kind', '=', 'session')
          .execute();
        assert.equal(sessions.length, 2, 'one session per automation');
      });
    });
  });
}
