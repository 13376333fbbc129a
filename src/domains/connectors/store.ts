import type { Selectable } from 'kysely';
import type { ConnectorTable } from '../../storage/schema.ts';
import { invalid } from '../../errors.ts';
import { providerName } from '../../capabilities/catalogue.ts';
import { SealError, type SecretBox } from './secrets.ts';
import { splitSecrets } from './settings.ts';
import type { Settings } from '../../capabilities/settings.ts';

/** How a connector's settings are kept in its row: `config` in the open, `sealed` sealed. */

export type ConnectorRow = Selectable<ConnectorTable>;

/** A sealed value belongs to its row: it does not open anywhere else. */
const contextOf = (connectorId: string) => `connectors:${connectorId}`;

/** The columns that store `settings` for the connector `id`. */
export function settingsColumns(
  box: SecretBox,
  id: string,
  provider: string,
  settings: Settings,
): { config: string | null; sealed: string | null; secret: null } {
  const { open, secret } = splitSecrets(provider, settings);
  return {
    config: Object.keys(open).length ? JSON.stringify(open) : null,
    sealed: Object.keys(secret).length ? box.seal(JSON.stringify(secret), contextOf(id)) : null,
    secret: null,
  };
}

type StoredRow = Pick<ConnectorRow, 'id' | 'provider' | 'config' | 'sealed' | 'secret'>;

/** The row's settings; `unreadable` when its sealed ones do not open with this key (they are left out). */
export function readSettings(box: SecretBox, row: StoredRow): { settings: Settings; unreadable?: string } {
  const open = row.config === null ? {} : (JSON.parse(row.config) as Settings);
  // A row not sealed yet (written before 009, start-up not run since) still holds its webhook secret.
  const legacy: Settings = row.secret === null ? {} : { secret: row.secret };
  if (row.sealed === null) return { settings: { ...legacy, ...open } };
  try {
    const secret = JSON.parse(box.open(row.sealed, contextOf(row.id))) as Settings;
    return { settings: { ...legacy, ...open, ...secret } };
  } catch (error) {
    if (!(error instanceof SealError)) throw error;
    return { settings: { ...legacy, ...open }, unreadable: error.message };
  }
}

/** Every stored setting of a row, secrets opened; refused when they do not open. */
export function storedSettings(box: SecretBox, row: StoredRow): Settings {
  const { settings, unreadable } = readSettings(box, row);
  if (unreadable)
    throw invalid(`the ${providerName(row.provider)} connection's secrets cannot be read: ${unreadable}`);
  return settings;
}
