import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';

const MB = 1_000_000;

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A local HTTP server on 127.0.0.1 standing in for an outside service; it records every request. */
export interface StandIn {
  /** `127.0.0.1:PORT`, as the allow list names it. */
  host: string;
  port: number;
  url(path?: string): string;
  received: Received[];
  close(): Promise<void>;
}

export type Handler = (req: Received, res: ServerResponse) => void;

export async function standIn(handle: Handler): Promise<StandIn> {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      const request = { method: req.method ?? '', path: req.url ?? '', headers: req.headers, body };
      received.push(request);
      handle(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    host: `127.0.0.1:${port}`,
    port,
    url: (path = '/') => `http://127.0.0.1:${port}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** What an endless body did: how much was handed to the socket, and whether the client hung up. */
export interface Flood {
  sent: number;
  closedEarly: Promise<boolean>;
}

/** Answers 200 and writes `x`s for as long as the client reads (at most 2 GB). */
export function flood(res: ServerResponse, state: Flood): void {
  res.writeHead(200, { 'content-type': 'text/plain' });
  const chunk = Buffer.alloc(64 * 1024, 'x');
  let done = false;
  state.closedEarly = new Promise((resolve) => res.on('close', () => resolve(!done)));
  const pump = () => {
    while (!res.destroyed && state.sent < 2e9) {
      state.sent += chunk.byteLength;
      if (!res.write(chunk)) return;
    }
    done = !res.destroyed;
    res.end();
  };
  res.on('drain', pump);
  pump();
}

/** The routes of a stand-in outside service, for the http capabilities' tests. */
export function serviceRoutes(floods: Flood[]) {
  return (req: Received, res: ServerResponse) => {
    const url = new URL(req.path, 'http://stand-in');
    const hops = /^\/hops\/(\d+)$/.exec(url.pathname);
    if (hops) {
      const left = Number(hops[1]);
      if (left === 0) res.end('arrived');
      else res.writeHead(302, { location: `/hops/${left - 1}` }).end();
    } else if (url.pathname === '/redirect') {
      res.writeHead(Number(url.searchParams.get('status') ?? 302), { location: url.searchParams.get('to')! });
      res.end();
    } else if (url.pathname === '/echo') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ method: req.method, headers: req.headers, body: req.body }));
    } else if (url.pathname === '/flood') {
      const state = { sent: 0 } as Flood;
      floods.push(state);
      flood(res, state);
    } else if (url.pathname === '/big') {
      res.writeHead(200, { 'content-length': 1.5 * MB }).end(Buffer.alloc(1.5 * MB, 'y'));
    } else if (url.pathname === '/big-chunked') {
      res.writeHead(200);
      for (let i = 0; i < 15; i++) res.write(Buffer.alloc(MB / 10, 'y'));
      res.end();
    } else if (url.pathname === '/bomb') {
      res.writeHead(200, { 'content-encoding': 'gzip' }).end(gzipSync(Buffer.alloc(5 * MB)));
    } else if (url.pathname === '/gzip') {
      res.writeHead(200, { 'content-encoding': 'gzip', 'content-type': 'application/json' });
      res.end(gzipSync('{"zipped":true}'));
    } else if (url.pathname === '/stall-body') {
      res.writeHead(200).write('a first part');
    } else if (url.pathname !== '/stall-headers') {
      res
        .writeHead(200, { 'content-type': 'application/json', 'x-stand-in': 'yes' })
        .end('{"hello":"world"}');
    }
  };
}
