import { createServer } from 'node:net';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/server.ts';
import type { Services } from '../../src/services.ts';

function portIsFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

/** A port whose next port is free too: the app listens on PORT and pages on PORT+1. */
export async function freePortPair(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const probe = createServer();
      probe.once('error', reject);
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    if (port < 65000 && (await portIsFree(port + 1))) return port;
  }
}

/** `tandem serve` on free ports over `services`, its data (keys) under `dataDir`. */
export async function startTestServer(services: Services, dataDir: string): Promise<RunningServer> {
  for (let attempt = 0; ; attempt++) {
    const port = await freePortPair();
    try {
      return await startServer(loadConfig({ TANDEM_DATA: dataDir, PORT: String(port) }), services);
    } catch (error) {
      if ((error as { code?: string }).code !== 'EADDRINUSE' || attempt > 5) throw error;
    }
  }
}
