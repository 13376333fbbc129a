import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { isAdmin } from '../policies/automations.ts';
import { CONNECTOR_PLUGINS, pluginOfProvider, providerName } from '../../capabilities/catalogue.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { applySettings, missingSettings, settingsOf, shownSettings } from './settings.ts';
import type { Settings } from '../../capabilities/settings.ts';
import { connectionFor } from './connection.ts';
import { readSettings, settingsColumns, storedSettings, type ConnectorRow } from './store.ts';

/**
 * Connections to outside services and their settings. Admins keep the workspace's shared
 * connections; a personal connection belongs to its owner alone. Secrets go in and never come
 * out: views say "set" or "not set", and only `connectionFor` (the run engine's calls) and
 * `webhookSecret` (the hooks' signature checks) open them.
 */

export interface ConnectorView {
  connector_id: string;
  provider: string;
  name: string;
  namespace: string;
  personal: boolean;
  owner_id: string | null;
  connected: boolean;
  /** Every setting the provider takes: open ones with their value (null when unset), secrets as "set" / "not set". */
  settings: Record<string, string | null>;
  /** Settings a call needs that are not set yet. */
  missing: string[];
  updated_at?: string;
}

export interface ConnectorChange {
  connected?: unknown;
  /** Field → value; null or "" clears it. */
  settings?: unknown;
}

const PROVIDER = /^[a-z][a-z0-9_-]{0,39}$/;

function checkProvider(value: unknown): string {
  if (typeof value !== 'string' || !PROVIDER.test(value))
    throw invalid('provider must be a provider name such as github, slack, email, gmail or outlook');
  return value;
}

function checkChange(change: ConnectorChange): { connected?: boolean; settings: Record<string, unknown> } {
  if (change.connected !== undefined && typeof change.connected !== 'boolean')
    throw invalid('connected must be true or false');
  const settings = change.settings ?? {};
  if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
    throw invalid('settings must be an object of setting names to strings (null clears one)');
  return {
    ...(change.connected !== undefined ? { connected: change.connected } : {}),
    settings: settings as Record<string, unknown>,
  };
}

export function connectorsService(deps: Deps) {
  const { db, secrets: box } = deps;

  function view(row: ConnectorRow): ConnectorView {
    const { settings: stored, unreadable } = readSettings(box, row);
    const shown = shownSettings(row.provider, stored);
    // Secrets sealed with another key show as such, so they can be set again.
    if (unreadable)
      for (const f of settingsOf(row.provider).fields)
        if (f.secret && !stored[f.name]) shown[f.name] = 'unreadable';
    return {
      connector_id: row.id,
      provider: row.provider,
      name: providerName(row.provider),
      namespace: pluginOfProvider(CONNECTOR_PLUGINS, row.provider)?.namespace ?? row.provider,
      personal: row.personal === 1,
      owner_id: row.owner_id,
      connected: row.connected === 1,
      settings: shown,
      missing: missingSettings(row.provider, stored),
      ...(row.updated_at !== null ? { updated_at: new Date(row.updated_at).toISOString() } : {}),
    };
  }

  /**
   * A row's settings before a change. Secrets that no longer open (another key) are replaced only
   * when the change gives every secret again, so a wrong key never quietly drops them.
   */
  function currentSettings(row: ConnectorRow, changes: Record<string, unknown>): Settings {
    const { settings, unreadable } = readSettings(box, row);
    if (!unreadable) return settings;
    const secrets = settingsOf(row.provider)
      .fields.filter((f) => f.secret)
      .map((f) => f.name);
    if (secrets.every((name) => name in changes)) return settings;
    throw invalid(
      `the ${providerName(row.provider)} connection's secrets cannot be read: ${unreadable}; to replace them, give every one again (${secrets.join(', ')}; an empty value clears one)`,
    );
  }

  /** Creates or changes the connection of `ownerId` (null: the shared one) to a provider. */
  async function configure(
    workspaceId: string,
    providerArg: unknown,
    ownerId: string | null,
    changeArg: ConnectorChange,
  ): Promise<ConnectorView> {
    const provider = checkProvider(providerArg);
    const change = checkChange(changeArg);
    return db.transaction().execute(async (trx) => {
      let query = trx
        .selectFrom('connectors')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('provider', '=', provider)
        .where('personal', '=', ownerId === null ? 0 : 1);
      if (ownerId !== null) query = query.where('owner_id', '=', ownerId);
      const row = await query.orderBy('created_at').orderBy('id').executeTakeFirst();
      const id = row?.id ?? newId('con');
      const settings = applySettings(
        provider,
        row ? currentSettings(row, change.settings) : {},
        change.settings,
      );
      const columns = settingsColumns(box, id, provider, settings);
      const now = Date.now();
      if (row) {
        await trx
          .updateTable('connectors')
          .set({
            ...columns,
            connected: change.connected === false ? 0 : change.connected ? 1 : row.connected,
            updated_at: now,
          })
          .where('id', '=', id)
          .execute();
      } else {
        await trx
          .insertInto('connectors')
          .values({
            id,
            workspace_id: workspaceId,
            provider,
            connected: change.connected === false ? 0 : 1,
            personal: ownerId === null ? 0 : 1,
            owner_id: ownerId,
            created_at: now,
            updated_at: now,
            ...columns,
          })
          .execute();
      }
      return view(
        await trx.selectFrom('connectors').selectAll().where('id', '=', id).executeTakeFirstOrThrow(),
      );
    });
  }

  return {
    /** The fields each provider takes, for a settings form. */
    fields(provider: string) {
      return settingsOf(checkProvider(provider)).fields.map(({ name, secret, describe }) => ({
        name,
        secret,
        describe,
        required: settingsOf(provider).required.includes(name),
        ...(settingsOf(provider).defaults[name] ? { default: settingsOf(provider).defaults[name] } : {}),
      }));
    },

    /** The connections the person may configure: the shared ones for an admin, and their own personal ones. */
    async list(actor: Actor): Promise<ConnectorView[]> {
      const admin = await isAdmin(db, actor);
      const rows = await db
        .selectFrom('connectors')
        .selectAll()
        .where('workspace_id', '=', actor.workspaceId)
        .where((eb) => {
          const mine = eb.and([eb('personal', '=', 1), eb('owner_id', '=', actor.personId)]);
          return admin ? eb.or([eb('personal', '=', 0), mine]) : mine;
        })
        .orderBy('provider')
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      return rows.map(view);
    },

    /**
     * Sets a connection's settings (made when missing): `personal: true` is the person's own,
     * otherwise the workspace's shared one, which only admins change.
     */
    async set(actor: Actor, args: { provider?: unknown; personal?: unknown } & ConnectorChange) {
      if (args.personal !== undefined && typeof args.personal !== 'boolean')
        throw invalid('personal must be true or false');
      if (args.personal === true) return configure(actor.workspaceId, args.provider, actor.personId, args);
      if (!(await isAdmin(db, actor)))
        throw new DomainError('forbidden', 'Only workspace admins can change shared connectors');
      return configure(actor.workspaceId, args.provider, null, args);
    },

    /** A workspace's shared connection (`ownerId` null) or a person's own, as an operator sets it. */
    configure,

    /**
     * Where an operator's `tandem connector set` goes: the named workspace (or the only one), or
     * the personal connection of the person with `owner`'s e-mail there.
     */
    async target(workspace: string | undefined, owner: string | undefined) {
      let query = db
        .selectFrom('workspaces')
        .leftJoin('people', (j) =>
          j.onRef('people.workspace_id', '=', 'workspaces.id').on('people.email', '=', owner ?? ''),
        )
        .select(['workspaces.id', 'workspaces.name', 'people.id as person_id']);
      if (workspace !== undefined) query = query.where('workspaces.name', '=', workspace);
      let rows = await query.orderBy('workspaces.name').execute();
      if (owner !== undefined) rows = rows.filter((r) => r.person_id !== null);
      const where = workspace === undefined ? '' : ` in workspace "${workspace}"`;
      if (rows.length === 0)
        throw invalid(
          owner ? `no person with e-mail ${owner}${where}` : `no workspace named "${workspace ?? ''}"`,
        );
      if (rows.length > 1)
        throw invalid(
          `${owner ? `${owner} belongs to` : 'there are'} several workspaces (${rows.map((r) => r.name).join(', ')}); pass --workspace NAME`,
        );
      return { workspaceId: rows[0]!.id, ownerId: owner === undefined ? null : rows[0]!.person_id };
    },

    /** The secret a workspace's shared connection to a provider signs its events with. */
    async webhookSecret(workspaceId: string, provider: string): Promise<string | undefined> {
      const rows = await db
        .selectFrom('connectors')
        .selectAll()
        .where('workspace_id', '=', workspaceId)
        .where('provider', '=', provider)
        .where('connected', '=', 1)
        .where('personal', '=', 0)
        .orderBy('created_at')
        .orderBy('id')
        .execute();
      for (const row of rows) {
        const secret = storedSettings(box, row).secret;
        if (secret) return secret;
      }
      return undefined;
    },

    /**
     * The connection a run's call to `namespace` goes through: for a workspace automation the
     * shared one; for a personal one the person's own, else the shared one.
     */
    connectionFor: (actor: Actor, namespace: string, automationId?: string) =>
      connectionFor(deps, actor, namespace, automationId),

    /** Seals the webhook secrets of rows stored before secrets were sealed; returns how many. */
    async sealPlaintext(): Promise<number> {
      const rows = await db.selectFrom('connectors').selectAll().where('secret', 'is not', null).execute();
      for (const row of rows) {
        const columns = settingsColumns(box, row.id, row.provider, storedSettings(box, row));
        await db
          .updateTable('connectors')
          .set(columns)
          .where('id', '=', row.id)
          .where('secret', '=', row.secret)
          .execute();
      }
      return rows.length;
    },
  };
}

export type ConnectorsService = ReturnType<typeof connectorsService>;
