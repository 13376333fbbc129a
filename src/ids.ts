import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';

/**
 * Ids sort by creation time (a millisecond prefix) and carry 80 random bits, so listings can
 * order by id and ids cannot be guessed. The prefix says what kind of object the id names.
 */
export function newId(prefix: string): string {
  const time = Date.now().toString(36).padStart(9, '0');
  const bytes = randomBytes(16);
  let rand = '';
  for (let i = 0; i < 16; i++) rand += ALPHABET[bytes[i]! % 36];
  return `${prefix}_${time}${rand}`;
}
