import { z } from 'zod';
import { invalid } from '../../errors.ts';

/**
 * Each provider's settings: which fields it takes, which are secret (sealed at rest, shown only
 * as "set" or "not set"), which a call needs, and the presets of the providers that are SMTP
 * with a known host (Gmail and Outlook take the person's app password). One place for every
 * reader: the fixture, `tandem connector set`, the settings page and the transports.
 */

export interface Field {
  name: string;
  secret: boolean;
  describe: string;
  /** Checks a value and gives its stored form; throws a refusal naming the field. */
  parse?: (value: string) => string;
}

export interface ProviderSettings {
  provider: string;
  fields: Field[];
  /** What a call through the connection needs. */
  required: string[];
  /** Values used while a field is not set. */
  defaults: Record<string, string>;
}

function httpUrl(name: string) {
  return (value: string) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw invalid(`${name} must be an absolute http or https URL`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw invalid(`${name} must be an http or https URL`);
    if (url.username !== '' || url.password !== '')
      throw invalid(`${name} must not carry a user name or password; the token is its own setting`);
    if (url.search !== '' || url.hash !== '') throw invalid(`${name} must not have a query or a fragment`);
    return url.href;
  };
}

/** `smtp://host[:port]` or `smtps://host[:port]`, credentials taken out (they are settings of their own). */
export function splitSmtpUrl(value: string): { url: string; username?: string; password?: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid('smtp_url must be a URL such as smtps://smtp.example.com:465');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:')
    throw invalid('smtp_url must start with smtp:// (STARTTLS) or smtps:// (TLS)');
  if (url.hostname === '') throw invalid('smtp_url must name a host');
  if (url.port !== '' && !/^\d+$/.test(url.port)) throw invalid('smtp_url has a port that is not a number');
  const username = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  return {
    url: `${url.protocol}//${url.host}`,
    ...(username ? { username } : {}),
    ...(password ? { password } : {}),
  };
}

const sender = z.union([z.email(), z.string().regex(/^[^<>]*<[^<>\s]+@[^<>\s]+>$/)]);
function from(value: string) {
  if (!sender.safeParse(value.trim()).success)
    throw invalid('from must be an e-mail address, or a name and one: Ada <ada@example.com>');
  return value.trim();
}

const nonEmpty = (name: string) => (value: string) => {
  if (value.trim() === '') throw invalid(`${name} must not be empty`);
  return value.trim();
};

const WEBHOOK_SECRET: Field = {
  name: 'secret',
  secret: true,
  describe:
    'Signs the events the provider sends to /hooks: GitHub’s webhook secret, Slack’s signing secret, or the connector-event secret.',
};

const smtpFields = (passwordWords: string): Field[] => [
  {
    name: 'smtp_url',
    secret: false,
    describe:
      'smtps://host:465 (TLS) or smtp://host:587 (STARTTLS, which a password needs unless the host is localhost); a user and password in it become username and password.',
    parse: (value) => splitSmtpUrl(value).url,
  },
  {
    name: 'from',
    secret: false,
    describe: 'The sender: ada@example.com or Ada <ada@example.com>.',
    parse: from,
  },
  {
    name: 'username',
    secret: false,
    describe: 'The SMTP login; defaults to the from address.',
    parse: nonEmpty('username'),
  },
  { name: 'password', secret: true, describe: passwordWords },
  WEBHOOK_SECRET,
];

/** Plain SMTP, or a preset of a known host that signs in with the person's app password. */
const emailLike = (provider: string, passwordWords: string, presetUrl?: string): ProviderSettings => ({
  provider,
  fields: smtpFields(passwordWords),
  required: presetUrl ? ['smtp_url', 'from', 'password'] : ['smtp_url', 'from'],
  defaults: presetUrl ? { smtp_url: presetUrl } : {},
});

export const PROVIDER_SETTINGS: readonly ProviderSettings[] = [
  {
    provider: 'github',
    fields: [
      {
        name: 'api_url',
        secret: false,
        describe: 'The REST API root; https://api.github.com unless GitHub Enterprise (https://HOST/api/v3).',
        parse: httpUrl('api_url'),
      },
      { name: 'token', secret: true, describe: 'A personal access token or an app installation token.' },
      WEBHOOK_SECRET,
    ],
    required: ['token'],
    defaults: {},
  },
  {
    provider: 'slack',
    fields: [
      {
        name: 'api_url',
        secret: false,
        describe: 'The Web API root; https://slack.com/api/ unless a proxy stands between.',
        parse: httpUrl('api_url'),
      },
      { name: 'bot_token', secret: true, describe: 'The app’s bot token (xoxb-…).' },
      WEBHOOK_SECRET,
    ],
    required: ['bot_token'],
    defaults: {},
  },
  emailLike('email', 'The SMTP password, if the server asks for one.'),
  emailLike(
    'gmail',
    'A Google app password (Google Account → Security → App passwords).',
    'smtps://smtp.gmail.com:465',
  ),
  emailLike(
    'outlook',
    'The account’s app password (Microsoft account → Security → App passwords).',
    'smtp://smtp.office365.com:587',
  ),
];

/** The settings of a provider; a provider Tandem has no transport for takes only its webhook secret. */
export function settingsOf(provider: string): ProviderSettings {
  return (
    PROVIDER_SETTINGS.find((p) => p.provider === provider) ?? {
      provider,
      fields: [WEBHOOK_SECRET],
      required: [],
      defaults: {},
    }
  );
}

export type Settings = Record<string, string>;

/**
 * `current` with `changes` applied: a string sets a field, null or "" clears it. Unknown fields
 * and bad values are refused, each naming its field. A user and password inside smtp_url are
 * moved to username and password unless those are given too.
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
    if (name === 'smtp_url') {
      const inside = splitSmtpUrl(value);
      if (inside.username && changes.username === undefined) next.username = inside.username;
      if (inside.password && changes.password === undefined) next.password = inside.password;
    }
  }
  return next;
}

/** What a call sees: the stored settings over the provider's defaults (an SMTP login defaults to `from`). */
export function effectiveSettings(provider: string, stored: Settings): Settings {
  const spec = settingsOf(provider);
  const settings = { ...spec.defaults, ...stored };
  if (settings.smtp_url && settings.password && !settings.username && settings.from)
    settings.username = /<([^<>]+)>/.exec(settings.from)?.[1] ?? settings.from;
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
