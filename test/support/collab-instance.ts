/**
 * One server instance in a process of its own, as `tandem serve` runs behind a load balancer:
 * the database, Redis and document options come as JSON in TANDEM_TEST_INSTANCE; it prints
 * `{"url": …}` once it listens, and stops (storing what is pending) on SIGTERM.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connectInstances } from '../../src/collab/instances.ts';
import { liveDocumentHooks } from '../../src/collab/live-document.ts';
import type { StoreOptions } from '../../src/domains/documents/store.ts';
import { openServices } from '../../src/services.ts';
import { startOnFreePorts } from './raw-http.ts';

export interface InstanceSpec {
  databaseUrl?: string;
  pgSchema?: string;
  sqlitePath?: string;
  redisUrl: string;
  prefix: string;
  documents?: StoreOptions;
}

const spec = JSON.parse(process.env.TANDEM_TEST_INSTANCE ?? '{}') as InstanceSpec;
const services = await openServices({
  databaseUrl: spec.databaseUrl,
  pgSchema: spec.pgSchema,
  sqlitePath: spec.sqlitePath,
  documents: spec.documents,
});
await services.documents.store.extend(liveDocumentHooks);
await connectInstances(services, { redisUrl: spec.redisUrl, prefix: spec.prefix });
const server = await startOnFreePorts(services, mkdtempSync(join(tmpdir(), 'tandem-instance-')));
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
process.once('SIGTERM', () => {
  void (async () => {
    await server.close();
    await services.close();
    process.exit(0);
  })();
});
