import type { ConnectorPlugin } from '../../capabilities/capability.ts';
import type { Db } from '../../storage/schema.ts';
import {
  Catalogue,
  pluginOfProvider,
  providerName,
  type ConnectorEntry,
  type NamespaceState,
} from '../../capabilities/catalogue.ts';

/**
 * The catalogue as one person sees it. Built-in namespaces are always connected; a plugin's
 * namespace is connected when the workspace has a shared connection for one of its providers or
 * the person has a personal one.
 */
export async function loadCatalogue(
  db: Db,
  workspaceId: string,
  personId: string,
  plugins: ConnectorPlugin[],
): Promise<Catalogue> {
  const rows = await db
    .selectFrom('connectors')
    .select(['provider', 'connected', 'personal', 'owner_id'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('provider')
    .orderBy('created_at')
    .execute();
  const pluginFor = (provider: string) => pluginOfProvider(plugins, provider);
  const connectors: ConnectorEntry[] = rows.map((row) => {
    const personal = row.personal === 1;
    return {
      provider: row.provider,
      name: providerName(row.provider),
      personal,
      namespace: pluginFor(row.provider)?.namespace ?? row.provider,
      connected: row.connected === 1 && (!personal || row.owner_id === personId),
    };
  });
  const namespaces = new Map<string, NamespaceState>();
  for (const plugin of plugins) {
    if (plugin.builtin) {
      namespaces.set(plugin.namespace, { plugin, connected: true, personalOnly: false, providers: [] });
      continue;
    }
    const mine = connectors.filter((c) => c.namespace === plugin.namespace);
    const usable = mine.filter((c) => c.connected);
    namespaces.set(plugin.namespace, {
      plugin,
      connected: usable.length > 0,
      personalOnly: usable.length > 0 && usable.every((c) => c.personal),
      providers: [...new Set(mine.map((c) => c.provider))],
    });
  }
  return new Catalogue(namespaces, connectors);
}
