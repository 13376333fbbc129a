import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { Deps, WriteOptions } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { artifactFor, requireRole, type Artifact, type ArtifactAccess } from '../policies/artifacts.ts';
import {
  insertArtifact,
  personName,
  postArtifactCard,
  requireTitle,
  resolvePlacement,
  type PlacementInput,
} from '../workspace/artifacts.ts';
import { lineDiff } from './diff.ts';
import { hasActiveContent } from './html-scan.ts';
import { versionText } from '../../storage/checkpoints.ts';
import { packText, unpackText } from '../../storage/packed.ts';

export interface PageWriteResult {
  page_id: string;
  version: number;
  byte_size: number;
  warnings: string[];
}

export interface CreatePageInput extends PlacementInput {
  title?: unknown;
  html?: unknown;
}

function requireHtml(html: unknown): string {
  if (typeof html !== 'string' || html.trim() === '') throw invalid('html must be a non-empty string');
  return html;
}

function requireExpected(expected: unknown): number {
  if (typeof expected !== 'number' || !Number.isSafeInteger(expected) || expected < 0) {
    throw invalid('expected_version must be a non-negative integer');
  }
  return expected;
}

function describe(html: string) {
  return {
    byte_size: Buffer.byteLength(html, 'utf8'),
    warnings: hasActiveContent(html) ? ['script_stripped'] : [],
  };
}

/** Refuses artifacts that are not HTML pages, naming the tools that fit them. */
function requirePage(artifact: Artifact, writing: boolean): void {
  if (artifact.type === 'html_app') return;
  if (artifact.type === 'document') {
    throw new DomainError(
      'wrong_type',
      writing
        ? 'That artifact is a document, not an HTML page. Use edit_document to change it.'
        : 'That artifact is a document, not an HTML page. Use read_document to read it.',
      { prefixed: false },
    );
  }
  throw new DomainError(
    'wrong_type',
    writing
      ? 'That artifact is a table, and tables cannot be edited with these tools.'
      : 'That artifact is a table, not an HTML page. Use read_document to read its markdown.',
    { prefixed: false },
  );
}

export function pagesService(deps: Deps) {
  const { db } = deps;

  async function create(actor: Actor, input: CreatePageInput) {
    const title = requireTitle(input.title);
    const html = requireHtml(input.html);
    const artifact = await db.transaction().execute(async (trx) => {
      const placement = await resolvePlacement(trx, actor, input);
      const created = await insertArtifact(trx, actor.workspaceId, {
        type: 'html_app',
        title,
        ownerId: actor.personId,
        placement,
        content: html,
        version: 1,
      });
      if (created.conversation_id)
        await postArtifactCard(trx, actor, created, await personName(trx, actor.personId));
      await deps.emit(trx, {
        type: 'page.written',
        workspaceId: actor.workspaceId,
        actorId: actor.personId,
        artifactId: created.id,
        data: { page_id: created.id, version: 1, created: true },
      });
      return created;
    });
    return { page_id: artifact.id, title, version: 1, ...describe(html) };
  }

  async function read(actor: Actor, pageId: unknown) {
    const { artifact, role } = await artifactFor(db, actor, pageId);
    requirePage(artifact, false);
    if (artifact.content === null)
      throw new DomainError('no_content', 'That page has no content yet.', { prefixed: false });
    return {
      page_id: artifact.id,
      title: artifact.title,
      html: artifact.content,
      version: artifact.version,
      byte_size: Buffer.byteLength(artifact.content, 'utf8'),
      role,
      archived: artifact.status === 'archived',
    };
  }

  async function write(
    actor: Actor,
    input: { page_id?: unknown; html?: unknown; expected_version?: unknown },
    options: WriteOptions = {},
  ) {
    const expected = requireExpected(input.expected_version);
    // Type and role are checked before the html so a wrong target is named first.
    const before = await artifactFor(db, actor, input.page_id);
    requirePage(before.artifact, true);
    requireRole(before, 'editor');
    const html = requireHtml(input.html);
    return commit(
      actor,
      before.artifact.id,
      html,
      expected,
      { reason: 'agent_edit', instruction: 'write_page' },
      options,
    );
  }

  /**
   * A person restores an earlier version: its HTML becomes the next version (a write like any
   * other, under the same version check), and the version it replaces is kept as a `restore` row.
   */
  async function restore(
    actor: Actor,
    input: { page_id?: unknown; version_id?: unknown; expected_version?: unknown },
  ) {
    const expected = requireExpected(input.expected_version);
    const access = await artifactFor(db, actor, input.page_id);
    requirePage(access.artifact, true);
    requireRole(access, 'editor');
    const version = await versionText(db, access.artifact.id, input.version_id);
    if (!version) throw invalid('That version is not one of this page’s versions');
    return commit(actor, access.artifact.id, version.text, expected, {
      reason: 'restore',
      instruction: `restored version ${version.docVersion}`,
    });
  }

  /** Stores `html` as the version after `expected`, keeping the source it replaces as a version row. */
  async function commit(
    actor: Actor,
    pageId: string,
    html: string,
    expected: number,
    row: { reason: 'agent_edit' | 'restore'; instruction: string },
    options: WriteOptions = {},
  ) {
    const outcome = await db
      .transaction()
      .execute(async (trx): Promise<{ conflict: number } | { version: number }> => {
        const access: ArtifactAccess = await artifactFor(trx, actor, pageId);
        requireRole(access, 'editor');
        const current = access.artifact;
        if (current.version !== expected) return { conflict: current.version };
        const next = expected + 1;
        const updated = await trx
          .updateTable('artifacts')
          .set({ content: html, version: next, updated_at: Date.now() })
          .where('id', '=', current.id)
          .where('version', '=', expected)
          .executeTakeFirst();
        if (Number(updated.numUpdatedRows) !== 1) {
          const now = await trx
            .selectFrom('artifacts')
            .select('version')
            .where('id', '=', current.id)
            .executeTakeFirstOrThrow();
          return { conflict: now.version };
        }
        if (current.content !== null) {
          await trx
            .insertInto('checkpoints')
            .values({
              id: newId('ver'),
              artifact_id: current.id,
              doc_version: current.version,
              reason: row.reason,
              label: null,
              pinned: 0,
              author_id: actor.personId,
              instruction: row.instruction,
              content: packText(current.content),
              kept_json: null,
              created_at: Date.now(),
            })
            .execute();
        }
        await deps.emit(
          trx,
          {
            type: 'page.written',
            workspaceId: actor.workspaceId,
            actorId: actor.personId,
            artifactId: current.id,
            data: { page_id: current.id, version: next },
          },
          options.origin,
        );
        await options.within?.(trx, { page_id: current.id, new_version: next, ...describe(html) });
        return { version: next };
      });

    if ('conflict' in outcome) throw await versionConflict(pageId, expected, outcome.conflict);
    return { page_id: pageId, new_version: outcome.version, ...describe(html) };
  }

  /** The conflict carries what changed between the version the caller read and the current one. */
  async function versionConflict(pageId: string, expected: number, current: number): Promise<DomainError> {
    const data: Record<string, unknown> = {
      error: 'version_conflict',
      page_id: pageId,
      expected_version: expected,
      current_version: current,
    };
    const [then, now] = await Promise.all([
      db
        .selectFrom('checkpoints')
        .select('content')
        .where('artifact_id', '=', pageId)
        .where('doc_version', '=', expected)
        .orderBy('id', 'desc')
        .executeTakeFirst(),
      db.selectFrom('artifacts').select(['content', 'version']).where('id', '=', pageId).executeTakeFirst(),
    ]);
    if (then?.content != null && now?.content != null) {
      const diff = lineDiff(unpackText(then.content), now.content);
      if (diff) {
        data.diff_excerpt = diff.excerpt;
        data.changed_range = diff.changedRange;
      }
    }
    const moved =
      expected < current
        ? `The page moved from version ${expected} to ${current} since your read`
        : `The page is at version ${current}, not ${expected}`;
    return new DomainError(
      'version_conflict',
      `version_conflict: ${moved}. Re-read it with read_page and retry with expected_version ${current}.`,
      { data },
    );
  }

  /** The source of one version, for the pages origin; the signed link that asks is the authority. */
  async function sourceAt(pageId: string, version: number): Promise<{ title: string; html: string } | null> {
    const artifact = await db
      .selectFrom('artifacts')
      .select(['title', 'content', 'version', 'type'])
      .where('id', '=', pageId)
      .executeTakeFirst();
    if (!artifact || artifact.type !== 'html_app') return null;
    if (artifact.version === version)
      return artifact.content === null ? null : { title: artifact.title, html: artifact.content };
    const checkpoint = await db
      .selectFrom('checkpoints')
      .select('content')
      .where('artifact_id', '=', pageId)
      .where('doc_version', '=', version)
      .orderBy('id', 'desc')
      .executeTakeFirst();
    return checkpoint?.content == null
      ? null
      : { title: artifact.title, html: unpackText(checkpoint.content) };
  }

  return { create, read, write, restore, sourceAt };
}

export type PagesService = ReturnType<typeof pagesService>;
