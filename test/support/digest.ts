import { sql } from 'kysely';
import type { Services } from '../../src/services.ts';

/**
 * What a refused tool call must leave as it was, read in one query: row counts of the tables
 * tools write, artifacts' versions (which only grow, so their sum moves with any write) and the
 * states tools switch (archived artifacts, resolved threads, enabled automations).
 */
export async function stateDigest(services: Services): Promise<Record<string, number>> {
  const { rows } = await sql<Record<string, unknown>>`SELECT
    (SELECT count(*) FROM artifacts) AS artifacts,
    (SELECT coalesce(sum(version), 0) FROM artifacts) AS artifact_versions,
    (SELECT count(*) FROM artifacts WHERE status = 'archived') AS archived,
    (SELECT count(*) FROM checkpoints) AS checkpoints,
    (SELECT count(*) FROM doc_updates) AS doc_updates,
    (SELECT count(*) FROM idempotency_keys) AS idempotency_keys,
    (SELECT count(*) FROM messages) AS messages,
    (SELECT count(*) FROM threads) AS threads,
    (SELECT count(*) FROM threads WHERE status = 'resolved') AS resolved,
    (SELECT count(*) FROM comments) AS comments,
    (SELECT count(*) FROM flows) AS flows,
    (SELECT count(*) FROM flow_versions) AS flow_versions,
    (SELECT count(*) FROM automations) AS automations,
    (SELECT count(*) FROM automations WHERE enabled = 1) AS enabled,
    (SELECT count(*) FROM runs) AS runs`.execute(services.deps.db);
  return Object.fromEntries(Object.entries(rows[0] ?? {}).map(([key, value]) => [key, Number(value)]));
}
