import type { Db } from '../../storage/schema.ts';
import { effectiveRole } from '../policies/artifacts.ts';
import { automationFor } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';

/**
 * What the activity history names: the objects a call touched, as titles and names the reader can
 * open now (anything else reads as "a document you can't open", never as its id or title), and
 * what each call came through (an app, a token, the command line, an agent).
 */

export interface NamedTarget {
  id: string;
  /** `document`, `page`, `table`, `automation`, … */
  kind: string;
  label: string;
  /** Whether the reader can open it (the app links it then). */
  open: boolean;
}

const KINDS: Record<string, [string, string]> = {
  doc: ['document', 'a document you can’t open'],
  pg: ['page', 'a page you can’t open'],
  tbl: ['table', 'a table you can’t open'],
  aut: ['automation', 'an automation you can’t open'],
};

/** Kinds of ids named in words only (nothing of theirs is shown). */
const OTHER: Record<string, string> = {
  thr: 'a comment thread',
  cmt: 'a comment',
  run: 'a run',
  fv: 'a draft of an automation',
  apr: 'an approval',
  msg: 'a message',
  cnv: 'a conversation',
  ver: 'a version',
  pod: 'a pod',
};

export async function namedTargets(on: Db, actor: Actor, ids: string[]): Promise<Map<string, NamedTarget>> {
  const named = new Map<string, NamedTarget>();
  const artifactIds = ids.filter((id) => ['doc', 'pg', 'tbl'].includes(id.split('_', 1)[0] as string));
  const artifacts =
    artifactIds.length === 0
      ? []
      : await on
          .selectFrom('artifacts')
          .selectAll()
          .where('id', 'in', artifactIds)
          .where('workspace_id', '=', actor.workspaceId)
          .execute();
  for (const id of ids) {
    const prefix = id.split('_', 1)[0] as string;
    const kind = KINDS[prefix];
    if (kind && prefix !== 'aut') {
      const artifact = artifacts.find((a) => a.id === id);
      const role = artifact ? await effectiveRole(on, actor.personId, artifact) : null;
      named.set(
        id,
        artifact && role
          ? { id, kind: kind[0], label: artifact.title, open: true }
          : { id, kind: kind[0], label: kind[1], open: false },
      );
    } else if (kind) {
      const access = await automationFor(on, actor, id).catch(() => undefined);
      named.set(
        id,
        access
          ? { id, kind: kind[0], label: access.row.name, open: true }
          : { id, kind: kind[0], label: kind[1], open: false },
      );
    } else {
      named.set(id, { id, kind: prefix, label: OTHER[prefix] ?? 'something else', open: false });
    }
  }
  return named;
}

/** What a call came through, in words: `via Claude`, `via token “Laptop scripts”`. */
export interface ViaName {
  /** The filter value: `oauth:<client id>`, `token:<token id>`, `local`, `agent:<name>`, `unknown`. */
  key: string;
  label: string;
}

export async function viaNames(
  on: Db,
  actor: Actor,
  rows: { via_kind: string | null; via_id: string | null; agent: string | null }[],
): Promise<(row: { via_kind: string | null; via_id: string | null; agent: string | null }) => ViaName> {
  const tokenIds = [...new Set(rows.filter((r) => r.via_kind === 'token' && r.via_id).map((r) => r.via_id!))];
  const tokens =
    tokenIds.length === 0
      ? []
      : await on
          .selectFrom('tokens')
          .select(['id', 'name'])
          .where('id', 'in', tokenIds)
          .where('person_id', '=', actor.personId)
          .execute();
  const clientIds = [
    ...new Set(rows.filter((r) => r.via_kind === 'oauth' && r.via_id).map((r) => r.via_id!)),
  ];
  const apps = new Map<string, string>();
  if (clientIds.length > 0) {
    // The name the person read when they allowed the app, else the client's registered name.
    const grants = await on
      .selectFrom('oauth_records')
      .select(['client_id', 'label'])
      .where('model', '=', 'Grant')
      .where('account_id', '=', actor.personId)
      .where('client_id', 'in', clientIds)
      .execute();
    for (const r of grants) {
      const label = r.label ? (JSON.parse(r.label) as { client_name?: string }) : undefined;
      if (r.client_id && label?.client_name) apps.set(r.client_id, label.client_name);
    }
    const clients = await on
      .selectFrom('oauth_records')
      .select(['id', 'payload'])
      .where('model', '=', 'Client')
      .where('id', 'in', clientIds)
      .execute();
    for (const c of clients) {
      const name = (JSON.parse(c.payload) as { client_name?: unknown }).client_name;
      if (!apps.has(c.id) && typeof name === 'string') apps.set(c.id, name);
    }
  }
  return (row) => {
    if (row.agent) return { key: `agent:${row.agent}`, label: `@${row.agent}` };
    if (row.via_kind === 'local') return { key: 'local', label: 'the command line' };
    if (row.via_kind === 'token' && row.via_id) {
      const token = tokens.find((t) => t.id === row.via_id);
      const label = token
        ? token.name
          ? `token “${token.name}”`
          : `an unnamed token (…${token.id.slice(-6)})`
        : 'a token since revoked';
      return { key: `token:${row.via_id}`, label };
    }
    if (row.via_kind === 'oauth' && row.via_id) {
      return { key: `oauth:${row.via_id}`, label: apps.get(row.via_id) ?? 'an app since disconnected' };
    }
    return { key: 'unknown', label: 'an app' };
  };
}
