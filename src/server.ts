import { serve, type ServerType } from '@hono/node-server';
import type { Config } from './config.ts';
import { DEMO_USER, DEMO_WORKSPACE, demoFixture } from './domains/workspace/demo.ts';
import { importFixture } from './domains/workspace/import.ts';
import { createApp } from './http/app.ts';
import { pageLinkSigner } from './http/page-links.ts';
import { pagesOriginApp } from './http/viewer.ts';
import { createEngine, type Engine } from './engine/engine.ts';
import { dataSecret, openServices, type Services } from './services.ts';

export interface RunningServer {
  services: Services;
  url: string;
  pagesUrl: string;
  close(): Promise<void>;
}

export async function openConfiguredServices(config: Config): Promise<Services> {
  return openServices({
    databaseUrl: config.databaseUrl,
    sqlitePath: config.sqlitePath,
    automations: {
      publicUrl: config.publicUrl,
      modelConfigured: Boolean(config.modelUrl && config.model),
    },
  });
}

/** The run engine and scheduler as configured. */
export function configuredEngine(config: Config, services: Services): Engine {
  return createEngine(services, {
    httpAllow: config.httpAllow,
    leaseMs: config.runLeaseMs,
    model:
      config.modelUrl && config.model
        ? { url: config.modelUrl, key: config.modelKey, model: config.model }
        : undefined,
  });
}

/** Creates the demo workspace when the database has none; says whether it did. */
export async function ensureDemo(services: Services): Promise<boolean> {
  if ((await services.people.workspaceCount()) > 0) return false;
  await importFixture(services.deps, demoFixture);
  return true;
}

function listen(
  fetch: (req: Request) => Response | Promise<Response>,
  port: number,
  host: string,
): Promise<ServerType> {
  return new Promise((resolve, reject) => {
    const server = serve({ fetch, port, hostname: host }, () => resolve(server));
    server.once('error', reject);
  });
}

/** The app origin and the pages origin, both on this process. */
export async function startServer(config: Config, services: Services): Promise<RunningServer> {
  const signer = pageLinkSigner(dataSecret(config.dataDir, 'page-links'));
  const { app, close: closeApp } = createApp(services, config, signer);
  const pages = pagesOriginApp(services, config, signer);
  const appServer = await listen(app.fetch, config.port, config.host);
  const pagesServer = await listen(pages.fetch, config.pagesPort, config.host).catch(
    async (error: unknown) => {
      appServer.close();
      throw error;
    },
  );
  return {
    services,
    url: config.publicUrl,
    pagesUrl: config.pagesOrigin,
    async close() {
      await closeApp();
      await Promise.all(
        [appServer, pagesServer].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              if ('closeAllConnections' in s) s.closeAllConnections();
            }),
        ),
      );
    },
  };
}

export { DEMO_USER, DEMO_WORKSPACE };
