import { setLogLevel } from './observability/log.ts';
import { serve, type Http2Bindings, type HttpBindings, type ServerType } from '@hono/node-server';
import type { Config } from './config.ts';
import { newPassword } from './domains/auth/passwords.ts';
import { DEMO_USER, DEMO_WORKSPACE, demoWithPassword } from './domains/import/demo.ts';
import { importFixture } from './domains/import/import.ts';
import { collabSocket, type CollabSocket } from './collab/socket.ts';
import { liveDocumentHooks } from './collab/live-document.ts';
import { connectInstances } from './collab/instances.ts';
import { relayThreads } from './collab/thread-relay.ts';
import { createApp } from './http/app.ts';
import { incomingAddress } from './http/client-address.ts';
import { pageLinkSigner } from './http/page-links.ts';
import { pagesOriginApp } from './http/viewer.ts';
import { createEngine, type Engine } from './engine/engine.ts';
import { dataSecret, openServices, type Services } from './services.ts';

export interface RunningServer {
  services: Services;
  url: string;
  pagesUrl: string;
  /** The live-editing socket (`/collab`). */
  collab: CollabSocket;
  close(): Promise<void>;
}

/**
 * The services as configured. Documents live in the socket's document type (in a worker too,
 * so people see its agents write), and with `REDIS_URL` every instance shares their changes.
 */
export async function openConfiguredServices(config: Config): Promise<Services> {
  setLogLevel(config.logLevel);
  const services = await openServices({
    databaseUrl: config.databaseUrl,
    sqlitePath: config.sqlitePath,
    // Back it up with the database: without it no connector token or password can be read.
    secretKey: config.secretKey ?? dataSecret(config.dataDir, 'secrets'),
    documents: { bounds: config.liveBounds },
    automations: {
      publicUrl: config.publicUrl,
      modelConfigured: Boolean(config.modelUrl && config.model),
    },
    model:
      config.modelUrl && config.model
        ? { url: config.modelUrl, key: config.modelKey, model: config.model }
        : undefined,
    builder: { timeoutMs: config.agentTimeoutMs },
  });
  try {
    await services.documents.store.extend(liveDocumentHooks);
    if (config.redisUrl) {
      await connectInstances(services, { redisUrl: config.redisUrl });
      const relay = await relayThreads(services.deps.threads, { redisUrl: config.redisUrl });
      services.closeWith(relay.close);
    }
  } catch (error) {
    await services.close();
    throw error;
  }
  return services;
}

/** The run engine and scheduler as configured. */
export function configuredEngine(config: Config, services: Services): Engine {
  return createEngine(services, {
    httpAllow: config.httpAllow,
    leaseMs: config.runLeaseMs,
    limits: { crashes: config.runCrashes },
    model:
      config.modelUrl && config.model
        ? { url: config.modelUrl, key: config.modelKey, model: config.model }
        : undefined,
    agents: { perWorkspace: config.agentConcurrency, timeoutMs: config.agentTimeoutMs },
    versionsKeepDays: config.versionsKeepDays,
  });
}

/**
 * Creates the demo workspace when the database has none, its people signing in with one new
 * password; returns that password (shown once, never stored in the clear), or null when the
 * database had a workspace already.
 */
export async function ensureDemo(services: Services): Promise<string | null> {
  if ((await services.people.workspaceCount()) > 0) return null;
  const password = newPassword();
  await importFixture(services.deps, demoWithPassword(password));
  return password;
}

function listen(
  fetch: (req: Request, env: HttpBindings | Http2Bindings) => Response | Promise<Response>,
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
  const { fetch: answer, close: closeApp } = createApp(services, config, signer);
  const pages = pagesOriginApp(services, config, signer);
  const collab = await collabSocket(services, {
    oauthAudience: `${new URL(config.publicUrl).href.replace(/\/$/, '')}/mcp`,
    addressOf: (req) => incomingAddress(req, config.trustProxy),
    maxDocumentsPerPerson: config.liveDocsPerPerson,
  });
  const appServer = await listen(answer, config.port, config.host).catch(async (error: unknown) => {
    await collab.close();
    throw error;
  });
  appServer.on('upgrade', collab.handleUpgrade);
  const pagesServer = await listen(pages.fetch, config.pagesPort, config.host).catch(
    async (error: unknown) => {
      appServer.close();
      await collab.close();
      throw error;
    },
  );
  return {
    services,
    url: config.publicUrl,
    pagesUrl: config.pagesOrigin,
    collab,
    async close() {
      // People's connections first; their edits are stored when the services close.
      await collab.close();
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
