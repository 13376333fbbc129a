import { createHash } from 'node:crypto';
import type * as Y from 'yjs';
import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole, type Artifact } from '../policies/artifacts.ts';
import type { Db } from '../../storage/schema.ts';
import {
  insertArtifact,
  personName,
  postArtifactCard,
  requireTitle,
  resolvePlacement,
  type PlacementInput,
} from '../workspace/artifacts.ts';
import type { Lease } from './lease.ts';
import { blockArray, docFromMarkdown, EMPTY_DIGEST, newBlock, projection, storedDigest } from './model.ts';
import type { DocumentStore } from './store.ts';
import { CONTENT_CAP, normalizeNewlines, splitBlocks } from './text.ts';

/** A retried create_document with the same key within this window returns the original. */
export const IDEMPOTENCY_WINDOW_MS = 10 * 60_000;

export interface CreateDocumentInput extends PlacementInput {
  title?: unknown;
  content_markdown?: unknown;
  idempotency_key?: unknown;
}

/** Thrown inside a create's transaction when another create took its idempotency key first. */
class LostClaim extends Error {}

const hash = (text: string) => createHash('sha256').update(text).digest('hex');

function checkContent(raw: unknown): string {
  if (raw === undefined) return '';
  if (typeof raw !== 'string') throw invalid('content_markdown must be a string');
  const content = normalizeNewlines(raw);
  if (content.length > CONTENT_CAP) {
    throw invalid(
      `content_markdown is ${content.length.toLocaleString('en')} characters; the limit is ${CONTENT_CAP.toLocaleString('en')}. Create the document with the first part, then add the rest with edit_document append. Nothing was created.`,
    );
  }
  return content;
}

export function creator(
  deps: Deps,
  store: DocumentStore,
  acquire: (id: string, holder: string) => Promise<Lease>,
) {
  const { db } = deps;

  /**
   * Stores `doc` as the first content, a checkpointed write by the caller: a row at `from`
   * (whose stored block digest was `before`), then the next version. Returns when the snapshot
   * was stored.
   */
  async function initialFill(
    trx: Db,
    actor: Actor,
    artifactId: string,
    doc: Y.Doc,
    from: number,
    before: string,
  ): Promise<number> {
    const now = Date.now();
    await trx
      .insertInto('checkpoints')
      .values({
        id: newId('ver'),
        artifact_id: artifactId,
        doc_version: from,
        reason: 'agent_edit',
        label: null,
        pinned: 0,
        author_id: actor.personId,
        instruction: 'create_document',
        content: '',
        kept_json: null,
        blocks_json: before,
        result_version: from + 1,
        result_blocks_json: storedDigest(doc),
        created_at: now,
      })
      .execute();
    await trx
      .updateTable('artifacts')
      .set({ content: projection(doc), version: from + 1, updated_at: now })
      .where('id', '=', artifactId)
      .execute();
    return store.saveState(trx, artifactId, doc);
  }

  async function create(actor: Actor, input: CreateDocumentInput, options: WriteOptions = {}) {
    const title = requireTitle(input.title);
    const content = checkContent(input.content_markdown);
    const filled = content.trim() !== '';
    const key = input.idempotency_key;
    if (key !== undefined && (typeof key !== 'string' || key === '' || key.length > 200)) {
      throw invalid('idempotency_key must be a string of 1 to 200 characters');
    }
    if (typeof key === 'string') {
      const retry = await retried(actor, key, content);
      if (retry) return retry;
    }
    const doc = docFromMarkdown(filled ? content : '');
    let made: { artifact: Artifact; storedAt: number };
    try {
      made = await insert(actor, input, title, content, doc, filled, key, options);
    } catch (error) {
      // Another create with this key committed first: this call is its retry.
      if (error instanceof LostClaim && typeof key === 'string') {
        const retry = await retried(actor, key, content);
        if (retry) return retry;
      }
      throw error;
    }
    const { artifact } = made;
    // The document as stored is the one just made: its first use need not read it back.
    store.adopt(artifact.id, doc, made.storedAt, filled ? 1 : undefined);
    return { document_id: artifact.id, title, version: filled ? 1 : 0, deduplicated: false, healed: false };
  }

  async function insert(
    actor: Actor,
    input: CreateDocumentInput,
    title: string,
    content: string,
    doc: Y.Doc,
    filled: boolean,
    key: unknown,
    options: WriteOptions = {},
  ) {
    return db.transaction().execute(async (trx) => {
      const placement = await resolvePlacement(trx, actor, input);
      const made = await insertArtifact(trx, actor.workspaceId, {
        type: 'document',
        title,
        ownerId: actor.personId,
        placement,
        content: '',
        version: 0,
      });
      const storedAt = filled
        ? await initialFill(trx, actor, made.id, doc, 0, EMPTY_DIGEST)
        : await store.saveState(trx, made.id, doc);
      if (typeof key === 'string') {
        // The key is claimed in the same transaction: of creates racing with one key, one wins.
        const now = Date.now();
        const claimed = await trx
          .insertInto('idempotency_keys')
          .values({
            person_id: actor.personId,
            key,
            artifact_id: made.id,
            content_hash: hash(filled ? content : ''),
            created_at: now,
          })
          .onConflict((oc) =>
            oc
              .columns(['person_id', 'key'])
              .doUpdateSet({
                artifact_id: made.id,
                content_hash: hash(filled ? content : ''),
                created_at: now,
              })
              .where('idempotency_keys.created_at', '<', now - IDEMPOTENCY_WINDOW_MS),
          )
          .executeTakeFirst();
        if (Number(claimed.numInsertedOrUpdatedRows ?? 0) === 0) throw new LostClaim();
      }
      if (made.conversation_id)
        await postArtifactCard(trx, actor, made, await personName(trx, actor.personId));
      await deps.emit(
        trx,
        {
          type: 'document.created',
          workspaceId: actor.workspaceId,
          actorId: actor.personId,
          artifactId: made.id,
          data: { document_id: made.id, title },
        },
        options.origin,
      );
      await options.within?.(trx, { document_id: made.id, title, version: filled ? 1 : 0 });
      return { artifact: made, storedAt };
    });
  }

  /**
   * A create repeated with the same key (by the same person, within the window) returns the
   * original; one whose first attempt left the document empty fills it now.
   */
  async function retried(actor: Actor, key: string, content: string) {
    const row = await db
      .selectFrom('idempotency_keys')
      .innerJoin('artifacts', 'artifacts.id', 'idempotency_keys.artifact_id')
      .select([
        'artifacts.id',
        'artifacts.title',
        'idempotency_keys.content_hash',
        'idempotency_keys.created_at',
      ])
      .where('idempotency_keys.person_id', '=', actor.personId)
      .where('idempotency_keys.key', '=', key)
      .executeTakeFirst();
    if (!row || row.created_at < Date.now() - IDEMPOTENCY_WINDOW_MS) return null;
    const base = { document_id: row.id, title: row.title, deduplicated: true };
    const filled = content.trim() !== '';
    const live = await store.open(row.id);
    await store.refresh(live);
    const current = projection(live.doc);
    if (current.trim() === '' && filled) {
      // Filling is a write: the caller must still be able to edit it, and it must not be archived.
      requireRole(await artifactFor(db, actor, row.id), 'editor');
      let lease: Lease;
      try {
        lease = await acquire(row.id, newId('lease'));
      } catch (error) {
        throw conflict(row.id, error);
      }
      try {
        await store.refresh(live);
        if (projection(live.doc).trim() !== '') throw conflict(row.id);
        const blocks = blockArray(live.doc);
        const before = storedDigest(live.doc);
        live.doc.transact(
          () => blocks.insert(blocks.length, splitBlocks(content).map(newBlock)),
          store.agentOrigin,
        );
        const stored = await db.transaction().execute(async (trx) => {
          const { version: from } = await trx
            .selectFrom('artifacts')
            .select('version')
            .where('id', '=', row.id)
            .executeTakeFirstOrThrow();
          const storedAt = await initialFill(trx, actor, row.id, live.doc, from, before);
          await trx
            .updateTable('idempotency_keys')
            .set({ content_hash: hash(content) })
            .where('person_id', '=', actor.personId)
            .where('key', '=', key)
            .execute();
          return { version: from + 1, storedAt };
        });
        // The fill was stored as a whole snapshot; its changes need no entry in the log.
        live.unsaved.length = 0;
        live.storedAt = stored.storedAt;
        return { ...base, version: stored.version, healed: true };
      } finally {
        await lease.release();
      }
    }
    // The original holds what this retry would have written: confirmed.
    if (hash(filled ? content : '') === row.content_hash) return { ...base, healed: false };
    throw conflict(row.id);
  }

  function conflict(documentId: string, cause?: unknown): DomainError {
    const seconds =
      cause instanceof DomainError ? (cause.data?.retry_after_seconds as number | undefined) : undefined;
    return new DomainError(
      'write_conflict',
      seconds
        ? `write_conflict: the first attempt with this idempotency_key is still writing document ${documentId}; retry in ${seconds} s`
        : `write_conflict: document ${documentId} was already created with this idempotency_key and different initial content, so this retry cannot confirm it; read it with read_document`,
      {
        data: {
          error: 'write_conflict',
          document_id: documentId,
          ...(seconds ? { retry_after_seconds: seconds } : {}),
        },
      },
    );
  }

  return { create };
}
