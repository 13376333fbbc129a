import { DomainError } from '../../errors.ts';
import { PROVIDER_SETTINGS } from '../../capabilities/catalogue.ts';
import type { Deps } from '../deps.ts';
import { isAdmin } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';
import type { ConnectorsService, ConnectorView } from './connectors.ts';
import { settingsOf } from './settings.ts';

/** A provider as Settings shows it to an admin: its fields and the shared connection's state. */
export interface ConnectorSettingsView {
  provider: string;
  name: string;
  fields: ReturnType<ConnectorsService['fields']>;
  connected: boolean;
  settings: Record<string, string | null>;
  missing: string[];
  testable: boolean;
}

function shape(connectors: ConnectorsService, provider: string, view?: ConnectorView): ConnectorSettingsView {
  const spec = settingsOf(provider);
  const fields = connectors.fields(provider);
  return {
    provider,
    name: spec.name,
    fields,
    connected: view?.connected ?? false,
    settings:
      view?.settings ??
      Object.fromEntries(fields.map((f) => [f.name, f.secret ? 'not set' : null] as [string, string | null])),
    missing: view?.missing ?? spec.required,
    testable: spec.check !== undefined,
  };
}

/**
 * The workspace's shared connectors for Settings: every provider Tandem ships, and any other the
 * workspace has, each with its fields. Admins only; secrets are never shown, only `set`.
 */
export function connectorOverview(deps: Deps, connectors: ConnectorsService) {
  async function requireAdmin(actor: Actor) {
    if (!(await isAdmin(deps.db, actor)))
      throw new DomainError('forbidden', 'Only workspace admins can change shared connectors');
  }

  async function list(actor: Actor): Promise<ConnectorSettingsView[]> {
    await requireAdmin(actor);
    const shared = (await connectors.list(actor)).filter((c) => !c.personal);
    const providers = [
      ...new Set([...PROVIDER_SETTINGS.map((p) => p.provider), ...shared.map((c) => c.provider)]),
    ];
    return providers.map((p) =>
      shape(
        connectors,
        p,
        shared.find((c) => c.provider === p),
      ),
    );
  }

  /** Saves settings and connects it; a secret sent empty or left out keeps its value unless cleared with null. */
  async function save(actor: Actor, provider: string, settings: unknown): Promise<ConnectorSettingsView> {
    await requireAdmin(actor);
    if (typeof settings !== 'object' || settings === null || Array.isArray(settings))
      throw new DomainError('invalid_argument', 'settings must be an object of setting names to strings');
    // A write-only secret left blank in the form means "keep it".
    const changes = Object.fromEntries(
      Object.entries(settings as Record<string, unknown>).filter(([name, value]) => {
        const field = settingsOf(provider).fields.find((f) => f.name === name);
        return !(field?.secret && value === '');
      }),
    );
    const view = await connectors.set(actor, { provider, settings: changes, connected: true });
    return shape(connectors, provider, view);
  }

  async function disconnect(actor: Actor, provider: string): Promise<ConnectorSettingsView> {
    await requireAdmin(actor);
    const view = await connectors.set(actor, { provider, connected: false });
    return shape(connectors, provider, view);
  }

  return { list, save, disconnect };
}
