import { AsyncLocalStorage } from 'node:async_hooks';
import type { Db } from '../workspace/access.ts';
import { queueRun } from './runs.ts';

/** What caused the code now running: a run of an automation, so its events do not loop. */
export const origin = new AsyncLocalStorage<{ automationId: string; depth: number }>();

/** Events started by runs start further runs only this many levels deep. */
export const MAX_EVENT_DEPTH = 3;

export interface IncomingEvent {
  provider: string;
  event: string;
  data: unknown;
  /** GitHub only: the webhook's action and repository (owner/name). */
  action?: string | undefined;
  repo?: string | undefined;
}

/** Starts the automations of one workspace whose trigger matches an event; returns the runs started. */
export async function startEventRuns(db: Db, workspaceId: string, event: IncomingEvent): Promise<string[]> {
  const source = origin.getStore();
  if (source && source.depth >= MAX_EVENT_DEPTH) return [];
  const kind = event.provider === 'github' && event.repo !== undefined ? 'github_event' : 'connector_event';
  const candidates = await db
    .selectFrom('automations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('enabled', '=', 1)
    .where('trigger_kind', '=', kind)
    .execute();
  const started: string[] = [];
  for (const automation of candidates) {
    if (source?.automationId === automation.id) continue;
    const t = JSON.parse(automation.trigger_json) as Record<string, unknown>;
    if (kind === 'connector_event' && (t.provider !== event.provider || t.event !== event.event)) continue;
    if (kind === 'github_event') {
      if (t.event !== event.event || String(t.repo).toLowerCase() !== String(event.repo).toLowerCase())
        continue;
      const actions = (t.actions as string[] | undefined) ?? [];
      if (actions.length > 0 && !actions.includes(event.action ?? '')) continue;
    }
    const now = Date.now();
    await db.transaction().execute(async (trx) => {
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
        return;
      }
      const payload =
        kind === 'github_event'
          ? { event: event.event, action: event.action ?? null, repo: event.repo, payload: event.data }
          : { provider: event.provider, event: event.event, data: event.data };
      started.push(
        await queueRun(trx, {
          automation,
          versionId: automation.live_version_id,
          cause: 'event',
          dryRun: false,
          payload: { ...payload, ...(source ? { depth: source.depth } : {}) },
        }),
      );
    });
  }
  return started;
}
