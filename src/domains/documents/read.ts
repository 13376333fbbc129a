import { sql } from 'kysely';
import { DomainError } from '../../errors.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor } from '../policies/artifacts.ts';
import { artifactText } from '../workspace/artifact-text.ts';
import { applyDelta, DELTA_CHAIN, readDelta, readDigest, type VersionDigest } from './model.ts';
import type { DocumentStore } from './store.ts';
import { sliceWindow } from './text.ts';

export const WINDOW_MAX = 24_000;
export const VERSIONS_SHOWN = 20;

/** A number argument clamped into range; anything not a finite number takes the default. */
export function clampNumber(value: unknown, min: number, max: number, fallback: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) return fallback;
  return Math.min(max, Math.max(min, Math.floor(value)));
}

export function reader(deps: Deps, store: DocumentStore) {
  const { db } = deps;

  async function read(actor: Actor, input: { document_id?: unknown; offset?: unknown; window?: unknown }) {
    let { artifact } = await artifactFor(db, actor, input.document_id);
    let text: string | null;
    if (artifact.type === 'document') {
      // People's edits not stored yet are stored first, so the version read matches the text read.
      if (await store.flush(artifact.id)) artifact = (await artifactFor(db, actor, artifact.id)).artifact;
      text = await store.currentMarkdown(artifact.id, artifact.content);
    } else text = artifactText(artifact);
    // The spec words this one without the prefix: nothing readable exists yet.
    if (text === null) throw new DomainError('not_found', 'Artifact not found', { prefixed: false });
    const window = clampNumber(input.window, 1, WINDOW_MAX, WINDOW_MAX);
    const { start: offset, text: markdown } = sliceWindow(
      text,
      clampNumber(input.offset, 0, Number.MAX_SAFE_INTEGER, 0),
      window,
    );
    return {
      document_id: artifact.id,
      title: artifact.title,
      type: artifact.type as 'document' | 'html_app' | 'table',
      markdown,
      version: artifact.version,
      size_chars: text.length,
      offset: Math.min(offset, text.length),
      window,
      truncated: offset + markdown.length < text.length,
      archived: artifact.status === 'archived',
      ...(artifact.conversation_id ? { parent: { conversation_id: artifact.conversation_id } } : {}),
    };
  }

  async function versions(actor: Actor, input: { document_id?: unknown }) {
    const { artifact } = await artifactFor(db, actor, input.document_id);
    const rows = await db
      .selectFrom('checkpoints')
      .leftJoin('people', 'people.id', 'checkpoints.author_id')
      .select([
        'checkpoints.id',
        'checkpoints.doc_version',
        'checkpoints.reason',
        'checkpoints.label',
        'checkpoints.pinned',
        'checkpoints.instruction',
        'checkpoints.kept_json',
        'checkpoints.result_version',
        'checkpoints.created_at',
        'people.name as author',
        // Whether the row records what its write changed (so it can be undone alone).
        sql<number>`case when checkpoints.changes_json is null then 0 else 1 end`.as('undoable'),
      ])
      .where('checkpoints.artifact_id', '=', artifact.id)
      .orderBy('checkpoints.id', 'desc')
      .limit(VERSIONS_SHOWN)
      .execute();
    return {
      document_id: artifact.id,
      versions: rows.map((r) => ({
        version_id: r.id,
        doc_version: r.doc_version,
        reason: r.reason as 'agent_edit' | 'edit' | 'restore' | 'export' | 'named',
        label: r.label,
        pinned: r.pinned === 1,
        ...(r.author ? { author_label: r.author } : {}),
        ...(r.instruction ? { instruction: r.instruction } : {}),
        created_at: r.created_at,
        ...(r.kept_json
          ? { kept_blocks: JSON.parse(r.kept_json) as { count: number; excerpts: string[] } }
          : {}),
        // For the app: who wrote it (an agent for the author, or the author), the version it made.
        by: (r.reason === 'agent_edit' ? 'agent' : 'person') as 'agent' | 'person',
        made_version:
          r.reason === 'agent_edit' && r.result_version !== null ? r.result_version : r.doc_version,
        undoable: Number(r.undoable) === 1,
      })),
    };
  }

  /**
   * The block list of a version, while a version row still holds it: the state before an agent
   * write, the state it produced, or a person's stored edit.
   */
  async function digestAt(
    artifactId: string,
    version: number,
    chain = 0,
  ): Promise<VersionDigest | undefined> {
    const row = await db
      .selectFrom('checkpoints')
      .select(['doc_version', 'blocks_json', 'result_blocks_json'])
      .where('artifact_id', '=', artifactId)
      .where((eb) =>
        eb.or([
          eb.and([eb('doc_version', '=', version), eb('blocks_json', 'is not', null)]),
          eb.and([eb('result_version', '=', version), eb('result_blocks_json', 'is not', null)]),
        ]),
      )
      .orderBy('id', 'desc')
      .executeTakeFirst();
    if (!row) return undefined;
    const stored = row.doc_version === version && row.blocks_json ? row.blocks_json : row.result_blocks_json!;
    const delta = readDelta(stored);
    if (!delta) return readDigest(stored);
    // A change from an earlier version's digest, while the rows that lead to a whole one are kept.
    if (delta.base >= version || chain >= DELTA_CHAIN) return undefined;
    const base = await digestAt(artifactId, delta.base, chain + 1);
    return base && applyDelta(base, delta);
  }

  /** Whether a version row holds the block list of a version. */
  async function holdsDigest(artifactId: string, version: number): Promise<boolean> {
    const row = await db
      .selectFrom('checkpoints')
      .select('id')
      .where('artifact_id', '=', artifactId)
      .where((eb) =>
        eb.or([
          eb.and([eb('doc_version', '=', version), eb('blocks_json', 'is not', null)]),
          eb.and([eb('result_version', '=', version), eb('result_blocks_json', 'is not', null)]),
        ]),
      )
      .limit(1)
      .executeTakeFirst();
    return row !== undefined;
  }

  return { read, versions, digestAt, holdsDigest };
}
