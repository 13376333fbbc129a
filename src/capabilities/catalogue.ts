import { WORKSPACE_EVENTS } from '../flowplan/triggers.ts';
import type { Call, Capability, ConnectorPlugin, Impl, Transport } from './capability.ts';
import { comments } from './comments.ts';
import { conversations } from './conversations.ts';
import { documents } from './documents.ts';
import { email } from './email.ts';
import { github } from './github.ts';
import { http } from './http.ts';
import { pages } from './pages.ts';
import type { ProviderSettings } from './settings.ts';
import { slack } from './slack.ts';

/**
 * Every capability Tandem ships, by namespace, and what one person may use of them. Built-in
 * namespaces need no outside service; the others come from connector plugins and can be used only
 * where the workspace connected them. Each namespace is one file of this folder.
 */

export const BUILTIN_PLUGINS: ConnectorPlugin[] = [documents, pages, comments, conversations, http];

export const CONNECTOR_PLUGINS: ConnectorPlugin[] = [github, slack, email];

/** Each shipped provider's settings, from the connector namespaces that declare them. */
export const PROVIDER_SETTINGS: readonly ProviderSettings[] = CONNECTOR_PLUGINS.flatMap(
  (p) => p.settings ?? [],
);

/** The transports Tandem ships, by namespace: every capability of the shipped connector plugins. */
export const TRANSPORTS: Readonly<Record<string, Transport>> = Object.fromEntries(
  CONNECTOR_PLUGINS.map((p) => [
    p.namespace,
    Object.fromEntries(p.capabilities.flatMap((c) => (c.call ? [[c.key.split('.')[1], c.call]] : []))),
  ]),
);

/** The call behind a capability key (`github.create_issue`), if a transport ships it. */
export function transportCall(key: string): Call | undefined {
  const [namespace = '', name = ''] = key.split('.');
  const transport = Object.hasOwn(TRANSPORTS, namespace) ? TRANSPORTS[namespace] : undefined;
  return transport && Object.hasOwn(transport, name) ? transport[name] : undefined;
}

const byKey = (plugins: ConnectorPlugin[]) =>
  new Map(plugins.flatMap((p) => p.capabilities).map((cap) => [cap.key, cap]));
const BUILTIN = byKey(BUILTIN_PLUGINS);
const CONNECTOR = byKey(CONNECTOR_PLUGINS);

/**
 * What runs a capability: a built-in, a call given to the engine (tests, outside plugins), or a
 * shipped connector's transport.
 */
export function implementationOf(key: string, given?: Record<string, Impl>): Impl | undefined {
  const builtin = BUILTIN.get(key)?.run;
  if (builtin) return builtin;
  if (given && Object.hasOwn(given, key)) return given[key];
  return CONNECTOR.get(key)?.run;
}

/** Calls to outside services that cannot recognise a repeat: sent at most once. */
export function atMostOnce(key: string): boolean {
  return BUILTIN.get(key)?.atMostOnce ?? true;
}

/** A provider as people read it: `GitHub`, `Gmail`, `This workspace`. */
export function providerName(provider: string): string {
  if (provider === 'workspace') return 'This workspace';
  const shipped = PROVIDER_SETTINGS.find((p) => p.provider === provider)?.name;
  return shipped ?? provider.charAt(0).toUpperCase() + provider.slice(1);
}

export interface ConnectorEntry {
  provider: string;
  name: string;
  personal: boolean;
  namespace: string;
  /** Whether the caller can use it: another person's personal connection is not theirs. */
  connected: boolean;
}

export interface NamespaceState {
  plugin: ConnectorPlugin;
  /** Usable by the person the catalogue was built for. */
  connected: boolean;
  /** Usable only through that person's own personal connection. */
  personalOnly: boolean;
  /** Providers whose connection makes it usable. */
  providers: string[];
}

/** What one person of one workspace may use: namespaces, capabilities, connectors. */
export class Catalogue {
  readonly namespaces: Map<string, NamespaceState>;
  readonly connectors: ConnectorEntry[];
  private readonly byKey = new Map<string, Capability>();

  constructor(namespaces: Map<string, NamespaceState>, connectors: ConnectorEntry[]) {
    this.namespaces = namespaces;
    this.connectors = connectors;
    for (const state of namespaces.values()) {
      for (const cap of state.plugin.capabilities) this.byKey.set(cap.key, cap);
    }
  }

  capability(key: string): Capability | undefined {
    return this.byKey.get(key);
  }

  namespaceOf(key: string): NamespaceState | undefined {
    return this.namespaces.get(key.split('.')[0] ?? '');
  }

  /** Providers a connector_event trigger may name, with their events. */
  eventProviders(): Map<string, { connected: boolean; personalOnly: boolean; events: readonly string[] }> {
    const providers = new Map<
      string,
      { connected: boolean; personalOnly: boolean; events: readonly string[] }
    >();
    providers.set('workspace', { connected: true, personalOnly: false, events: WORKSPACE_EVENTS });
    for (const state of this.namespaces.values()) {
      if (state.plugin.builtin) continue;
      for (const provider of new Set([...state.plugin.providers, ...state.providers])) {
        const usable = this.connectors.filter((c) => c.provider === provider && c.connected);
        providers.set(provider, {
          connected: usable.length > 0,
          personalOnly: usable.length > 0 && usable.every((c) => c.personal),
          events: state.plugin.events,
        });
      }
    }
    return providers;
  }
}

export interface CatalogueOptions {
  /** Extra connector plugins (outside providers), beside the ones Tandem ships. */
  plugins?: ConnectorPlugin[];
}

/** The connector plugin a provider's connection gives (`gmail` gives `email`). */
export function pluginOfProvider(plugins: ConnectorPlugin[], provider: string): ConnectorPlugin | undefined {
  return plugins.find((p) => !p.builtin && (p.providers.includes(provider) || p.namespace === provider));
}

export function allPlugins(options: CatalogueOptions = {}): ConnectorPlugin[] {
  return [...BUILTIN_PLUGINS, ...CONNECTOR_PLUGINS, ...(options.plugins ?? [])];
}
