/**
 * The one masking step for secret values: the model key (TANDEM_MODEL_KEY) and connector secrets
 * are held here as they are first used, and every text that leaves the process's keeping (run
 * errors, automation sessions, notifications, agent replies, log lines) passes `maskSecrets`.
 */

export const MASK = '[secret]';

/**
 * Values held for every text must be at least this long: a shorter one is no secret worth the
 * name, and masking it everywhere would garble ordinary words. Secrets given for one call's text
 * (a connector's own errors) are masked from 4 characters.
 */
const HELD_MIN = 8;
const GIVEN_MIN = 4;
/** Held values at most: one per connection setting and the model key fit many times over. */
const HELD_MAX = 10_000;

const held = new Set<string>();
/** Every form a value is written in: as it is, JSON-escaped (once or twice) and URL-encoded. */
let forms: string[] = [];

function formsOf(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  return [...new Set([secret, json, JSON.stringify(json).slice(1, -1), encodeURIComponent(secret)])];
}

/** Holds secret values (unset or short ones are left out) so every later text masks them. */
export function holdSecrets(values: readonly (string | undefined | null)[]): void {
  let added = false;
  for (const value of values) {
    if (typeof value !== 'string' || value.length < HELD_MIN || held.has(value)) continue;
    if (held.size >= HELD_MAX) held.delete(held.values().next().value!);
    held.add(value);
    added = true;
  }
  // Longest first, so a secret containing another is masked whole.
  if (added) forms = [...held].flatMap(formsOf).sort((a, b) => b.length - a.length);
}

/** The text with every held secret, and each of `also`, replaced by `[secret]`. */
export function maskSecrets(text: string, also: readonly string[] = []): string {
  let out = text;
  const given = also.filter((s) => s.length >= GIVEN_MIN).flatMap(formsOf);
  for (const form of given.length ? [...given, ...forms].sort((a, b) => b.length - a.length) : forms) {
    if (out.includes(form)) out = out.split(form).join(MASK);
  }
  return out;
}

/** A JSON-like value with every string in it masked (a step's output, a card). */
export function maskDeep<T>(value: T): T {
  if (forms.length === 0) return value;
  if (typeof value === 'string') return maskSecrets(value) as T;
  if (Array.isArray(value)) return value.map((v) => maskDeep(v)) as T;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [maskSecrets(k), maskDeep(v)]),
    ) as T;
  }
  return value;
}
