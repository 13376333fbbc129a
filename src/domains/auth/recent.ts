/**
 * How long a process trusts a credential it verified without asking the database again. Another
 * process's revocation (a deleted row) therefore takes effect here within this time; the process
 * that revokes forgets the credential at once. The promise to people is 5 seconds.
 */
export const TRUST_MS = 2_000;
const MAX_ENTRIES = 10_000;

/** Recently verified credentials by their secret, each with the id that revokes it. */
export class RecentlyVerified<T extends { credentialId: string }> {
  readonly #entries = new Map<string, { value: T; until: number }>();

  get(secret: string, now = Date.now()): T | undefined {
    const hit = this.#entries.get(secret);
    if (!hit) return undefined;
    if (hit.until > now) return hit.value;
    this.#entries.delete(secret);
    return undefined;
  }

  set(secret: string, value: T, now = Date.now()): void {
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.clear();
    this.#entries.set(secret, { value, until: now + TRUST_MS });
  }

  /** Drops every entry a revocation covers (by credential id, or by any test on the value). */
  forget(match: string | ((value: T) => boolean)): void {
    const test = typeof match === 'string' ? (v: T) => v.credentialId === match : match;
    for (const [secret, { value }] of this.#entries) if (test(value)) this.#entries.delete(secret);
  }
}
