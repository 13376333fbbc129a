import type { Db } from './schema.ts';
import { unpackText } from './packed.ts';

/**
 * One stored version of an artifact with its text, by the id a person or agent named; nothing
 * when the id is not a string, names no version, or names another artifact's version or one
 * stored without its text.
 */
export async function versionText(
  db: Db,
  artifactId: string,
  versionId: unknown,
): Promise<{ docVersion: number; text: string } | undefined> {
  if (typeof versionId !== 'string') return undefined;
  const row = await db
    .selectFrom('checkpoints')
    .select(['doc_version', 'content'])
    .where('id', '=', versionId)
    .where('artifact_id', '=', artifactId)
    .executeTakeFirst();
  if (!row || row.content === null) return undefined;
  return { docVersion: row.doc_version, text: unpackText(row.content) };
}
