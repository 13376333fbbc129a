import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { isCreateTaskResultV2, isDetailedTaskV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import { z } from 'zod';
import { loadConfig } from '../src/config.ts';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import type { Scope } from '../src/domains/workspace/actor.ts';
import { startServer, type RunningServer } from '../src/server.ts';
import { DATABASES } from './support/databases.ts';
import { setup, type Harness } from './support/harness.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TASKS = 'io.modelcontextprotocol/tasks';
const REVISION = '2026-07-28';
const WRITE: Scope[] = ['automations:read', 'automations:write'];
const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' };

function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

/** A message to the automation's session, behind an approval when `guarded`. */
function plan(name: string, text: string, guarded: boolean): Json {
  const post = {
    id: 'post',
    kind: 'capability',
    capability: 'conversations.post_message',
    input: { text: { kind: 'literal', value: text } },
  };
  return guarded
    ? {
        planVersion: 1,
        name,
        description: `${name}.`,
        nodes: [{ id: 'ok', kind: 'approval', message: { kind: 'literal', value: `Post “${text}”?` } }, post],
        edges: [{ from: 'ok', to: 'post' }],
      }
    : { planVersion: 1, name, description: `${name}.`, nodes: [post], edges: [] };
}

/** Any result of a request the tasks extension defines; the SDK passes it through as sent. */
const anyResult = z.looseObject({});

for (const db of DATABASES) {
  describe(`edit_automation runs as MCP Tasks on ${db.name}`, () => {
    let h: Harness;
    let server: RunningServer;
    let engine: Engine;
    let dataDir: string;
    const clients: Client[] = [];

    const tokenFor = async (email: string, scopes: Scope[] = WRITE) => {
      const actor = h.actor(email);
      return (await h.services.tokens.create(actor.personId, actor.workspaceId, scopes, 3_600_000)).token;
    };

    /** The TypeScript SDK client, declaring the Tasks extension unless told not to. */
    async function connect(email: string, declare = true): Promise<Client> {
      const token = await tokenFor(email);
      const client = new Client(
        { name: 'tasks-tests', version: '1.0.0' },
        {
          capabilities: declare ? { extensions: { [TASKS]: {} } } : {},
          versionNegotiation: { mode: { pin: REVISION } },
        },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL('/mcp', server.url), {
          authProvider: { token: async () => token },
        }),
      );
      clients.push(client);
      return client;
    }

    /**
     * A task-augmented tools/call as the 2026-07-28 wire carries it. The plain SDK client (2.4)
     * refuses a `resultType: "task"` answer to tools/call, so this one request is sent as it would
     * send it (the Tasks requester package drives it in mcp-tasks-client.browser.test.ts).
     */
    async function callForTask(email: string, name: string, args: Json): Promise<Json> {
      const res = await fetch(new URL('/mcp', server.url), {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await tokenFor(email)}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': REVISION,
          'mcp-method': 'tools/call',
          'mcp-name': name,
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name,
            arguments: args,
            _meta: {
              'io.modelcontextprotocol/protocolVersion': REVISION,
              'io.modelcontextprotocol/clientInfo': { name: 'tasks-tests', version: '1.0.0' },
              'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
            },
          },
        }),
      });
      assert.equal(res.status, 200);
      const text = await res.text();
      const body = res.headers.get('content-type')?.includes('text/event-stream')
        ? (JSON.parse(
            text
              .split('\n')
              .filter((l) => l.startsWith('data:'))
              .map((l) => l.slice(5))
              .at(-1) ?? '{}',
          ) as Json)
        : (JSON.parse(text) as Json);
      assert.equal(body.error, undefined, JSON.stringify(body.error));
      return body.result as Json;
    }

    const getTask = (client: Client, taskId: string) =>
      client.request({ method: 'tasks/get', params: { taskId } }, anyResult) as Promise<Json>;

    async function publish(email: string, name: string, guarded: boolean): Promise<string> {
      const actor = h.actor(email);
      const drafted = await h.services.automations.draft(actor, {
        plan_json: plan(name, `${name} says hello`, guarded),
        ask: `Post a hello from ${name}.`,
        ...(guarded ? {} : { write_approval: 'automatic' }),
      });
      const published = await h.services.automations.publish(actor, {
        flow_version_id: drafted.flow_version_id,
        name,
        trigger: WEEKLY,
      });
      return published.automation_id;
    }

    before(async () => {
      h = await setup(db);
      dataDir = mkdtempSync(join(tmpdir(), 'tandem-mcp-tasks-'));
      server = await startServer(
        loadConfig({
          TANDEM_DATA: dataDir,
          PORT: String(await freePort()),
          PAGES_PORT: String(await freePort()),
        }),
        h.services,
      );
      engine = createEngine(h.services, { leaseMs: 5000 });
    });

    after(async () => {
      for (const client of clients) await client.close();
      await engine?.stop();
      await server?.close();
      await h?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it('advertises the extension, and answers a call that does not ask for a task exactly as before', async () => {
      const client = await connect('ada@acme.test', false);
      assert.equal(client.getNegotiatedProtocolVersion(), REVISION);
      assert.deepEqual(client.getServerCapabilities()?.extensions?.[TASKS], {});
      const automationId = await publish('ada@acme.test', 'Plain answer', false);
      const result = await client.callTool({
        name: 'edit_automation',
        arguments: { action: 'run', automation_id: automationId },
      });
      assert.notEqual(result.isError, true);
      const structured = result.structuredContent as Json;
      assert.deepEqual(Object.keys(structured).sort(), [
        'action',
        'automation_id',
        'dry_run',
        'run_id',
        'session_id',
        'url',
      ]);
      assert.equal(structured.action, 'run');
      assert.equal(structured.dry_run, false);
      assert.match(
        (result.content as { text: string }[])[0]!.text,
        new RegExp(`^Run ${structured.run_id} of ${automationId} is queued\\. Read it with read_automation`),
      );
      assert.equal((result as Json).taskId, undefined);
    });

    it('answers a task-augmented run with a task at once; tasks/get gives the run record when it ends', async () => {
      const automationId = await publish('ada@acme.test', 'Task run', false);
      const created = await callForTask('ada@acme.test', 'edit_automation', {
        action: 'run',
        automation_id: automationId,
      });
      assert.equal(created.resultType, 'task');
      assert.equal(isCreateTaskResultV2(created), true, JSON.stringify(created));
      assert.equal(created.status, 'working');
      assert.equal(created.taskId, created.structuredContent.run_id, 'the task is the run');
      assert.equal(created.ttlMs, null);
      assert.equal(typeof created.pollIntervalMs, 'number');

      const client = await connect('ada@acme.test');
      const working = await getTask(client, created.taskId);
      assert.equal(isDetailedTaskV2(working), true);
      assert.equal(working.status, 'working');
      assert.equal(working.result, undefined);

      await engine.drain();
      const done = await getTask(client, created.taskId);
      assert.equal(isDetailedTaskV2(done), true, JSON.stringify(done));
      assert.equal(done.status, 'completed');
      assert.match(done.statusMessage, /^Run succeeded\./);
      assert.equal(done.result.resultType, 'complete', 'the result a tools/call answers with');
      const record = done.result.structuredContent as Json;
      assert.equal(record.action, 'run');
      assert.equal(record.automation_id, automationId);
      assert.equal(record.run_id, created.taskId);
      assert.equal(record.run.status, 'succeeded');
      assert.equal(record.run.dry_run, false);
      assert.deepEqual(
        record.run.nodes.map((n: Json) => [n.node_id, n.status]),
        [['post', 'succeeded']],
      );
      assert.match(
        done.result.content[0].text,
        new RegExp(`^Run ${created.taskId} of ${automationId} succeeded`),
      );

      // The same record read_automation gives for the run.
      const read = await client.callTool({
        name: 'read_automation',
        arguments: { automation_id: automationId, run_id: created.taskId },
      });
      assert.deepEqual((read.structuredContent as Json).run, record.run);
    });

    it('follows a dry run as a task too', async () => {
      const automationId = await publish('ada@acme.test', 'Dry task', false);
      const created = await callForTask('ada@acme.test', 'edit_automation', {
        action: 'run',
        automation_id: automationId,
        dry_run: true,
      });
      assert.equal(created.resultType, 'task');
      await engine.drain();
      const done = await getTask(await connect('ada@acme.test'), created.taskId);
      assert.equal(done.status, 'completed');
      assert.equal(done.result.structuredContent.run.dry_run, true);
      assert.match(done.statusMessage, /^Dry run succeeded\./);
    });

    it('reports input_required naming the approval, its writes and where to decide; completes once a person approves', async () => {
      const automationId = await publish('ada@acme.test', 'Guarded task', true);
      const created = await callForTask('ada@acme.test', 'edit_automation', {
        action: 'run',
        automation_id: automationId,
      });
      const client = await connect('ada@acme.test');
      await engine.drain();
      const waiting = await getTask(client, created.taskId);
      assert.equal(isDetailedTaskV2(waiting), true, JSON.stringify(waiting));
      assert.equal(waiting.status, 'input_required');
      const approval = await h.services.deps.db
        .selectFrom('approvals')
        .select(['id', 'session_id'])
        .where('run_id', '=', created.taskId)
        .executeTakeFirstOrThrow();
      const where = `/sessions/${approval.session_id}#approval-${approval.id}`;
      assert.ok(waiting.statusMessage.includes(`approval ${approval.id}`), waiting.statusMessage);
      assert.ok(waiting.statusMessage.includes('Post “Guarded task says hello”?'));
      assert.match(waiting.statusMessage, /Approving lets it post a message in /);
      assert.ok(waiting.statusMessage.includes(where), waiting.statusMessage);
      const ask = waiting.inputRequests[approval.id];
      assert.equal(ask.method, 'elicitation/create');
      assert.equal(ask.params.mode, 'url');
      assert.ok(ask.params.url.endsWith(where), ask.params.url);
      assert.ok(ask.params.message.includes(`approval ${approval.id}`));

      // The client's answer to the elicitation is acknowledged; the decision is the person's.
      const ack = await client.request(
        {
          method: 'tasks/update',
          params: { taskId: created.taskId, inputResponses: { [approval.id]: { action: 'accept' } } },
        },
        anyResult,
      );
      assert.deepEqual(Object.keys(ack), ['_meta'], 'an empty acknowledgement');
      assert.equal((await getTask(client, created.taskId)).status, 'input_required');

      // A person approves in the app (the JSON route its approval cards post to).
      const decided = await fetch(new URL(`/api/approvals/${approval.id}`, server.url), {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          authorization: `Bearer ${await tokenFor('ada@acme.test')}`,
        },
        body: JSON.stringify({ decision: 'approve' }),
      });
      assert.equal(decided.status, 200);
      await engine.drain();
      const done = await getTask(client, created.taskId);
      assert.equal(done.status, 'completed');
      assert.equal(done.inputRequests, undefined);
      assert.equal(done.result.structuredContent.run.status, 'succeeded');
      assert.deepEqual(
        done.result.structuredContent.run.nodes.map((n: Json) => [n.node_id, n.status]),
        [
          ['ok', 'succeeded'],
          ['post', 'succeeded'],
        ],
      );
    });

    it('shows a task only to the person who started it', async () => {
      const automationId = await publish('ada@acme.test', 'Private task', false);
      const created = await callForTask('ada@acme.test', 'edit_automation', {
        action: 'run',
        automation_id: automationId,
      });
      const bob = await connect('bob@acme.test');
      const eve = await connect('eve@other.test');
      for (const [client, taskId] of [
        [bob, created.taskId],
        [eve, created.taskId],
        [await connect('ada@acme.test'), 'run_nope'],
      ] as const) {
        await assert.rejects(getTask(client, taskId), (error: Error & { code?: number }) => {
          assert.equal(error.code, -32602);
          assert.match(error.message, /Task not found/);
          return true;
        });
      }
      await assert.rejects(
        bob.request(
          { method: 'tasks/update', params: { taskId: created.taskId, inputResponses: {} } },
          anyResult,
        ),
        /Task not found/,
      );
    });

    it('asks a client that did not declare the extension for it, and says cancelling is not supported', async () => {
      const automationId = await publish('ada@acme.test', 'Undeclared', false);
      const created = await callForTask('ada@acme.test', 'edit_automation', {
        action: 'run',
        automation_id: automationId,
      });
      const plain = await connect('ada@acme.test', false);
      await assert.rejects(getTask(plain, created.taskId), (error: Error & { code?: number }) => {
        assert.equal(error.code, -32021);
        return true;
      });
      const client = await connect('ada@acme.test');
      await assert.rejects(
        client.request({ method: 'tasks/cancel', params: { taskId: created.taskId } }, anyResult),
        /tasks\/cancel is not supported/,
      );
      assert.equal((await getTask(client, created.taskId)).status, 'working');
      // Publishing or pausing never becomes a task, even when the client asks for tasks.
      const paused = await callForTask('ada@acme.test', 'edit_automation', {
        action: 'set_enabled',
        automation_id: automationId,
        enabled: false,
      });
      assert.equal(paused.resultType, 'complete');
      assert.equal(paused.structuredContent.enabled, false);
    });
  });
}
