import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;

/**
 * What the fake model answers to one request: an HTTP status and a JSON body (sent as server-sent
 * events when the request asked to stream), after `delayMs` if given.
 */
export interface ModelReply {
  status?: number;
  body: unknown;
  delayMs?: number;
}

export interface ModelServer {
  /** The base URL the OpenAI-compatible provider is given (ends in /v1). */
  url: string;
  /** Every request body received on /v1/chat/completions, in order. */
  requests: Json[];
  /** The headers of each of those requests. */
  headers: IncomingHttpHeaders[];
  /** Replies to give next, first in first out; when empty the server answers `fallback`. */
  replies: ((request: Json) => ModelReply)[];
  fallback: (request: Json) => ModelReply;
  /** The most requests it was answering at once since the last reset. */
  maxInFlight: number;
  reset(): void;
  close(): Promise<void>;
}

let counter = 0;

/** A chat completion whose message is plain text. */
export function textReply(content: string): ModelReply {
  counter += 1;
  return {
    body: {
      id: `chatcmpl-${counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: 'test-model',
      choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

/** A chat completion asking to call one tool with the given arguments. */
export function toolCallReply(name: string, args: Json, callId = 'call_1'): ModelReply {
  return toolCallsReply([{ name, args, id: callId }]);
}

/** A chat completion asking to call several tools at once. */
export function toolCallsReply(calls: { name: string; args: Json; id: string }[]): ModelReply {
  counter += 1;
  return {
    body: {
      id: `chatcmpl-${counter}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: 'test-model',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: null,
            tool_calls: calls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: JSON.stringify(c.args) },
            })),
          },
          finish_reason: 'tool_calls',
        },
      ],
      usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    },
  };
}

/** An error the way OpenAI-compatible servers send one. */
export function errorReply(status: number, message: string): ModelReply {
  return { status, body: { error: { message, type: 'server_error', code: null } } };
}

interface Completion {
  id: string;
  model: string;
  created: number;
  choices: {
    message: { content?: string | null; tool_calls?: unknown[] };
    finish_reason: string;
  }[];
  usage?: unknown;
}

/** A chat completion as the chunks a streaming server sends: text in small pieces, then the end. */
export function streamChunks(completion: Completion): Json[] {
  const base = {
    id: completion.id,
    object: 'chat.completion.chunk',
    created: completion.created,
    model: completion.model,
  };
  const choice = completion.choices[0]!;
  const chunk = (delta: Json, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const chunks: Json[] = [chunk({ role: 'assistant', content: '' })];
  const content = choice.message.content ?? '';
  for (let i = 0; i < content.length; i += 7) chunks.push(chunk({ content: content.slice(i, i + 7) }));
  (choice.message.tool_calls ?? []).forEach((call, index) =>
    chunks.push(chunk({ tool_calls: [{ index, ...(call as Json) }] })),
  );
  chunks.push(chunk({}, choice.finish_reason));
  if (completion.usage) chunks.push({ ...base, choices: [], usage: completion.usage });
  return chunks;
}

/** A local OpenAI-compatible chat completions endpoint that records what it is sent. */
export async function startModelServer(): Promise<ModelServer> {
  const defaultFallback = () => textReply('fallback answer');
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
        return;
      }
      let body: Json;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Json;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'the body is not JSON' } }));
        return;
      }
      model.requests.push(body);
      model.headers.push(req.headers);
      inFlight += 1;
      model.maxInFlight = Math.max(model.maxInFlight, inFlight);
      res.once('close', () => (inFlight -= 1));
      const reply = (model.replies.shift() ?? model.fallback)(body);
      const send = () => {
        const status = reply.status ?? 200;
        if (body.stream === true && status === 200) {
          res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
          for (const chunk of streamChunks(reply.body as Completion))
            res.write(`data: ${JSON.stringify(chunk)}\n\n`);
          res.end('data: [DONE]\n\n');
          return;
        }
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(reply.body));
      };
      if (!reply.delayMs) return send();
      const timer = setTimeout(send, reply.delayMs);
      res.once('close', () => clearTimeout(timer));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  let inFlight = 0;
  const model: ModelServer = {
    url: `http://127.0.0.1:${port}/v1`,
    requests: [],
    headers: [],
    replies: [],
    fallback: defaultFallback,
    maxInFlight: 0,
    reset() {
      model.maxInFlight = 0;
      model.requests.length = 0;
      model.headers.length = 0;
      model.replies.length = 0;
      model.fallback = defaultFallback;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return model;
}
