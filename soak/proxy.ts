/**
 * A small reverse proxy in front of the servers: each request and each WebSocket upgrade goes to
 * the next server in turn (no stickiness), skipping one that refuses the connection, with
 * X-Forwarded-For set as a real proxy sets it.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import { connect, type Socket } from 'node:net';

export interface Proxy {
  url: string;
  /** Requests answered 502 because no server took the connection. */
  failures(): number;
  close(): Promise<void>;
}

export async function startProxy(ports: () => number[]): Promise<Proxy> {
  let turn = 0;
  let failed = 0;
  const order = () => {
    const list = ports();
    turn = (turn + 1) % list.length;
    return [...list.slice(turn), ...list.slice(0, turn)];
  };
  const forwarded = (req: IncomingMessage) => {
    const peer = req.socket.remoteAddress ?? '127.0.0.1';
    const before = req.headers['x-forwarded-for'];
    return before ? `${String(before)}, ${peer}` : peer;
  };

  const server: Server = createServer((req, res) => {
    const tries = order();
    const attempt = (i: number) => {
      const port = tries[i];
      if (port === undefined) {
        failed++;
        res.writeHead(502, { 'content-type': 'application/json' });
        res.end('{"error":"bad_gateway","message":"No server took the connection."}');
        return;
      }
      const upstream = request(
        {
          host: '127.0.0.1',
          port,
          method: req.method,
          path: req.url,
          headers: { ...req.headers, 'x-forwarded-for': forwarded(req) },
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      let sent = false;
      upstream.on('socket', (s: Socket) => {
        if (!s.connecting) sent = true;
        else s.once('connect', () => (sent = true));
      });
      upstream.on('error', () => {
        // Only a refused connection is tried elsewhere: a request already sent may have acted.
        if (!sent && !res.headersSent) attempt(i + 1);
        else res.destroy();
      });
      req.pipe(upstream);
    };
    attempt(0);
  });

  server.on('upgrade', (req: IncomingMessage, client: Socket, head: Buffer) => {
    const tries = order();
    const attempt = (i: number) => {
      const port = tries[i];
      if (port === undefined) {
        failed++;
        client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
        return;
      }
      const upstream = connect(port, '127.0.0.1');
      let connected = false;
      upstream.once('connect', () => {
        connected = true;
        const headers = { ...req.headers, 'x-forwarded-for': forwarded(req) };
        const lines = Object.entries(headers).flatMap(([k, v]) =>
          Array.isArray(v) ? v.map((x) => `${k}: ${x}`) : v === undefined ? [] : [`${k}: ${v}`],
        );
        upstream.write(`${req.method} ${req.url} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      upstream.on('error', () => {
        if (!connected) attempt(i + 1);
        else client.destroy();
      });
      client.on('error', () => upstream.destroy());
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
    };
    attempt(0);
  });

  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    failures: () => failed,
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
