import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createEngine, type Engine } from '../src/engine/engine.ts';
import type { Actor } from '../src/domains/workspace/actor.ts';
import { DATABASES } from './support/databases.ts';
import { acme, setup, type Harness, type ToolCaller } from './support/harness.ts';
import {
  errorReply,
  startModelServer,
  textReply,
  toolCallReply,
  toolCallsReply,
  type ModelServer,
} from './support/model-server.ts';
import { ok } from './support/results.ts';

type Json = Record<string, unknown>;

const lit = (value: unknown) => ({ kind: 'literal', value });

const WEEKLY = { kind: 'schedule', frequency: 'weekly', weekday: 3, hour: 4, minute: 0, timezone: 'UTC' };

interface NodeInfo {
  node_id: string;
  status: string;
  attempt: number;
  error?: string;
}

interface RunInfo {
  run_id: string;
  status: string;
  error?: string;
  nodes: NodeInfo[];
  output?: Json;
}

/** A plan whose only step is one agent node with the given fields. */
function agentPlan(name: string, fields: Json): Json {
  return {
    planVersion: 1,
    name,
    description: `${name}.`,
    nodes: [{ id: 'think', kind: 'agent', instructions: lit('Summarise the week in one line.'), ...fields }],
    edges: [],
  };
}

/** The text of every message of a chat completions request, joined. */
function messageText(request: Json): string {
  const messages = (request.messages ?? []) as { content?: unknown }[];
  return messages
    .map((m) =>
      typeof m.content === 'string'
        ? m.content
        : Array.isArray(m.content)
          ? (m.content as { text?: string }[]).map((p) => p.text ?? '').join('')
          : '',
    )
    .join('\n');
}

const SUMMARY_SCHEMA = {
  type: 'object',
  properties: {
    summary: { type: 'string' },
    count: { type: 'integer' },
  },
  required: ['summary', 'count'],
  additionalProperties: false,
};

for (const db of DATABASES) {
  describe(`agent nodes on ${db.name}`, () => {
    let model: ModelServer;
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;
    let counter = 0;
    /** What the github.get_issue connector call was given, call by call. */
    const issueCalls: Json[] = [];

    before(async () => {
      model = await startModelServer();
      h = await setup(db, { automations: { modelConfigured: true } });
      engine = createEngine(h.services, {
        leaseMs: 5000,
        model: { url: model.url, key: 'sk-test-key', model: 'test-model' },
        httpAllow: [new URL(model.url).host],
        connectorCalls: {
          'github.get_issue': async (input) => {
            issueCalls.push(input);
            return {
              number: input.number as number,
              title: 'Header is misaligned',
              body: 'It sits two pixels left.',
              state: 'open',
              url: `https://github.com/${String(input.repo)}/issues/${String(input.number)}`,
              labels: ['bug'],
            };
          },
        },
      });
      ada = await h.as('ada@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
      await model.close();
    });

    beforeEach(() => model.reset());

    async function publish(actor: Actor, planJson: Json) {
      const drafted = await h.services.automations.draft(actor, {
        plan_json: planJson,
        ask: `Do ${String(planJson.name)}.`,
      });
      counter += 1;
      const published = await h.services.automations.publish(actor, {
        flow_version_id: drafted.flow_version_id,
        name: `${String(planJson.name)} ${counter}`,
        trigger: WEEKLY,
      });
      return published.automation_id;
    }

    /** Runs the automation now, lets the engine finish, and reads the run back. */
    async function runToEnd(actor: Actor, automationId: string): Promise<RunInfo> {
      const started = await h.services.automations.run(actor, { automation_id: automationId });
      await engine.drain();
      const read = await h.services.automations.read(actor, {
        automation_id: automationId,
        run_id: started.run_id,
      });
      assert.ok(read.run, 'the run is readable');
      return read.run as unknown as RunInfo;
    }

    const nodeOf = (run: RunInfo, id: string) => {
      const node = run.nodes.find((n) => n.node_id === id);
      assert.ok(node, `node ${id} in ${JSON.stringify(run.nodes)}`);
      return node;
    };

    it('returns {text} from the model’s reply, sending the instructions, the input and the key', async () => {
      model.replies.push(() => textReply('Everything on the roadmap shipped.'));
      const id = await publish(
        h.actor('ada@acme.test'),
        agentPlan('Weekly line', { input: { topic: lit('the roadmap'), weeks: lit(2) } }),
      );
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal(nodeOf(run, 'think').status, 'succeeded');
      assert.deepEqual(run.output, { think: { text: 'Everything on the roadmap shipped.' } });

      assert.equal(model.requests.length, 1, 'one call to the model');
      const request = model.requests[0]!;
      assert.equal(request.model, 'test-model');
      const sent = messageText(request);
      assert.match(sent, /Summarise the week in one line\./);
      assert.match(sent, /the roadmap/, 'the node’s input reaches the model');
      assert.match(sent, /"weeks": 2/);
      assert.equal(request.tools, undefined, 'no tools are offered when the node names none');
      assert.equal(model.headers[0]!.authorization, 'Bearer sk-test-key');
    });

    it('asks for structured output with output_schema and returns the parsed object', async () => {
      model.replies.push(() => textReply(JSON.stringify({ summary: 'Two things shipped.', count: 2 })));
      const id = await publish(
        h.actor('ada@acme.test'),
        agentPlan('Structured line', { output_schema: SUMMARY_SCHEMA }),
      );
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.output, { think: { summary: 'Two things shipped.', count: 2 } });

      assert.equal(model.requests.length, 1);
      const request = model.requests[0]!;
      const format = request.response_format as { type?: string; json_schema?: { schema?: unknown } };
      assert.ok(format, `the request asks for a response format: ${JSON.stringify(request)}`);
      assert.ok(
        format.type === 'json_schema' || format.type === 'json_object',
        `response_format asks for JSON: ${JSON.stringify(format)}`,
      );
      // The model can only follow the schema if it is told it, in response_format or in the prompt.
      const schemaInFormat =
        format.type === 'json_schema' &&
        JSON.stringify(format.json_schema?.schema ?? {}).includes('"summary"') &&
        JSON.stringify(format.json_schema?.schema ?? {}).includes('"count"');
      const schemaInPrompt = /"summary"/.test(messageText(request)) && /"count"/.test(messageText(request));
      assert.ok(
        schemaInFormat || schemaInPrompt,
        `the output_schema reaches the model; the request was ${JSON.stringify(request)}`,
      );
    });

    it('fails the node when the model’s reply does not follow output_schema', async () => {
      model.replies.push(() => textReply(JSON.stringify({ summary: 5 })));
      const id = await publish(
        h.actor('ada@acme.test'),
        agentPlan('Structured miss', { output_schema: SUMMARY_SCHEMA }),
      );
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'failed', JSON.stringify(run));
      const node = nodeOf(run, 'think');
      assert.equal(node.status, 'failed');
      assert.match(node.error ?? '', /does not follow output_schema: .*required property 'count'/);
    });

    it('runs a read tool as the automation’s creator and sends the result back to the model', async () => {
      const planId = acme(h).artifacts.plan as string;
      model.replies.push(
        () => toolCallReply('documents__read_document', { document_id: planId }),
        () => textReply('The private plan is a draft.'),
      );
      const id = await publish(
        h.actor('ada@acme.test'),
        agentPlan('Read and summarise', {
          instructions: lit('Read the document and summarise it.'),
          input: { document_id: lit(planId) },
          tools: ['documents.read_document'],
        }),
      );
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.output, { think: { text: 'The private plan is a draft.' } });

      assert.equal(model.requests.length, 2, 'the tool result goes back in a second call');
      const [first, second] = model.requests as [Json, Json];
      const offered = ((first.tools ?? []) as { type: string; function: { name: string } }[]).map(
        (t) => t.function.name,
      );
      assert.deepEqual(offered, ['documents__read_document'], 'only the node’s tools are offered');
      const messages = second.messages as { role: string; content?: unknown; tool_call_id?: string }[];
      const toolMessage = messages.find((m) => m.role === 'tool');
      assert.ok(toolMessage, `the second call carries a tool result: ${JSON.stringify(messages)}`);
      assert.equal(toolMessage.tool_call_id, 'call_1');
      const result = JSON.stringify(toolMessage.content);
      assert.match(result, /Draft\./, 'the document’s markdown reaches the model');
      assert.match(result, /Private plan/);
      assert.ok(
        messages.some((m) => m.role === 'assistant'),
        'the model’s own tool call is part of the conversation it is sent back',
      );
    });

    it('does not let a tool read what the creator cannot read', async () => {
      const planId = acme(h).artifacts.plan as string;
      model.replies.push(
        () => toolCallReply('documents__read_document', { document_id: planId }),
        () => textReply('I could not read it.'),
      );
      const dee = h.actor('dee@acme.test');
      const id = await publish(
        dee,
        agentPlan('Peek', {
          instructions: lit('Read the document and summarise it.'),
          input: { document_id: lit(planId) },
          tools: ['documents.read_document'],
        }),
      );
      const run = await runToEnd(dee, id);
      for (const request of model.requests) {
        assert.doesNotMatch(
          JSON.stringify(request),
          /Draft\./,
          'a document its creator may not read never reaches the model',
        );
      }
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.deepEqual(run.output, { think: { text: 'I could not read it.' } });
      assert.equal(model.requests.length, 2);
      const messages = model.requests[1]!.messages as { role: string; content?: unknown }[];
      const toolMessage = messages.find((m) => m.role === 'tool');
      assert.ok(toolMessage, 'the refusal goes back to the model as the tool’s result');
      assert.match(JSON.stringify(toolMessage.content), /not found/i);
    });

    it('lets a tool reach only allow-listed hosts (http.get)', async () => {
      const allowed = `${new URL(model.url).origin}/status.txt`;
      model.replies.push(
        () =>
          toolCallsReply([
            { name: 'http__get', args: { url: allowed }, id: 'call_allowed' },
            { name: 'http__get', args: { url: 'http://127.0.0.2:9/secret' }, id: 'call_blocked' },
          ]),
        () => textReply('Checked both.'),
      );
      const id = await publish(h.actor('ada@acme.test'), agentPlan('Check hosts', { tools: ['http.get'] }));
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal(model.requests.length, 2);
      const messages = model.requests[1]!.messages as {
        role: string;
        content?: unknown;
        tool_call_id?: string;
      }[];
      const resultOf = (callId: string) => {
        const message = messages.find((m) => m.role === 'tool' && m.tool_call_id === callId);
        assert.ok(message, `a result for ${callId} in ${JSON.stringify(messages)}`);
        return JSON.stringify(message.content);
      };
      assert.match(resultOf('call_allowed'), /404/, 'the allowed host was reached and its answer returned');
      assert.match(resultOf('call_blocked'), /not on the allow list/);
    });

    it('calls a connector’s read capability as a tool like a capability node would', async () => {
      issueCalls.length = 0;
      // A capability node reaches the connector's call.
      const drafted = await h.services.automations.draft(h.actor('ada@acme.test'), {
        plan_json: {
          planVersion: 1,
          name: 'Issue reader',
          description: 'Reads an issue.',
          nodes: [
            {
              id: 'issue',
              kind: 'capability',
              capability: 'github.get_issue',
              input: { repo: lit('acme/web'), number: lit(7) },
            },
          ],
          edges: [],
        },
        ask: 'Read issue 7.',
      });
      counter += 1;
      const reader = await h.services.automations.publish(h.actor('ada@acme.test'), {
        flow_version_id: drafted.flow_version_id,
        name: `Issue reader ${counter}`,
        trigger: WEEKLY,
      });
      const direct = await runToEnd(h.actor('ada@acme.test'), reader.automation_id);
      assert.equal(direct.status, 'succeeded', JSON.stringify(direct));
      assert.equal(issueCalls.length, 1);

      // The same capability offered to an agent node as a tool.
      model.replies.push(
        () => toolCallReply('github__get_issue', { repo: 'acme/web', number: 7 }),
        () => textReply('The header is misaligned.'),
      );
      const id = await publish(
        h.actor('ada@acme.test'),
        agentPlan('Issue summary', { tools: ['github.get_issue'] }),
      );
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'succeeded', JSON.stringify(run));
      assert.equal(model.requests.length, 2);
      const toolMessage = (model.requests[1]!.messages as { role: string; content?: unknown }[]).find(
        (m) => m.role === 'tool',
      );
      assert.ok(toolMessage);
      assert.match(
        JSON.stringify(toolMessage.content),
        /Header is misaligned/,
        'the connector’s answer reaches the model',
      );
      assert.equal(issueCalls.length, 2);
      assert.deepEqual(issueCalls[1], { repo: 'acme/web', number: 7 });
    });

    it('fails the node with a clear message when the model server answers with an error', async () => {
      model.fallback = () => errorReply(400, 'the context window is full');
      const id = await publish(h.actor('ada@acme.test'), agentPlan('Broken model', {}));
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'failed', JSON.stringify(run));
      const node = nodeOf(run, 'think');
      assert.equal(node.status, 'failed');
      assert.match(node.error ?? '', /^the model call failed: /);
      assert.match(node.error ?? '', /the context window is full/, 'the server’s own message is kept');
      assert.match(run.error ?? '', /^think: the model call failed/);
      const read = ok(await ada.call('read_automation', { automation_id: id, run_id: run.run_id }));
      assert.equal((read.run as RunInfo).status, 'failed');
    });

    it('fails the node after a retry when the model server keeps failing', async () => {
      model.fallback = () => errorReply(500, 'the GPU caught fire');
      const id = await publish(h.actor('ada@acme.test'), agentPlan('Burning model', {}));
      const run = await runToEnd(h.actor('ada@acme.test'), id);
      assert.equal(run.status, 'failed', JSON.stringify(run));
      const node = nodeOf(run, 'think');
      assert.match(node.error ?? '', /^the model call failed: /);
      assert.match(node.error ?? '', /the GPU caught fire/);
      assert.ok(model.requests.length >= 1 && model.requests.length <= 2, 'a bounded number of tries');
    });
  });

  describe(`agent nodes without a model on ${db.name}`, () => {
    let h: Harness;
    let engine: Engine;
    let ada: ToolCaller;

    before(async () => {
      h = await setup(db);
      engine = createEngine(h.services, { leaseMs: 5000 });
      ada = await h.as('ada@acme.test');
    });

    after(async () => {
      await engine.stop();
      await h.close();
    });

    it('fails the node with model_unavailable and marks the automation degraded', async () => {
      const actor = h.actor('ada@acme.test');
      const drafted = await h.services.automations.draft(actor, {
        plan_json: agentPlan('Thinker', {}),
        ask: 'Think.',
      });
      const published = await h.services.automations.publish(actor, {
        flow_version_id: drafted.flow_version_id,
        name: 'Thinker',
        trigger: WEEKLY,
      });
      const id = published.automation_id;

      const read = ok(await ada.call('read_automation', { automation_id: id }));
      assert.equal(read.degraded_reason, 'model_unavailable');

      const started = await h.services.automations.run(actor, { automation_id: id });
      await engine.drain();
      const detail = ok(await ada.call('read_automation', { automation_id: id, run_id: started.run_id }));
      const run = detail.run as RunInfo;
      assert.equal(run.status, 'failed', JSON.stringify(run));
      const node = run.nodes.find((n) => n.node_id === 'think');
      assert.equal(node?.status, 'failed');
      assert.match(node?.error ?? '', /^model_unavailable/);
      assert.match(node?.error ?? '', /TANDEM_MODEL_URL/, 'the error says how to configure a model');
      assert.equal(detail.degraded_reason, 'model_unavailable');
    });
  });
}
