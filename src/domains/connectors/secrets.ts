import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Connector secrets (tokens, passwords, webhook secrets) are sealed with AES-256-GCM before they
 * are stored. The key is TANDEM_SECRET_KEY, or `secrets.key` made under TANDEM_DATA on first
 * start. A sealed value reads `v1:<key id>:<base64 of nonce, tag and ciphertext>`; the key id
 * (the start of the key's SHA-256) tells a changed key from damaged data. Each value is bound to
 * where it is stored (`context`, e.g. the connector's id), so it cannot be moved to another row.
 */

export interface SecretBox {
  seal(plain: string, context: string): string;
  open(sealed: string, context: string): string;
}

export class SealError extends Error {}

const KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

export function secretBox(key: Buffer): SecretBox {
  if (key.length !== KEY_BYTES) throw new Error(`a secret key is ${KEY_BYTES} bytes`);
  const keyId = createHash('sha256').update(key).digest('hex').slice(0, 8);
  return {
    seal(plain, context) {
      const nonce = randomBytes(NONCE_BYTES);
      const cipher = createCipheriv('aes-256-gcm', key, nonce);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return `v1:${keyId}:${Buffer.concat([nonce, cipher.getAuthTag(), body]).toString('base64')}`;
    },
    open(sealed, context) {
      const [version, id, data = ''] = sealed.split(':');
      if (version !== 'v1') throw new SealError('a stored secret is not in a form Tandem seals');
      if (id !== keyId)
        throw new SealError(
          'a stored secret was sealed with another key (TANDEM_SECRET_KEY or TANDEM_DATA/secrets.key changed); restore that key or set the secret again',
        );
      const raw = Buffer.from(data, 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(NONCE_BYTES, NONCE_BYTES + TAG_BYTES));
      try {
        return Buffer.concat([
          decipher.update(raw.subarray(NONCE_BYTES + TAG_BYTES)),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        throw new SealError('a stored secret does not open with this key: it was changed or damaged');
      }
    },
  };
}

/**
 * TANDEM_SECRET_KEY's value as a key: 32 bytes written as base64 (`openssl rand -base64 32`) or
 * as 64 hex digits. Undefined when it is neither.
 */
export function parseSecretKey(text: string): Buffer | undefined {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(value)) return undefined;
  const key = Buffer.from(value, 'base64');
  return key.length === KEY_BYTES ? key : undefined;
}

let processKey: Buffer | undefined;

/**
 * A key made for this process, for services opened without one (tests, benches): what it seals
 * cannot be opened once the process ends. `tandem` commands always pass the configured key.
 */
export function processSecretKey(): Buffer {
  processKey ??= randomBytes(KEY_BYTES);
  return processKey;
}
