import { invalid } from '../../errors.ts';
import { PROVIDER_SETTINGS, providerName } from '../../capabilities/catalogue.ts';
import { WEBHOOK_SECRET, type ProviderSettings, type Settings } from '../../capabilities/settings.ts';

/**
 * A connection's settings, for every reader (the fixture, `tandem connector set`, the settings
 * page and the calls): changes checked and applied, what a call sees, what is missing, what may be
 * shown, what is sealed. Which fields each provider takes is declared by its connector's
 * namespace (src/capabilities).
 */

/** The settings of a provider; a provider Tandem has no transport for takes only its webhook secret. */
export function settingsOf(provider: string): ProviderSettings {
  return (
    PROVIDER_SETTINGS.find((p) => p.provider === provider) ?? {
      provider,
      name: providerName(provider),
      fields: [WEBHOOK_SECRET],
      required: [],
      defaults: {},
    }
  );
}

/**
 * `current` with `changes` applied: a string sets a field, null or "" clears it. Unknown fields
 * and bad values are refused, each naming its field. Fields a value carries (a user and password
 * inside smtp_url) are set too unless those are given with it.
 */
export function applySettings(
  provider: string,
  current: Settings,
  changes: Record<string, unknown>,
): Settings {
  const spec = settingsOf(provider);
  const next: Settings = { ...current };
  const names = spec.fields.map((f) => f.name);
  for (const [name, value] of Object.entries(changes)) {
    const field = spec.fields.find((f) => f.name === name);
    if (!field) throw invalid(`${provider} has no setting "${name}"; it takes ${names.join(', ')}`);
    if (value === null || value === '') {
      delete next[name];
      continue;
    }
    if (typeof value !== 'string') throw invalid(`${name} must be a string`);
    next[name] = field.parse ? field.parse(value) : value;
    for (const [other, carried] of Object.entries(field.carries?.(value) ?? {}))
      if (changes[other] === undefined) next[other] = carried;
  }
  return next;
}

/** What a call sees: the stored settings over the provider's defaults (an SMTP login defaults to `from`). */
export function effectiveSettings(provider: string, stored: Settings): Settings {
  const spec = settingsOf(provider);
  const settings = { ...spec.defaults, ...stored };
  spec.fill?.(settings);
  return settings;
}

/** The required fields a connection still lacks. */
export function missingSettings(provider: string, stored: Settings): string[] {
  const settings = effectiveSettings(provider, stored);
  return settingsOf(provider).required.filter((name) => !settings[name]);
}

/** The settings as anyone may see them: secrets only as "set" or "not set". */
export function shownSettings(provider: string, stored: Settings): Record<string, string | null> {
  return Object.fromEntries(
    settingsOf(provider).fields.map((f) => [
      f.name,
      f.secret ? (stored[f.name] ? 'set' : 'not set') : (stored[f.name] ?? null),
    ]),
  );
}

/** The stored settings split into what is kept in the open and what is sealed. */
export function splitSecrets(provider: string, settings: Settings): { open: Settings; secret: Settings } {
  const spec = settingsOf(provider);
  const open: Settings = {};
  const secret: Settings = {};
  for (const [name, value] of Object.entries(settings)) {
    if (spec.fields.find((f) => f.name === name)?.secret) secret[name] = value;
    else open[name] = value;
  }
  return { open, secret };
}
