import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { activityService, notificationsService } from './domains/activity/activity.ts';
import { agentsService } from './domains/agents/status.ts';
import { accountsService } from './domains/auth/accounts.ts';
import { credentialsService } from './domains/auth/credentials.ts';
import { grantsService } from './domains/auth/grants.ts';
import { oauthRecords } from './domains/auth/oauth-records.ts';
import { sessionsService } from './domains/auth/sessions.ts';
import { tokensService } from './domains/auth/tokens.ts';
import { automationsService, type AutomationOptions } from './domains/automations/automations.ts';
import { draftsService } from './domains/automations/drafts.ts';
import { rerunsService } from './domains/automations/reruns.ts';
import { automationViews } from './domains/automations/views.ts';
import { commentsService } from './domains/comments/comments.ts';
import { connectorsService } from './domains/connectors/connectors.ts';
import { processSecretKey, secretBox } from './domains/connectors/secrets.ts';
import type { Deps } from './domains/deps.ts';
import { recordEvent } from './domains/automations/events.ts';
import { anchors } from './domains/documents/anchors.ts';
import { documentsService } from './domains/documents/documents.ts';
import type { StoreOptions } from './domains/documents/store.ts';
import { pagesService } from './domains/pages/pages.ts';
import { peopleService } from './domains/workspace/people.ts';
import { migrate, openStorage, type Storage, type StorageOptions } from './storage/db.ts';

/** Every domain service, built once over one storage; transports hold this and nothing else. */
export interface ServiceOptions {
  documents?: StoreOptions;
  automations?: AutomationOptions;
  /** The key connector secrets are sealed with (TANDEM_SECRET_KEY or TANDEM_DATA/secrets.key). */
  secretKey?: Buffer;
}

export function createServices(storage: Storage, options: ServiceOptions = {}) {
  // Told (soon after the writing transaction, which commits first) that events wait in the outbox.
  const listeners = new Set<() => void>();
  let told: NodeJS.Timeout | undefined;
  const tell = () => {
    told = undefined;
    for (const listener of listeners) listener();
  };
  const heard = () => {
    if (listeners.size > 0) told ??= setTimeout(tell, 5).unref();
  };
  const emit: Deps['emit'] = async (trx, event, origin) => {
    await recordEvent(trx, {
      provider: 'workspace',
      event: event.type,
      workspaceId: event.workspaceId,
      artifactId: event.artifactId,
      actorId: event.actorId,
      origin,
      data: { ...event.data, actor_id: event.actorId },
    });
    heard();
  };
  const secrets = secretBox(options.secretKey ?? processSecretKey());
  const deps: Deps = { db: storage.db, dialect: storage.dialect, emit, secrets };
  const documents = documentsService(deps, options.documents);
  const tokens = tokensService(deps);
  const activity = activityService(deps);
  const sessions = sessionsService(deps);
  const oauth = oauthRecords(deps);
  return {
    deps,
    storage,
    /** Listens for events recorded by this process (any engine delivers them from the outbox). */
    onEvent(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    automations: automationsService(deps, options.automations),
    drafts: draftsService(deps, options.automations),
    /** Retries and replays of finished runs (the engine hears of the runs they queue). */
    reruns: rerunsService(deps, { queued: heard }),
    agents: agentsService(deps),
    /** What the automation pages show beyond the tools: plan versions, runs in full, waiting approvals. */
    automationViews: automationViews(deps),
    pages: pagesService(deps),
    documents,
    comments: commentsService(deps, anchors(documents.store)),
    people: peopleService(deps),
    /** Connections to outside services and their settings (secrets sealed). */
    connectors: connectorsService(deps),
    tokens,
    sessions,
    /** The authorization server's stored records (its adapter's storage). */
    oauth,
    accounts: accountsService(deps),
    grants: grantsService(deps, oauth),
    credentials: credentialsService(deps, { tokens, sessions, records: oauth }),
    activity,
    /** Stores what is pending (people's edits) and closes the database. */
    async close() {
      if (told) clearTimeout(told);
      await activity.flush();
      await documents.close();
      await storage.close();
    },
    notifications: notificationsService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;

export async function openServices(options: StorageOptions & ServiceOptions): Promise<Services> {
  const storage = await openStorage(options);
  try {
    await migrate(storage);
  } catch (error) {
    await storage.close();
    throw error;
  }
  const services = createServices(storage, options);
  try {
    // Webhook secrets stored in the open before they were sealed are sealed now.
    await services.connectors.sealPlaintext();
  } catch (error) {
    await services.close();
    throw error;
  }
  return services;
}

/**
 * A secret kept under the data directory, made on first use (signing page-view links, sealing
 * connector secrets). Processes starting together on a new directory agree on one: each writes its
 * own to a file of its own and links it into place, which only the first can do; the others read
 * the winner's, never a half-written file.
 */
export function dataSecret(dataDir: string, name: string): Buffer {
  const path = join(dataDir, `${name}.key`);
  const read = () => Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  try {
    return read();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  mkdirSync(dataDir, { recursive: true });
  const mine = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(mine, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(mine, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    unlinkSync(mine);
  }
  return read();
}
