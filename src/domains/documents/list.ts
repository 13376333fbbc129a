import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { ExpressionBuilder } from 'kysely';
import type { DocumentRow } from '../../contract/documents.ts';
import { invalid } from '../../errors.ts';
import type { Database } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';
import type { Actor } from '../workspace/actor.ts';
import { conversationFor, podFor, rolesFor, type Artifact } from '../policies/artifacts.ts';
import { artifactText } from '../workspace/artifact-text.ts';
import { sharedSecret } from '../workspace/settings.ts';
import { clampNumber } from './read.ts';

export const LIST_LIMIT = 50;
/** The listing over all of a person's pods reads at most this many pods. */
export const POD_LISTING_MAX = 50;

export interface ListInput {
  scope?: unknown;
  conversation_id?: unknown;
  pod_id?: unknown;
  query?: unknown;
  cursor?: unknown;
  include_archived?: unknown;
  limit?: unknown;
}

export type { DocumentRow };

type Listing =
  | { kind: 'mine' | 'shared' | 'org' | 'merged' }
  | { kind: 'pod'; podId: string }
  | { kind: 'pods' }
  | { kind: 'conversation'; conversationId: string };

const given = (v: unknown) => v !== undefined && v !== null && v !== '';

interface CursorBody {
  u: number;
  i: string;
  f: string;
}

export function lister(deps: Deps) {
  const { db } = deps;
  let secret: Promise<Buffer> | undefined;
  const cursorSecret = () => (secret ??= sharedSecret(db, 'list-cursors'));

  /** What a cursor is bound to: the person and every argument that shapes the listing. */
  function fingerprint(actor: Actor, listing: Listing, query: string, includeArchived: boolean): string {
    const shape = JSON.stringify([actor.personId, listing, query, includeArchived]);
    return createHash('sha256').update(shape).digest('base64url').slice(0, 16);
  }

  async function encodeCursor(body: CursorBody): Promise<string> {
    const payload = Buffer.from(JSON.stringify(body)).toString('base64url');
    const mac = createHmac('sha256', await cursorSecret())
      .update(payload)
      .digest('base64url')
      .slice(0, 22);
    return `${payload}.${mac}`;
  }

  async function decodeCursor(cursor: unknown, expect: string): Promise<CursorBody> {
    const bad = () =>
      invalid('cursor is not one that list_documents gave out; call list_documents again without cursor');
    if (typeof cursor !== 'string') throw bad();
    const [payload, mac] = cursor.split('.');
    if (!payload || !mac) throw bad();
    const want = Buffer.from(
      createHmac('sha256', await cursorSecret())
        .update(payload)
        .digest('base64url')
        .slice(0, 22),
    );
    const got = Buffer.from(mac);
    if (want.length !== got.length || !timingSafeEqual(want, got)) throw bad();
    let body: CursorBody;
    try {
      body = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as CursorBody;
    } catch {
      throw bad();
    }
    if (body.f !== expect) {
      throw invalid(
        'that cursor belongs to another listing (another scope, pod_id, query, include_archived or person); call list_documents again without cursor',
      );
    }
    return body;
  }

  async function selectListing(actor: Actor, input: ListInput): Promise<Listing> {
    // An empty scope is a wrong scope, not a missing one; empty ids read as not given.
    const hasScope = input.scope !== undefined && input.scope !== null;
    const selectors = [hasScope, given(input.conversation_id), given(input.pod_id)].filter(Boolean).length;
    if (selectors > 1) throw invalid('Pass only one of conversation_id, pod_id or scope');
    if (hasScope) {
      const scope = input.scope;
      if (scope === 'mine' || scope === 'shared' || scope === 'org') return { kind: scope };
      if (scope === 'pod') return { kind: 'pods' };
      throw invalid('scope must be mine, shared, pod or org');
    }
    if (given(input.pod_id)) return { kind: 'pod', podId: (await podFor(db, actor, input.pod_id)).id };
    if (given(input.conversation_id)) {
      return {
        kind: 'conversation',
        conversationId: (await conversationFor(db, actor, input.conversation_id)).id,
      };
    }
    return { kind: 'merged' };
  }

  /** Everything the person holds a role on without owning it. */
  function sharedWith(personId: string) {
    return (eb: ExpressionBuilder<Database, 'artifacts'>) =>
      eb.and([
        eb('owner_id', '!=', personId),
        eb.or([
          eb('scope', '=', 'org'),
          eb(
            'id',
            'in',
            eb.selectFrom('artifact_roles').select('artifact_id').where('person_id', '=', personId),
          ),
          eb('pod_id', 'in', eb.selectFrom('pod_members').select('pod_id').where('person_id', '=', personId)),
          eb(
            'conversation_id',
            'in',
            eb
              .selectFrom('conversation_participants')
              .select('conversation_id')
              .where('person_id', '=', personId),
          ),
        ]),
      ]);
  }

  /**
   * `pageAll` pages the listing without a scope too (the app's document list reads everything a
   * person can open that way; the tool's unscoped listing stays one page, as the spec has it).
   */
  async function list(actor: Actor, input: ListInput, options: { pageAll?: boolean } = {}) {
    const listing = await selectListing(actor, input);
    if (input.query !== undefined && input.query !== null && typeof input.query !== 'string') {
      throw invalid('query must be a string');
    }
    if (
      input.include_archived !== undefined &&
      input.include_archived !== null &&
      typeof input.include_archived !== 'boolean'
    ) {
      throw invalid('include_archived must be a boolean');
    }
    const query = typeof input.query === 'string' ? input.query.trim() : '';
    const includeArchived = input.include_archived === true;
    const limit = clampNumber(input.limit, 1, LIST_LIMIT, LIST_LIMIT);
    const paged =
      listing.kind === 'mine' ||
      listing.kind === 'shared' ||
      listing.kind === 'org' ||
      listing.kind === 'pod' ||
      (listing.kind === 'merged' && options.pageAll === true);
    const print = fingerprint(actor, listing, query, includeArchived);
    const after = given(input.cursor) ? await decodeCursor(input.cursor, print) : undefined;
    if (after && !paged)
      throw invalid('this listing is not paged, so it takes no cursor; narrow it with pod_id or a scope');

    let podsCut = false;
    let q = db.selectFrom('artifacts').selectAll().where('workspace_id', '=', actor.workspaceId);
    if (!includeArchived) q = q.where('status', '=', 'active');
    switch (listing.kind) {
      case 'mine':
        q = q.where('owner_id', '=', actor.personId);
        break;
      case 'shared':
        q = q.where(sharedWith(actor.personId));
        break;
      case 'org':
        q = q.where('scope', '=', 'org');
        break;
      case 'pod':
        q = q.where('pod_id', '=', listing.podId);
        break;
      case 'conversation':
        q = q.where('conversation_id', '=', listing.conversationId);
        break;
      case 'pods': {
        const pods = await db
          .selectFrom('pod_members')
          .innerJoin('pods', 'pods.id', 'pod_members.pod_id')
          .select('pods.id')
          .where('pod_members.person_id', '=', actor.personId)
          .where('pods.workspace_id', '=', actor.workspaceId)
          .orderBy('pods.id')
          .limit(POD_LISTING_MAX + 1)
          .execute();
        podsCut = pods.length > POD_LISTING_MAX;
        const ids = pods.slice(0, POD_LISTING_MAX).map((p) => p.id);
        q = ids.length ? q.where('pod_id', 'in', ids) : q.where('id', '=', '');
        break;
      }
      case 'merged':
        q = q.where((eb) => eb.or([eb('owner_id', '=', actor.personId), sharedWith(actor.personId)(eb)]));
        break;
    }
    if (after) {
      q = q.where((eb) =>
        eb.or([
          eb('updated_at', '<', after.u),
          eb.and([eb('updated_at', '=', after.u), eb('id', '<', after.i)]),
        ]),
      );
    }
    const read = await q
      .orderBy('updated_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit + 1)
      .execute();
    const more = read.length > limit;
    const page = read.slice(0, limit);
    const last = page.at(-1);
    const next =
      paged && more && last ? await encodeCursor({ u: last.updated_at, i: last.id, f: print }) : null;

    const needle = query.toLowerCase();
    const matched = needle
      ? page.filter(
          (a) =>
            a.title.toLowerCase().includes(needle) || (artifactText(a) ?? '').toLowerCase().includes(needle),
        )
      : page;
    const rows = await toRows(actor, matched);
    return { documents: rows, next_cursor: next, truncated: paged ? next !== null : more || podsCut };
  }

  async function toRows(actor: Actor, artifacts: Artifact[]): Promise<DocumentRow[]> {
    const roles = await rolesFor(db, actor.personId, artifacts);
    const owners = [...new Set(artifacts.map((a) => a.owner_id))];
    const names = owners.length
      ? new Map(
          (await db.selectFrom('people').select(['id', 'name']).where('id', 'in', owners).execute()).map(
            (p) => [p.id, p.name],
          ),
        )
      : new Map<string, string>();
    const rows: DocumentRow[] = [];
    for (const a of artifacts) {
      const role = roles.get(a.id);
      if (!role) continue;
      const text = artifactText(a);
      const owner = names.get(a.owner_id);
      rows.push({
        document_id: a.id,
        title: a.title,
        type: a.type as DocumentRow['type'],
        status: a.status as DocumentRow['status'],
        ...(text !== null ? { characters: text.length } : {}),
        created_at: a.created_at,
        last_edited_at: a.updated_at,
        version: a.version,
        ...(a.conversation_id ? { conversation_id: a.conversation_id } : {}),
        ...(a.pod_id ? { pod_id: a.pod_id } : {}),
        scope: a.scope as DocumentRow['scope'],
        role,
        ...(owner ? { owner_label: owner } : {}),
      });
    }
    return rows;
  }

  return { list };
}
