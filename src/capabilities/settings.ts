import { invalid } from '../errors.ts';
import type { Net } from '../net/guarded-fetch.ts';
import type { Connection } from './capability.ts';

/**
 * What a connector's provider is configured with: which fields it takes, which are secret (sealed
 * at rest, shown only as "set" or "not set"), which a call needs, and its defaults. Each
 * connector's namespace declares its providers' settings beside its capabilities;
 * domains/connectors applies them for every reader (the fixture, `tandem connector set`, the
 * settings page and the calls).
 */

export type Settings = Record<string, string>;

export interface Field {
  name: string;
  secret: boolean;
  describe: string;
  /** Checks a value and gives its stored form; throws a refusal naming the field. */
  parse?: (value: string) => string;
  /** Other fields a value carries (a user and password inside smtp_url), set unless given with it. */
  carries?: (value: string) => Settings;
}

export interface ProviderSettings {
  provider: string;
  /** As people read it: `GitHub`, `Gmail`. */
  name: string;
  fields: Field[];
  /** What a call through the connection needs. */
  required: string[];
  /** Values used while a field is not set. */
  defaults: Settings;
  /** Fills what a call sees from the other settings (an SMTP login defaults to the sender). */
  fill?: (settings: Settings) => void;
  /**
   * `Test connection`: one read call to the service through the connection, answering in one
   * sentence what it found; a failure throws the call's own error.
   */
  check?: (connection: Connection, net: Net) => Promise<string>;
}

/** A setting holding an absolute http or https URL without credentials, query or fragment. */
export function httpUrl(name: string) {
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

export const nonEmpty = (name: string) => (value: string) => {
  if (value.trim() === '') throw invalid(`${name} must not be empty`);
  return value.trim();
};

/** Every provider takes it, including those Tandem has no transport for. */
export const WEBHOOK_SECRET: Field = {
  name: 'secret',
  secret: true,
  describe:
    'Signs the events the provider sends to /hooks: GitHub’s webhook secret, Slack’s signing secret, or the connector-event secret.',
};
