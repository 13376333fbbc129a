import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { invalid } from '../../errors.ts';

/**
 * scrypt with N = 2^15, r = 8, p = 1: 32 MiB and about 100 ms per hash on a laptop core, so a
 * stolen table costs an attacker that much per guess. The parameters are stored with each hash,
 * so raising them later leaves old hashes readable.
 */
const PARAMS = { N: 2 ** 15, r: 8, p: 1 } as const;
const KEY_BYTES = 32;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    scrypt(
      password.normalize('NFC'),
      salt,
      KEY_BYTES,
      { ...options, maxmem: 128 * (options.N ?? 0) * (options.r ?? 0) * 2 },
      (error, key) => (error ? reject(error) : resolve(key)),
    ),
  );
}

/** A new password's stored form: `scrypt$N$r$p$salt$hash` (base64url). */
export async function hashPassword(password: string): Promise<string> {
  checkPassword(password);
  const salt = randomBytes(16);
  const key = await derive(password, salt, PARAMS);
  return ['scrypt', PARAMS.N, PARAMS.r, PARAMS.p, salt.toString('base64url'), key.toString('base64url')].join(
    '$',
  );
}

/** Whether the password matches the stored hash; a missing hash costs as much as a real one. */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const parts = (stored ?? DUMMY).split('$');
  const [kind, n, r, p, salt, hash] = parts;
  if (parts.length !== 6 || kind !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64url');
  const key = await derive(password.slice(0, PASSWORD_MAX), Buffer.from(salt, 'base64url'), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return stored !== null && key.length === expected.length && timingSafeEqual(key, expected);
}

/** A hash of nothing anyone can type, checked when the account has no password. */
const DUMMY = `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$AAAAAAAAAAAAAAAAAAAAAA$${'A'.repeat(43)}`;

/** Refuses a password too short to resist guessing, or too long to hash quickly. */
export function checkPassword(password: string): void {
  const length = [...password].length;
  if (length < PASSWORD_MIN) throw invalid(`a password needs at least ${PASSWORD_MIN} characters`);
  if (length > PASSWORD_MAX) throw invalid(`a password has at most ${PASSWORD_MAX} characters`);
}

/** A password for the demo people: 16 characters from an alphabet without look-alikes. */
export function newPassword(): string {
  const alphabet = 'abcdefghjkmnpqrstuvwxyz23456789';
  const bytes = randomBytes(16);
  return [...bytes].map((b) => alphabet[b % alphabet.length]).join('');
}
