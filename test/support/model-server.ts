import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type Json = Record<string, unknown>;

/** What the fake model answers to one request: an HTTP status and a JSON body. */
export interface ModelReply {
  status?: number;
  body: unknown;
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
      const reply = (model.replies.shift() ?? model.fallback)(body);
      res.writeHead(reply.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const model: ModelServer = {
    url: `http://127.0.0.1:${port}/v1`,
    requests: [],
    headers: [],
    replies: [],
    fallback: defaultFallback,
    reset() {
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
