import type { Insertable } from 'kysely';
import { newId } from '../../ids.ts';
import { log } from '../../observability/log.ts';
import type { ActivityTable } from '../../storage/schema.ts';
import type { Deps } from '../deps.ts';
import { rolesFor } from '../policies/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import { namedTargets, viaNames } from './names.ts';

export interface ActivityEntry {
  tool: string;
  targets: string[];
  outcome: 'ok' | 'error';
  errorCode?: string | undefined;
  durationMs: number;
  /** The agent that made the call for the person, when one did. */
  agent?: string | undefined;
}

export interface ActivityFilter {
  tool?: string | undefined;
  outcome?: 'ok' | 'error' | undefined;
  before?: string | undefined;
  /** What the calls came through, as `ViaName.key`: `oauth:<client>`, `token:<id>`, `local`, `agent:<name>`. */
  via?: string | undefined;
}

/** A `via` filter as the columns it narrows. */
function viaWhere(via: string): { via_kind?: string; via_id?: string; agent?: string } {
  if (via === 'local') return { via_kind: 'local' };
  const [kind, ...rest] = via.split(':');
  const id = rest.join(':');
  if (kind === 'agent') return { agent: id };
  if ((kind === 'token' || kind === 'oauth') && id) return { via_kind: kind, via_id: id };
  return { via_kind: '-' };
}

const ID_FIELD = /(^|_)id$/;

/** Object ids named in a call's arguments and result (`document_id`, `thread_id`, …), once each. */
export function targetIds(...sources: unknown[]): string[] {
  const ids = new Set<string>();
  for (const source of sources) {
    if (!source || typeof source !== 'object') continue;
    for (const [key, value] of Object.entries(source)) {
      if (ID_FIELD.test(key) && typeof value === 'string' && value.length > 0 && value.length <= 100)
        ids.add(value);
    }
  }
  return [...ids];
}

type ActivityRow = Insertable<ActivityTable>;

/** Rows written by one insert at most (well under SQLite's limit on statement parameters). */
const MAX_BATCH = 500;

/** How long a finished call's row may wait for others to share its insert. */
const GATHER_MS = 20;

export function activityService(deps: Deps) {
  const { db } = deps;
  let pending: ActivityRow[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let writing: Promise<void> = Promise.resolve();

  /** Stores what has gathered, in inserts of at most MAX_BATCH rows, after the writes before it. */
  function flush(): Promise<void> {
    if (timer) clearTimeout(timer);
    timer = undefined;
    const rows = pending;
    pending = [];
    if (rows.length === 0) return writing;
    writing = writing.then(async () => {
      for (let i = 0; i < rows.length; i += MAX_BATCH) {
        try {
          await db
            .insertInto('activity')
            .values(rows.slice(i, i + MAX_BATCH))
            .execute();
        } catch (error) {
          log.error({ err: error, rows: Math.min(MAX_BATCH, rows.length - i) }, 'could not record activity');
        }
      }
    });
    return writing;
  }

  /**
   * Notes a call in the person's history. The row is written off the call's path: rows that
   * gather within GATHER_MS (or MAX_BATCH of them) share one insert, and anything that reads the
   * history (`list`) or closes the service writes what is pending first.
   */
  function record(actor: Actor, entry: ActivityEntry): void {
    pending.push({
      id: newId('act'),
      workspace_id: actor.workspaceId,
      person_id: actor.personId,
      tool: entry.tool,
      targets_json: JSON.stringify(entry.targets),
      outcome: entry.outcome,
      error_code: entry.errorCode ?? null,
      duration_ms: Math.round(entry.durationMs),
      created_at: Date.now(),
      agent: entry.agent ?? null,
      via_kind: actor.via?.kind ?? null,
      via_id: actor.via?.id ?? null,
    });
    if (pending.length >= MAX_BATCH) void flush();
    else timer ??= setTimeout(() => void flush(), GATHER_MS);
  }

  /**
   * The person's tool calls, newest first; `tool` and `outcome` narrow them, `before` (an entry id)
   * continues after the last one shown.
   */
  async function list(actor: Actor, limit = 100, filter: ActivityFilter = {}) {
    await flush();
    const via = filter.via ? viaWhere(filter.via) : {};
    const rows = await db
      .selectFrom('activity')
      .selectAll()
      .where('person_id', '=', actor.personId)
      .$if(filter.tool !== undefined, (q) => q.where('tool', '=', filter.tool as string))
      .$if(filter.outcome !== undefined, (q) => q.where('outcome', '=', filter.outcome as string))
      .$if(filter.before !== undefined, (q) => q.where('id', '<', filter.before as string))
      .$if(via.via_kind !== undefined, (q) => q.where('via_kind', '=', via.via_kind as string))
      .$if(via.via_id !== undefined, (q) => q.where('via_id', '=', via.via_id as string))
      .$if(via.agent !== undefined, (q) => q.where('agent', '=', via.agent as string))
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(1, limit), 500))
      .execute();
    const targets = rows.map((r) => JSON.parse(r.targets_json) as string[]);
    const names = await namedTargets(db, actor, [...new Set(targets.flat())]);
    const viaOf = await viaNames(db, actor, rows);
    return rows.map((r, i) => ({
      id: r.id,
      tool: r.tool,
      targets: targets[i] as string[],
      named: (targets[i] as string[]).flatMap((id) => {
        const n = names.get(id);
        return n ? [n] : [];
      }),
      outcome: r.outcome,
      ...(r.error_code ? { error_code: r.error_code } : {}),
      duration_ms: r.duration_ms,
      at: r.created_at,
      ...(r.agent ? { agent: r.agent } : {}),
      via: viaOf(r),
    }));
  }

  /** What the person's calls came through (newest 2,000 calls), for the filter by app. */
  async function vias(actor: Actor) {
    const rows = await db
      .selectFrom(
        db
          .selectFrom('activity')
          .select(['via_kind', 'via_id', 'agent'])
          .where('person_id', '=', actor.personId)
          .orderBy('id', 'desc')
          .limit(2000)
          .as('recent'),
      )
      .select(['via_kind', 'via_id', 'agent'])
      .distinct()
      .execute();
    const viaOf = await viaNames(db, actor, rows);
    const seen = new Map<string, string>();
    for (const r of rows) {
      const v = viaOf(r);
      if (v.key !== 'unknown') seen.set(v.key, v.label);
    }
    return [...seen].map(([key, label]) => ({ key, label })).sort((a, b) => a.label.localeCompare(b.label));
  }

  return { record, list, vias, flush };
}

export function notificationsService(deps: Deps) {
  async function list(actor: Actor, limit = 100) {
    const rows = await deps.db
      .selectFrom('notifications')
      .selectAll()
      .where('person_id', '=', actor.personId)
      .orderBy('id', 'desc')
      .limit(Math.min(Math.max(1, limit), 500))
      .execute();
    // A notice about an artifact the person can no longer open (its sharing changed) is not shown:
    // it would quote what they may no longer read.
    const artifactIds = [...new Set(rows.flatMap((r) => (r.artifact_id ? [r.artifact_id] : [])))];
    const artifacts =
      artifactIds.length === 0
        ? []
        : await deps.db
            .selectFrom('artifacts')
            .selectAll()
            .where('id', 'in', artifactIds)
            .where('workspace_id', '=', actor.workspaceId)
            .execute();
    const roles = await rolesFor(deps.db, actor.personId, artifacts);
    const visible = rows.filter((r) => !r.artifact_id || roles.get(r.artifact_id));
    return visible.map((r) => ({
      id: r.id,
      kind: r.kind,
      body: r.body,
      ...(r.artifact_id ? { artifact_id: r.artifact_id } : {}),
      ...(r.thread_id ? { thread_id: r.thread_id } : {}),
      // Ids only, as stored when it was sent: the automation's page says whether it can be opened.
      ...(r.automation_id ? { automation_id: r.automation_id } : {}),
      ...(r.automation_id && r.run_id ? { run_id: r.run_id } : {}),
      ...(r.approval_id ? { approval_id: r.approval_id } : {}),
      read: r.read === 1,
      at: r.created_at,
    }));
  }
  /** Marks the person's notifications read: the ones named, or all of them. */
  async function markRead(actor: Actor, ids: string[] | 'all') {
    if (ids !== 'all' && ids.length === 0) return;
    await deps.db
      .updateTable('notifications')
      .set({ read: 1 })
      .where('person_id', '=', actor.personId)
      .where('read', '=', 0)
      .$if(ids !== 'all', (q) => q.where('id', 'in', ids as string[]))
      .execute();
  }
  /** How many of the person's notifications are unread. */
  async function unread(actor: Actor): Promise<number> {
    const row = await deps.db
      .selectFrom('notifications')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('person_id', '=', actor.personId)
      .where('read', '=', 0)
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }
  return { list, markRead, unread };
}
