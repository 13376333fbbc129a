import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { activityService, notificationsService } from './domains/activity/activity.ts';
import { agentsService } from './domains/agents/status.ts';
import { describeItService } from './domains/agents/describe-it.ts';
import { modelSettingsService } from './domains/agents/model-settings.ts';
import type { ModelConfig } from './model/model.ts';
import { accountsService } from './domains/auth/accounts.ts';
import { credentialsService } from './domains/auth/credentials.ts';
import { grantsService } from './domains/auth/grants.ts';
import { oauthRecords } from './domains/auth/oauth-records.ts';
import { sessionsService } from './domains/auth/sessions.ts';
import { tokensService } from './domains/auth/tokens.ts';
import { automationsService, type AutomationOptions } from './domains/automations/automations.ts';
import { draftsService } from './domains/automations/drafts.ts';
import { draftActions } from './domains/automations/draft-publish.ts';
import { rerunsService } from './domains/automations/reruns.ts';
import { automationViews } from './domains/automations/views.ts';
import { commentsService } from './domains/comments/comments.ts';
import { threadFeed } from './domains/comments/feed.ts';
import { connectorsService } from './domains/connectors/connectors.ts';
import { connectorOverview } from './domains/connectors/overview.ts';
import { testConnection, type TestNet } from './domains/connectors/test-connection.ts';
import { directoryService } from './domains/workspace/directory.ts';
import type { Actor } from './domains/workspace/actor.ts';
import { processSecretKey, secretBox } from './domains/connectors/secrets.ts';
import type { Deps } from './domains/deps.ts';
import { recordEvent } from './domains/automations/events.ts';
import { credentialEnds } from './domains/auth/ended.ts';
import { anchors } from './domains/documents/anchors.ts';
import { documentsService } from './domains/documents/documents.ts';
import type { StoreOptions } from './domains/documents/store.ts';
import { pagesService } from './domains/pages/pages.ts';
import { peopleService } from './domains/workspace/people.ts';
import { sharingService } from './domains/workspace/sharing.ts';
import { migrate, openStorage, type Storage, type StorageOptions } from './storage/db.ts';

/** Every domain service, built once over one storage; transports hold this and nothing else. */
export interface ServiceOptions {
  documents?: StoreOptions;
  automations?: AutomationOptions;
  /** The key connector secrets are sealed with (TANDEM_SECRET_KEY or TANDEM_DATA/secrets.key). */
  secretKey?: Buffer;
  /**
   * The server's model (TANDEM_MODEL_*), used where a workspace has not connected its own in
   * Settings; `builder.model` is the same, as older callers give it.
   */
  model?: ModelConfig | undefined;
  /** How long @Builder's `Describe it` may take per model call (and the model, as `model`). */
  builder?: { model?: ModelConfig | undefined; timeoutMs?: number };
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
  const deps: Deps = { db: storage.db, dialect: storage.dialect, emit, secrets, threads: threadFeed() };
  const documents = documentsService(deps, options.documents);
  const ended = credentialEnds();
  const tokens = tokensService(deps, ended);
  const sessions = sessionsService(deps, ended);
  const oauth = oauthRecords(deps, ended);
  const automations = automationsService(deps, options.automations);
  const drafts = draftsService(deps, options.automations);
  const activity = activityService(deps);
  const closers = new Set<() => Promise<void>>();
  const connectors = connectorsService(deps);
  const models = modelSettingsService(deps, options.model ?? options.builder?.model);
  return {
    deps,
    storage,
    /** Something to close with the services (a connection made for them). */
    closeWith(close: () => Promise<void>) {
      closers.add(close);
    },
    /** Listens for events recorded by this process (any engine delivers them from the outbox). */
    onEvent(listener: () => void) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    automations,
    drafts,
    /** Drafting from a template, publishing and dry-running drafts from the app. */
    draftActions: draftActions(automations, drafts),
    /** `Describe it`: @Builder drafts from a person's sentence in the app. */
    describeIt: describeItService(
      { automations, activity, db: deps.db, modelFor: (workspaceId) => models.configFor(workspaceId) },
      options.builder,
    ),
    /** The model the assistant, @Builder and agent steps answer through: the workspace's own, else the server's. */
    models,
    /** Retries and replays of finished runs (the engine hears of the runs they queue). */
    reruns: rerunsService(deps, { queued: heard }),
    agents: agentsService(deps),
    /** What the automation pages show beyond the tools: plan versions, runs in full, waiting approvals. */
    automationViews: automationViews(deps, options.automations),
    pages: pagesService(deps),
    documents,
    comments: commentsService(deps, anchors(documents.store)),
    people: peopleService(deps),
    /** Who can open an artifact; changes reach the live socket at once. */
    sharing: sharingService(deps),
    /** Connections to outside services and their settings (secrets sealed). */
    connectors,
    /** The shared connectors as Settings shows them to admins, and `Test connection`. */
    connectorSettings: {
      ...connectorOverview(deps, connectors),
      test: (actor: Actor, args: { provider?: unknown; personal?: unknown }, net: TestNet) =>
        testConnection(deps, actor, args, net),
    },
    /** The workspace's people and agents, as Settings shows them to admins. */
    directory: directoryService(deps),
    tokens,
    sessions,
    /** The authorization server's stored records (its adapter's storage). */
    oauth,
    accounts: accountsService(deps),
    grants: grantsService(deps, oauth),
    credentials: credentialsService(deps, { tokens, sessions, records: oauth }),
    /** Told when a credential ends here (or, over Redis, on another instance). */
    credentialEnds: ended,
    activity,
    /** Stores what is pending (people's edits) and closes the database. */
    async close() {
      if (told) clearTimeout(told);
      await Promise.allSettled([...closers].map((c) => c()));
      await activity.flush();
      try {
        await documents.close();
      } finally {
        await storage.close();
      }
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
