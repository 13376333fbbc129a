import { generateKeyPairSync, randomBytes } from 'node:crypto';
import type { Deps } from '../deps.ts';

/** A value every process on one database shares, made by whichever process needs it first. */
async function shared(deps: Deps, key: string, make: () => string): Promise<string> {
  await deps.db
    .insertInto('settings')
    .values({ key, value: make() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await deps.db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
  return row.value;
}

/**
 * The authorization server's keys, the same in every process: a P-256 signing key (for the
 * ID tokens of clients that ask for `openid`) and the key that signs its cookies.
 */
export async function authorizationServerKeys(deps: Deps) {
  const jwk = await shared(deps, 'oauth:signing-jwk', () => {
    const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const key = privateKey.export({ format: 'jwk' });
    return JSON.stringify({ ...key, kid: randomBytes(8).toString('hex'), alg: 'ES256', use: 'sig' });
  });
  const cookieKey = await shared(deps, 'oauth:cookie-key', () => randomBytes(32).toString('base64url'));
  return { jwks: { keys: [JSON.parse(jwk) as Record<string, string>] }, cookieKeys: [cookieKey] };
}
