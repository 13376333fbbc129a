import type { Insertable, Selectable } from 'kysely';
import { compiledRow } from '../../storage/compiled.ts';
import { DomainError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { AutomationTable, EventOutboxTable, Db } from '../../storage/schema.ts';
import { artifactFor } from '../policies/artifacts.ts';
import { SCOPES } from '../workspace/actor.ts';
import { queueRun } from './runs.ts';

type AutomationRow = Selectable<AutomationTable>;
type OutboxRow = Selectable<EventOutboxTable>;

/** Events caused by runs start further runs only this many levels deep. */
export const MAX_EVENT_DEPTH = 3;

/**
 * Delivered events are kept this long, so a signed delivery sent again (its id or its body) is
 * still recognised: a week is as long as any GitHub redelivers (3 days; Enterprise Server 7).
 */
export const OUTBOX_KEEP_MS = 7 * 24 * 3600 * 1000;

/** The run whose write caused an event: it never triggers its own automation, and hops are counted. */
export interface EventOrigin {
  automationId: string;
  depth: number;
}

export interface IncomingEvent {
  provider: string;
  event: string;
  data: unknown;
  /** GitHub only: the webhook's action and repository (owner/name). */
  action?: string | undefined;
  repo?: string | undefined;
  /** A signed delivery's own id: the same id is accepted once per workspace and provider. */
  delivery_id?: string | undefined;
  /**
   * The SHA-256 (hex) of a delivery whose signature covers its body only (GitHub's): the same
   * body is accepted once per workspace and provider, whatever its delivery id.
   */
  body_sha256?: string | undefined;
}

export interface RecordedEvent extends IncomingEvent {
  workspaceId: string;
  /** The artifact a workspace event is about: only automations whose person can open it hear of it. */
  artifactId?: string | undefined;
  actorId?: string | undefined;
  origin?: EventOrigin | undefined;
}

/**
 * Writes an event to the outbox in the caller's transaction (the write that caused it), so it is
 * delivered exactly when that write commits, by whichever engine runs. Returns its id, or null for
 * a delivery id, or a signed body, seen before.
 */
export async function recordEvent(trx: Db, event: RecordedEvent): Promise<string | null> {
  const id = newId('evt');
  const row: EventRow = {
    id,
    workspace_id: event.workspaceId,
    provider: event.provider,
    event: event.event,
    action: event.action ?? null,
    repo: event.repo ?? null,
    artifact_id: event.artifactId ?? null,
    actor_id: event.actorId ?? null,
    source_automation_id: event.origin?.automationId ?? null,
    depth: event.origin?.depth ?? 0,
    delivery_key:
      event.delivery_id === undefined ? null : `${event.workspaceId}:${event.provider}:${event.delivery_id}`,
    body_key:
      event.body_sha256 === undefined ? null : `${event.workspaceId}:${event.provider}:${event.body_sha256}`,
    created_at: Date.now(),
    delivered_at: null,
    data_json: JSON.stringify(event.data ?? {}),
  };
  const inserted = await insertEvent(trx, row);
  return Number(inserted.numAffectedRows ?? 0n) === 1 ? id : null;
}

/** The columns of an event's outbox row: the row names each, and no other. */
const EVENT_COLUMNS = [
  'id',
  'workspace_id',
  'provider',
  'event',
  'action',
  'repo',
  'artifact_id',
  'actor_id',
  'source_automation_id',
  'depth',
  'delivery_key',
  'body_key',
  'created_at',
  'delivered_at',
  'data_json',
] as const;
type EventRow = Pick<Insertable<EventOutboxTable>, (typeof EVENT_COLUMNS)[number]>;

/** An event's outbox row; a delivery id or a body seen before (either unique key) records nothing. */
const insertEvent = compiledRow(EVENT_COLUMNS, (db, row: EventRow) =>
  db
    .insertInto('event_outbox')
    .values(row)
    .onConflict((oc) => oc.doNothing()),
);

export const duplicateDelivery = () =>
  new DomainError('duplicate_delivery', 'This delivery was received before; it starts nothing again.');

/** Events not delivered yet, oldest first. */
export async function pendingEvents(db: Db, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('event_outbox')
    .select('id')
    .where('delivered_at', 'is', null)
    .orderBy('id')
    .limit(limit)
    .execute();
  return rows.map((r) => r.id);
}

/** Drops delivered events older than OUTBOX_KEEP_MS. */
export async function pruneEvents(db: Db, now = Date.now()): Promise<void> {
  await db
    .deleteFrom('event_outbox')
    .where('delivered_at', '<', now - OUTBOX_KEEP_MS)
    .execute();
}

function matches(automation: AutomationRow, event: OutboxRow): boolean {
  const t = JSON.parse(automation.trigger_json) as Record<string, unknown>;
  if (automation.trigger_kind === 'connector_event')
    return t.provider === event.provider && t.event === event.event;
  if (t.event !== event.event || String(t.repo).toLowerCase() !== String(event.repo).toLowerCase())
    return false;
  const actions = (t.actions as string[] | undefined) ?? [];
  return actions.length === 0 || actions.includes(event.action ?? '');
}

/** Whether the person an automation acts as may open what the event is about. */
async function mayHear(trx: Db, automation: AutomationRow, event: OutboxRow): Promise<boolean> {
  if (event.artifact_id === null) return true;
  try {
    await artifactFor(
      trx,
      { personId: automation.acting_id, workspaceId: automation.workspace_id, scopes: new Set(SCOPES) },
      event.artifact_id,
    );
    return true;
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found') return false;
    throw error;
  }
}

/**
 * Delivers one outbox event: in one transaction it claims the event (so of several engines exactly
 * one delivers it) and queues a run for each matching automation whose person may open what the
 * event is about. Returns the runs queued.
 */
export async function deliverEvent(db: Db, eventId: string): Promise<string[]> {
  const deliver = async (trx: Db): Promise<string[]> => {
    const now = Date.now();
    const claimed = await trx
      .updateTable('event_outbox')
      .set({ delivered_at: now })
      .where('id', '=', eventId)
      .where('delivered_at', 'is', null)
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return [];
    const event = await trx
      .selectFrom('event_outbox')
      .selectAll()
      .where('id', '=', eventId)
      .executeTakeFirstOrThrow();
    if (event.depth >= MAX_EVENT_DEPTH) return [];
    const kind = event.provider === 'github' && event.repo !== null ? 'github_event' : 'connector_event';
    const candidates = await trx
      .selectFrom('automations')
      .selectAll()
      .where('workspace_id', '=', event.workspace_id)
      .where('enabled', '=', 1)
      .where('trigger_kind', '=', kind)
      .execute();
    const data = JSON.parse(event.data_json) as unknown;
    const started: string[] = [];
    for (const automation of candidates) {
      if (automation.id === event.source_automation_id || !matches(automation, event)) continue;
      if (!(await mayHear(trx, automation, event))) continue;
      const cooled = await trx
        .updateTable('automations')
        .set({ last_event_at: now, last_fired_at: now })
        .where('id', '=', automation.id)
        .where((eb) =>
          automation.cooldown_s > 0
            ? eb.or([
                eb('last_event_at', 'is', null),
                eb('last_event_at', '<=', now - automation.cooldown_s * 1000),
              ])
            : eb.val(true),
        )
        .executeTakeFirst();
      if (Number(cooled.numUpdatedRows) !== 1) {
        await trx
          .updateTable('automations')
          .set((eb) => ({ dropped_events: eb('dropped_events', '+', 1) }))
          .where('id', '=', automation.id)
          .execute();
        continue;
      }
      const payload =
        kind === 'github_event'
          ? { event: event.event, action: event.action, repo: event.repo, payload: data }
          : { provider: event.provider, event: event.event, data };
      started.push(
        await queueRun(trx, {
          automation,
          versionId: automation.live_version_id,
          cause: 'event',
          dryRun: false,
          payload,
          eventDepth: event.depth,
        }),
      );
    }
    return started;
  };
  return db.isTransaction ? deliver(db) : db.transaction().execute(deliver);
}
