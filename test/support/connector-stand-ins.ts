import { createServer as createTcpServer, type AddressInfo, type Socket } from 'node:net';
import type { ServerResponse } from 'node:http';
import { SMTPServer } from 'smtp-server';
import { standIn, type Received, type StandIn } from './stand-in.ts';

type Json = Record<string, unknown>;

/**
 * Local stand-ins for the services the connectors reach: an HTTP server speaking the GitHub and
 * Slack REST shapes the transports call, and an SMTP server. Each records what it received.
 */

export interface Canned {
  status: number;
  headers?: Record<string, string>;
  body?: unknown;
}

export interface ServiceStandIn extends StandIn {
  /** When each request arrived, in the order of `received`. */
  times: number[];
  /** Answers given to the next requests, in order, before the service's own. */
  answerNext(...answers: Canned[]): void;
}

function answer(res: ServerResponse, canned: Canned) {
  res.writeHead(canned.status, { 'content-type': 'application/json; charset=utf-8', ...canned.headers });
  res.end(canned.body === undefined ? '' : JSON.stringify(canned.body));
}

async function service(route: (req: Received, url: URL) => Canned): Promise<ServiceStandIn> {
  const queued: Canned[] = [];
  const times: number[] = [];
  const server = await standIn((req, res) => {
    times.push(Date.now());
    answer(res, queued.shift() ?? route(req, new URL(req.path, 'http://stand-in')));
  });
  return Object.assign(server, { times, answerNext: (...answers: Canned[]) => queued.push(...answers) });
}

/**
 * GitHub's REST API under `/api/v3` (as GitHub Enterprise serves it): issues, comments, pull
 * requests and file contents of any repository, for requests that carry `token`.
 */
export function githubStandIn(token: string): Promise<ServiceStandIn> {
  let issues = 41;
  let comments = 9000;
  return service((req, url) => {
    if (req.headers.authorization !== `token ${token}`)
      return {
        status: 401,
        body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' },
      };
    const path = url.pathname.replace(/^\/api\/v3/, '');
    if (req.method === 'GET' && path === '/user')
      return { status: 200, body: { login: 'tandem-bot', id: 1 } };
    const repo = /^\/repos\/([^/]+)\/([^/]+)(\/.*)$/.exec(path);
    if (!repo) return { status: 404, body: { message: 'Not Found' } };
    const [, owner, name, rest] = repo as unknown as [string, string, string, string];
    const web = `https://github.example/${owner}/${name}`;
    const body = req.body ? (JSON.parse(req.body) as Json) : {};
    if (req.method === 'POST' && rest === '/issues') {
      issues += 1;
      return {
        status: 201,
        body: {
          id: 1_000_000 + issues,
          number: issues,
          title: body.title,
          body: body.body ?? null,
          state: 'open',
          labels: ((body.labels as string[] | undefined) ?? []).map((l) => ({ name: l })),
          html_url: `${web}/issues/${issues}`,
        },
      };
    }
    const comment = /^\/issues\/(\d+)\/comments$/.exec(rest);
    if (req.method === 'POST' && comment) {
      comments += 1;
      return {
        status: 201,
        body: {
          id: comments,
          body: body.body,
          html_url: `${web}/issues/${comment[1]}#issuecomment-${comments}`,
        },
      };
    }
    const issue = /^\/issues\/(\d+)$/.exec(rest);
    if (req.method === 'GET' && issue)
      return {
        status: 200,
        body: {
          number: Number(issue[1]),
          title: 'Crash on start',
          body: 'It crashes.',
          state: 'open',
          labels: [{ name: 'bug' }],
          html_url: `${web}/issues/${issue[1]}`,
        },
      };
    if (req.method === 'GET' && rest === '/pulls')
      return {
        status: 200,
        body: [7, 8].map((n) => ({
          number: n,
          title: `Change ${n}`,
          state: url.searchParams.get('state'),
          user: { login: 'octocat' },
          html_url: `${web}/pull/${n}`,
        })),
      };
    const file = /^\/contents\/(.+)$/.exec(rest);
    if (req.method === 'GET' && file)
      return {
        status: 200,
        body: {
          type: 'file',
          encoding: 'base64',
          path: decodeURIComponent(file[1]!),
          sha: '3d21ec53a331a6f037a91c368710b99387d012c1',
          size: 17,
          content: Buffer.from(`# Read me (${url.searchParams.get('ref') ?? 'main'})\n`).toString('base64'),
          html_url: `${web}/blob/main/${file[1]}`,
        },
      };
    return { status: 404, body: { message: 'Not Found' } };
  });
}

/** The form or JSON fields of a Slack Web API call. */
export function slackFields(req: Received): Json {
  if (String(req.headers['content-type']).includes('json')) return JSON.parse(req.body) as Json;
  return Object.fromEntries(new URLSearchParams(req.body));
}

/** Slack's Web API under `/api/`: chat.postMessage and conversations.list, for `token`. */
export function slackStandIn(token: string): Promise<ServiceStandIn> {
  let ts = 1_700_000_000;
  return service((req, url) => {
    if (req.headers.authorization !== `Bearer ${token}`)
      return { status: 200, body: { ok: false, error: 'invalid_auth' } };
    const fields = slackFields(req);
    if (url.pathname === '/api/chat.postMessage') {
      ts += 1;
      return {
        status: 200,
        body: {
          ok: true,
          channel: String(fields.channel).replace(/^#general$/, 'C0GENERAL'),
          ts: `${ts}.000100`,
          message: { text: fields.text, ...(fields.thread_ts ? { thread_ts: fields.thread_ts } : {}) },
        },
      };
    }
    if (url.pathname === '/api/auth.test')
      return { status: 200, body: { ok: true, team: 'Acme', user: 'tandem', team_id: 'T0ACME' } };
    if (url.pathname === '/api/conversations.list')
      return {
        status: 200,
        body: {
          ok: true,
          channels: [
            { id: 'C0GENERAL', name: 'general', is_channel: true },
            { id: 'C0RANDOM', name: 'random', is_channel: true },
          ],
          response_metadata: { next_cursor: '' },
        },
      };
    return { status: 200, body: { ok: false, error: 'unknown_method' } };
  });
}

export interface Mail {
  from: string;
  to: string[];
  /** The login the client signed in with. */
  user: string | undefined;
  raw: string;
}

export interface SmtpStandIn {
  host: string;
  port: number;
  mails: Mail[];
  /** Logins tried, right or wrong. */
  logins: string[];
  /** The reply to the next login attempt, instead of checking it: `535 …`. */
  refuseNextLogin(code: number, message: string): void;
  close(): Promise<void>;
}

/** An SMTP server on 127.0.0.1 that takes mail from `user` with `password` (AUTH PLAIN or LOGIN, no TLS). */
export async function smtpStandIn(user: string, password: string): Promise<SmtpStandIn> {
  const mails: Mail[] = [];
  const logins: string[] = [];
  let refusal: { code: number; message: string } | undefined;
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      logins.push(auth.username ?? '');
      const refuse = (code: number, message: string) =>
        callback(Object.assign(new Error(message), { responseCode: code }));
      if (refusal) {
        const { code, message } = refusal;
        refusal = undefined;
        return refuse(code, message);
      }
      if (auth.username !== user || auth.password !== password) return refuse(535, 'Authentication failed');
      callback(null, { user: auth.username });
    },
    onData(stream, session, callback) {
      let raw = '';
      stream.setEncoding('utf8');
      stream.on('data', (chunk: string) => (raw += chunk));
      stream.on('end', () => {
        const envelope = session.envelope;
        mails.push({
          from: envelope.mailFrom ? envelope.mailFrom.address : '',
          to: envelope.rcptTo.map((r) => r.address),
          user: typeof session.user === 'string' ? session.user : undefined,
          raw,
        });
        callback();
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    port,
    mails,
    logins,
    refuseNextLogin: (code, message) => (refusal = { code, message }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export interface Listener {
  port: number;
  /** Connections made to it. */
  connections: number;
  close(): Promise<void>;
}

/** A bare TCP listener on 127.0.0.1 that counts who connects: nothing should. */
export async function insideListener(): Promise<Listener> {
  const sockets = new Set<Socket>();
  const state = { connections: 0 };
  const server = createTcpServer((socket) => {
    state.connections += 1;
    sockets.add(socket);
    socket.end('an inside secret\r\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
