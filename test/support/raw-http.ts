import { request, type IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:net';
import type { Services } from '../../src/services.ts';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The app and pages origins on free ports, retried if another process takes a port first. */
export async function startOnFreePorts(
  services: Services,
  dataDir: string,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  for (let attempt = 0; ; attempt++) {
    try {
      const port = await freePort();
      let pagesPort = await freePort();
      // The system may hand out the port just freed again: the two must differ.
      while (pagesPort === port) pagesPort = await freePort();
      return await startServer(
        loadConfig({
          TANDEM_DATA: dataDir,
          PORT: String(port),
          PAGES_PORT: String(pagesPort),
          LOG_LEVEL: 'error',
          ...env,
        }),
        services,
      );
    } catch (error) {
      if (attempt >= 5 || (error as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw error;
    }
  }
}

export interface RawResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** Body bytes written before the answer arrived (or all of them). */
  sent: number;
  ms: number;
  /** The most resident memory of this process seen while the request ran. */
  peakRss: number;
}

export interface RawRequest {
  method?: string;
  /** Sent as given, Host included: fetch() does not let a test choose Origin or Host freely. */
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Send `body` chunked, in two writes, with no Content-Length. */
  chunked?: boolean;
  /** A streamed body of this many bytes instead of `body`, written in 64 KiB chunks. */
  stream?: { bytes: number; chunked: boolean };
}

const CHUNK = Buffer.alloc(64 * 1024, 0x61);

/**
 * One HTTP/1.1 request with full control over its headers and body. A streamed body stops as
 * soon as the answer arrives, the way a client would once the server has refused it.
 */
export function rawRequest(url: string | URL, options: RawRequest = {}): Promise<RawResponse> {
  const target = new URL(url);
  const started = performance.now();
  let peakRss = process.memoryUsage.rss();
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, process.memoryUsage.rss());
  }, 5);
  return new Promise<RawResponse>((resolve, reject) => {
    const headers: Record<string, string> = { ...options.headers };
    const stream = options.stream;
    if (stream && !stream.chunked) headers['content-length'] = String(stream.bytes);
    if (options.body !== undefined && !options.chunked)
      headers['content-length'] = String(Buffer.byteLength(options.body));
    let sent = 0;
    let answered = false;
    const req = request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'POST',
        headers,
        // A connection of its own: a kept-alive one the server is closing would end in "socket hang up".
        agent: false,
        setHost: !Object.keys(headers).some((k) => k.toLowerCase() === 'host'),
      },
      (res) => {
        answered = true;
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => {
          clearInterval(sampler);
          peakRss = Math.max(peakRss, process.memoryUsage.rss());
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            sent,
            ms: performance.now() - started,
            peakRss,
          });
          req.destroy();
        });
      },
    );
    req.on('error', (error) => {
      if (answered) return;
      clearInterval(sampler);
      reject(error);
    });
    if (!stream) {
      if (options.body === undefined) req.end();
      else if (options.chunked) {
        const bytes = Buffer.from(options.body);
        sent = bytes.length;
        req.write(bytes.subarray(0, bytes.length >> 1));
        req.end(bytes.subarray(bytes.length >> 1));
      } else {
        sent = Buffer.byteLength(options.body);
        req.end(options.body);
      }
      return;
    }
    const pump = () => {
      while (!answered && !req.destroyed && sent < stream.bytes) {
        const piece = stream.bytes - sent >= CHUNK.length ? CHUNK : CHUNK.subarray(0, stream.bytes - sent);
        sent += piece.length;
        if (!req.write(piece)) {
          req.once('drain', pump);
          return;
        }
      }
      if (!answered && !req.destroyed && sent >= stream.bytes) req.end();
    };
    pump();
  });
}
