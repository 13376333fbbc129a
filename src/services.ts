import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { activityService, notificationsService } from './domains/activity/activity.ts';
import { tokensService } from './domains/auth/tokens.ts';
import { automationsService, type AutomationOptions } from './domains/automations/automations.ts';
import { commentsService } from './domains/comments/comments.ts';
import type { Deps, DomainEvent, EventListener } from './domains/deps.ts';
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
}

export function createServices(storage: Storage, options: ServiceOptions = {}) {
  const listeners = new Set<EventListener>();
  const emit = (event: DomainEvent) => {
    for (const listener of listeners) {
      try {
        listener(event);
      } catch (error) {
        console.error('event listener failed', error);
      }
    }
  };
  const deps: Deps = { db: storage.db, dialect: storage.dialect, emit };
  const documents = documentsService(deps, options.documents);
  return {
    deps,
    storage,
    onEvent(listener: EventListener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    automations: automationsService(deps, options.automations),
    pages: pagesService(deps),
    documents,
    comments: commentsService(deps, anchors(documents.store)),
    people: peopleService(deps),
    tokens: tokensService(deps),
    activity: activityService(deps),
    /** Stores what is pending (people's edits) and closes the database. */
    async close() {
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
  return createServices(storage, options);
}

/** A secret kept under the data directory, made on first use (signing page-view links). */
export function dataSecret(dataDir: string, name: string): Buffer {
  const path = join(dataDir, `${name}.key`);
  try {
    return Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32);
    writeFileSync(path, secret.toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
    return secret;
  }
}
