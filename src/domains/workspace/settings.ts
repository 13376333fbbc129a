import { randomBytes } from 'node:crypto';
import type { Db } from '../../storage/schema.ts';

/** A secret shared by every process on one database, made on first use (signing cursors). */
export async function sharedSecret(db: Db, name: string): Promise<Buffer> {
  const key = `secret:${name}`;
  await db
    .insertInto('settings')
    .values({ key, value: randomBytes(32).toString('base64') })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const row = await db
    .selectFrom('settings')
    .select('value')
    .where('key', '=', key)
    .executeTakeFirstOrThrow();
  return Buffer.from(row.value, 'base64');
}
