import { invalid } from '../../errors.ts';
import { holdSecrets } from '../../observability/secrets.ts';
import { CONNECTOR_PLUGINS, providerName } from '../../capabilities/catalogue.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { effectiveSettings, missingSettings, settingsOf } from './settings.ts';
import type { Settings } from '../../capabilities/settings.ts';
import { storedSettings } from './store.ts';

/** What a capability call goes through: a connection's provider and effective settings. */
export interface Connection {
  provider: string;
  settings: Settings;
  /** The secret values among the settings, to keep out of any text the call produces. */
  secrets: string[];
}

/**
 * The connection a run's call to `namespace` goes through: for a workspace automation the
 * workspace's shared one; for a personal one the person's own, else the shared one. Refused,
 * saying what to do, when there is none or it lacks a setting a call needs.
 */
export async function connectionFor(
  deps: Deps,
  actor: Actor,
  namespace: string,
  automationId?: string,
): Promise<Connection> {
  const { db } = deps;
  const plugin = CONNECTOR_PLUGINS.find((p) => p.namespace === namespace);
  const rows = await db
    .selectFrom('connectors')
    .selectAll()
    .where('workspace_id', '=', actor.workspaceId)
    .where('provider', 'in', plugin?.providers ?? [namespace])
    .where('connected', '=', 1)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  const automation =
    automationId === undefined
      ? undefined
      : await db.selectFrom('automations').select('scope').where('id', '=', automationId).executeTakeFirst();
  const workspaceWide = automation?.scope === 'workspace';
  const shared = rows.find((r) => r.personal === 0);
  const own = rows.find((r) => r.personal === 1 && r.owner_id === actor.personId);
  const row = workspaceWide ? shared : (own ?? shared);
  const name = plugin?.name ?? namespace;
  if (!row)
    throw invalid(
      workspaceWide && own
        ? `the ${name} connector is connected only personally; a workspace automation needs the workspace’s shared connection`
        : `the ${name} connector is not connected for the person this automation acts as`,
    );
  const stored = storedSettings(deps.secrets, row);
  const missing = missingSettings(row.provider, stored);
  if (missing.length) {
    const who = row.personal === 1 ? 'its owner sets' : 'a workspace admin sets';
    throw invalid(
      `the ${providerName(row.provider)} connection has no ${missing.join(' or ')} yet; ${who} it on /settings or with "tandem connector set ${row.provider} ${missing[0]}=…"`,
    );
  }
  const settings = effectiveSettings(row.provider, stored);
  const secret = new Set(
    settingsOf(row.provider)
      .fields.filter((f) => f.secret)
      .map((f) => f.name),
  );
  const secrets = Object.entries(settings)
    .filter(([field]) => secret.has(field))
    .map(([, value]) => value);
  holdSecrets(secrets);
  return { provider: row.provider, settings, secrets };
}
