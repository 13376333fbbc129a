import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 16;

let lastTime = 0;
let lastRandom: number[] = [];

/** Random bytes drawn from the system in blocks, each byte used once, so an id costs no system call. */
const pool = new Uint8Array(RANDOM_CHARS * 256);
let poolAt = pool.length;

function randomDigits(): number[] {
  if (poolAt + RANDOM_CHARS > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const digits = new Array<number>(RANDOM_CHARS);
  for (let i = 0; i < RANDOM_CHARS; i++) digits[i] = pool[poolAt + i]! % 36;
  poolAt += RANDOM_CHARS;
  return digits;
}

/** Adds one to a base-36 digit string, so ids made in one millisecond keep their order. */
function increment(digits: number[]): number[] {
  const next = [...digits];
  for (let i = next.length - 1; i >= 0; i--) {
    if (next[i]! < 35) {
      next[i]! += 1;
      return next;
    }
    next[i] = 0;
  }
  return randomDigits();
}

/**
 * Ids sort by creation time (a millisecond part) and carry about 80 random bits, so listings can
 * order by id and ids cannot be guessed. Within one process they strictly increase, even for ids
 * made in the same millisecond. The prefix says what kind of object the id names.
 */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now > lastTime) {
    lastTime = now;
    lastRandom = randomDigits();
  } else {
    lastRandom = increment(lastRandom);
  }
  const time = lastTime.toString(36).padStart(9, '0');
  return `${prefix}_${time}${lastRandom.map((d) => ALPHABET[d]).join('')}`;
}
