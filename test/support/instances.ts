import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as Y from 'yjs';
import { SCOPES, type Actor, type Scope } from '../../src/domains/workspace/actor.ts';
import { importFixture, type ImportResult } from '../../src/domains/import/import.ts';
import { openServices, type ServiceOptions, type Services } from '../../src/services.ts';
import { dropPgSchema } from '../../src/storage/db.ts';
import { PG_URL, type TestDatabase } from './databases.ts';
import { testFixture } from './fixture.ts';

/**
 * One database (a SQLite file, or a PostgreSQL schema of its own) that several server instances
 * open, each with its own options, as several `tandem serve` processes behind a load balancer do.
 * The first instance loads the test fixture.
 */
export async function instancesOn(db: TestDatabase) {
  const dir = db.name === 'sqlite' ? mkdtempSync(join(tmpdir(), 'tandem-instances-')) : undefined;
  const schema = `t_${randomBytes(6).toString('hex')}`;
  const opened: Services[] = [];
  let ids: ImportResult['workspaces'] | undefined;

  /** Where another process finds this database (the instance script takes these). */
  const location =
    dir === undefined
      ? { databaseUrl: PG_URL, pgSchema: schema }
      : { sqlitePath: join(dir, 'tandem.sqlite') };

  async function open(options: ServiceOptions = {}): Promise<Services> {
    const services = await openServices({ ...options, ...location, poolSize: 10 });
    opened.push(services);
    if (!ids) ids = (await importFixture(services.deps, testFixture)).workspaces;
    return services;
  }

  function actor(email: string, scopes: readonly Scope[] = SCOPES): Actor {
    for (const ws of Object.values(ids ?? {})) {
      const personId = ws.users[email];
      if (personId) return { personId, workspaceId: ws.id, scopes: new Set(scopes) };
    }
    throw new Error(`no test person ${email}`);
  }

  return {
    open,
    actor,
    location,
    ids: () => ids!,
    /** Closes what is still open (an instance a test closed itself is skipped) and drops the data. */
    async close() {
      for (const s of opened.reverse()) await s.close().catch(() => undefined);
      if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
      else await dropPgSchema(PG_URL, schema);
    },
  };
}

/**
 * A person's change to a document as an editor holding a replica of one instance's live copy
 * makes it, applied through that instance's live update path.
 */
export async function editOn(
  services: Services,
  actor: Actor,
  id: string,
  change: (doc: Y.Doc) => void,
): Promise<void> {
  const live = await services.documents.store.open(id);
  const replica = new Y.Doc();
  Y.applyUpdate(replica, Y.encodeStateAsUpdate(live.doc));
  change(replica);
  const update = Y.encodeStateAsUpdate(replica, Y.encodeStateVector(live.doc));
  replica.destroy();
  await services.documents.applyPersonUpdate(actor, id, update);
}

/** Resolves once `check` holds, polling every few milliseconds; fails with `what` after `ms`. */
export async function until(check: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
