import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import {
  createApplicationInputHandler,
  createTaskSessionEndpointId,
  createTaskSessionFromClient,
  resultFromTaskOutcome,
  type ApplicationInputRequest,
  type JsonRpcResponse,
  type RawClientDispatch,
  type ResolvedInputExchangeContext,
  type TaskExecutionEvent,
} from '@modelcontextprotocol/ext-tasks/client';
import type { CallToolResultV2 } from '@modelcontextprotocol/ext-tasks/core/v2';
import type { BrowserContext } from 'playwright-core';
import type { Scope } from '../src/domains/workspace/actor.ts';
import { approval, capability, lit, plan, WEEKLY } from './support/automations.ts';
import { DATABASES } from './support/databases.ts';
import { acme } from './support/harness.ts';
import { freePort } from './support/raw-http.ts';
import { openWebApp, SKIP_BROWSER, type WebApp } from './support/web.ts';
import { shoot, waitFor } from './support/web-shots.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const TASKS = 'io.modelcontextprotocol/tasks';
const REVISION = '2026-07-28';
const CLIENT_INFO = { name: 'tasks-client-tests', version: '1.0.0' };
const SCOPES: Scope[] = ['automations:read', 'automations:write', 'documents:read'];

/**
 * The host's raw request path the Tasks requester asks for on a 2026-07-28 server (the SDK
 * client's own codecs refuse a `resultType: "task"` answer): JSON-RPC over a second Streamable
 * HTTP transport of the SDK, which signs each request with the token and derives the
 * `Mcp-Method` / `Mcp-Name` headers from the framed body.
 */
async function rawChannel(url: URL, token: string) {
  const transport = new StreamableHTTPClientTransport(url, { authProvider: { token: async () => token } });
  const pending = new Map<number, (response: JsonRpcResponse) => void>();
  transport.onmessage = (message: JSONRPCMessage) => {
    const answer = message as Json;
    const settle = typeof answer.id === 'number' ? pending.get(answer.id) : undefined;
    if (!settle) return;
    pending.delete(answer.id);
    settle(answer.error ? { kind: 'error', error: answer.error } : { kind: 'result', result: answer.result });
  };
  await transport.start();
  let next = 0;
  const dispatch: RawClientDispatch = async (request, options) => {
    const id = ++next;
    const answered = new Promise<JsonRpcResponse>((resolve, reject) => {
      pending.set(id, resolve);
      options?.signal?.addEventListener('abort', () => {
        pending.delete(id);
        reject(options.signal!.reason as Error);
      });
    });
    try {
      await transport.send({ jsonrpc: '2.0', id, ...(request as Json) } as JSONRPCMessage, {
        ...(options?.context?.headers ? { headers: { ...options.context.headers } } : {}),
      });
    } catch (error) {
      pending.delete(id);
      throw error;
    }
    return answered;
  };
  return { dispatch, close: () => transport.close() };
}

for (const db of DATABASES) {
  describe(
    `a task-augmented run from the SDK's Tasks requester, approved in the app (${db.name})`,
    { skip: SKIP_BROWSER },
    () => {
      let app: WebApp;
      let ada: BrowserContext;
      const closing: (() => Promise<void>)[] = [];

      before(async () => {
        // The app at the address it names in links (PUBLIC_URL in a deployment).
        const port = await freePort();
        const publicUrl = `http://127.0.0.1:${port}`;
        app = await openWebApp(db, {}, { automations: { publicUrl } }, { PORT: String(port) });
        ada = await app.signedIn('ada@acme.test');
      });
      after(async () => {
        for (const close of closing.reverse()) await close();
        await app?.close();
      });

      /** The TypeScript SDK client on Streamable HTTP with Ada's personal access token. */
      async function connect() {
        const actor = app.h.actor('ada@acme.test');
        const { token } = await app.h.services.tokens.create(
          actor.personId,
          actor.workspaceId,
          SCOPES,
          3_600_000,
        );
        const url = new URL('/mcp', app.server.url);
        const client = new Client(CLIENT_INFO, {
          capabilities: { extensions: { [TASKS]: {} } },
          versionNegotiation: { mode: { pin: REVISION } },
        });
        await client.connect(
          new StreamableHTTPClientTransport(url, { authProvider: { token: async () => token } }),
        );
        closing.push(() => client.close());
        const raw = await rawChannel(url, token);
        closing.push(raw.close);
        return { client, url, raw };
      }

      it('waits on the approval as input_required, is approved from the card it names, and completes with the run', async () => {
        const roadmap = acme(app.h).artifacts.roadmap as string;
        const text = `Task line ${Date.now()}`;
        const actor = app.h.actor('ada@acme.test');
        const drafted = await app.h.services.automations.draft(actor, {
          plan_json: plan(
            'Task digest',
            [
              approval('ok', { message: lit(`Append “${text}”?`) }),
              capability('append', 'documents.append_to_document', {
                document_id: lit(roadmap),
                content_markdown: lit(text),
              }),
            ],
            [{ from: 'ok', to: 'append' }],
          ),
          ask: 'Append a line to the roadmap once I approve it.',
        });
        const { automation_id: automationId, session_id: sessionId } =
          await app.h.services.automations.publish(actor, {
            flow_version_id: drafted.flow_version_id,
            name: 'Task digest',
            trigger: WEEKLY,
          });

        const { client, url, raw } = await connect();
        assert.equal(client.getNegotiatedProtocolVersion(), REVISION);

        // The client's side of the URL elicitation: the host is handed the card's address.
        type Asked = { request: ApplicationInputRequest; context: ResolvedInputExchangeContext };
        let asked: Asked | undefined;
        const session = createTaskSessionFromClient(client, {
          endpointId: await createTaskSessionEndpointId('tandem-tests', { url: url.href }),
          rawDispatch: raw.dispatch,
          v2RequestFraming: {
            protocolVersion: REVISION,
            clientInfo: CLIENT_INFO,
            clientCapabilities: { extensions: { [TASKS]: {} } },
          },
          onInputRequest: createApplicationInputHandler({
            // The person is shown the card's address; approving is theirs to do in the app.
            elicitation: (request, context) => {
              asked ??= { request, context };
              return { action: 'accept' };
            },
            sampling: () => {
              throw new Error('Tandem does not ask for sampling');
            },
            roots: () => ({ roots: [] }),
          }),
        });
        closing.push(() => session.close());
        assert.equal(session.capabilities.execution, true);

        const execution = await session.callTool<CallToolResultV2>(
          'edit_automation',
          { action: 'run', automation_id: automationId },
          { task: { preference: 'require' } },
        );
        assert.equal(execution.kind, 'task');
        const taskId = execution.handle!.taskId;
        assert.match(taskId, /^run_/);

        const events: TaskExecutionEvent<CallToolResultV2>[] = [];
        const settled = execution.settle({ onEvent: (event) => void events.push(event) });
        const statuses = () => events.flatMap((e) => (e.type === 'task' ? [e.task.status] : []));

        // It waits on the approval: the task says which, what approving writes, and where.
        await waitFor(
          async () => statuses().includes('input_required') && asked !== undefined,
          'input_required',
        );
        const waiting = events.find((e) => e.type === 'task' && e.task.status === 'input_required');
        assert.ok(waiting?.type === 'task');
        const approvalId = asked!.context.inputId!;
        assert.match(approvalId, /^apr_/);
        assert.equal(asked!.context.taskId, taskId);
        assert.equal(asked!.request.kind, 'elicitation');
        const params = asked!.request.params as Json;
        assert.equal(params.mode, 'url');
        const card = new URL(params.url as string);
        assert.equal(card.origin, new URL(app.server.url).origin);
        assert.equal(card.hash, `#approval-${approvalId}`);
        assert.equal(card.pathname, `/sessions/${sessionId}`, 'the card in the automation’s session');
        const message = waiting.task.statusMessage ?? '';
        assert.ok(message.includes(`approval ${approvalId}`), message);
        assert.ok(message.includes(`Append “${text}”?`), message);
        assert.match(message, /Approving lets it append to /);
        assert.ok(message.includes(card.pathname + card.hash), message);
        assert.equal(waiting.task.suggestedPollIntervalMs, 5_000);

        // A person opens the card the task named and approves it in the app.
        const page = await ada.newPage();
        await page.goto(card.href);
        const here = page.locator(`#approval-${approvalId}`);
        await here.getByRole('heading', { name: `Append “${text}”?` }).waitFor();
        await shoot(page, 'tasks', `card-${db.name}`);
        await here.getByRole('button', { name: 'Approve' }).click();
        await here.getByText('Approved by Ada Lovelace').waitFor();
        await page.close();

        // The requester follows the task to its end; the outcome is the run record.
        const { outcome, lastTask } = await settled;
        if (outcome.status === 'failed')
          assert.fail(`the task failed: ${String(outcome.error.cause ?? outcome.error)}`);
        assert.equal(outcome.status, 'completed');
        assert.equal(lastTask?.status, 'completed');
        assert.match(lastTask?.statusMessage ?? '', /^Run succeeded\./);
        const result = resultFromTaskOutcome(outcome);
        assert.notEqual(result.isError, true);
        const record = result.structuredContent as Json;
        assert.equal(record.run_id, taskId);
        assert.equal(record.automation_id, automationId);
        assert.equal(record.run.status, 'succeeded');
        assert.deepEqual(
          record.run.nodes.map((n: Json) => [n.node_id, n.status]),
          [
            ['ok', 'succeeded'],
            ['append', 'succeeded'],
          ],
        );
        assert.deepEqual(statuses().at(0), 'working');
        assert.deepEqual(statuses().at(-1), 'completed');

        // The write landed exactly once, as read through the public tool.
        const read = await client.callTool({ name: 'read_document', arguments: { document_id: roadmap } });
        const markdown = (read.structuredContent as Json).markdown as string;
        assert.equal(markdown.split(text).length - 1, 1, markdown);
      });
    },
  );
}
