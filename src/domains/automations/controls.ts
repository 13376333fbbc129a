import type { Selectable } from 'kysely';
import type { AutomationTable } from '../../storage/schema.ts';
import { DomainError, invalid } from '../../errors.ts';
import { automationFor, requireControl } from '../policies/automations.ts';
import type { Actor } from '../workspace/actor.ts';
import { optionalBoolean } from './args.ts';
import type { AutomationsContext } from './context.ts';
import { deliverEvent, duplicateDelivery, recordEvent, type IncomingEvent } from './events.ts';
import { type Trigger, nextFireAt } from '../../flowplan/triggers.ts';
import { wake } from '../../queue/jobs.ts';
import { cancelDryRuns, queueRuns, type QueueRunInput } from './runs.ts';
import { perTurn } from '../../per-turn.ts';
import { postToSession } from './session.ts';

type AutomationRow = Selectable<AutomationTable>;

/** A call's `run`, as the turn's calls are queued together. */
interface RunAsked {
  actor: Actor;
  automationId: unknown;
  dryRun: boolean;
}

/** What starts, stops and goes on: events in, runs now, pausing and resuming. Each tells the engine. */
export function automationControls(ctx: AutomationsContext) {
  const { db, urlOf, queued } = ctx;

  /**
   * Runs asked for in the same turn of the event loop (calls that arrived together) are queued in
   * one transaction: each caller's rights are checked in it, one by one, and a refusal answers
   * that call alone; the runs and their jobs are stored together.
   */
  const runTogether = perTurn(async (asked: RunAsked[]) =>
    db.transaction().execute(async (trx) => {
      const answers: (Error | { row: AutomationRow; runId: string })[] = [];
      const inputs: QueueRunInput[] = [];
      for (const { actor, automationId, dryRun } of asked) {
        try {
          const access = await automationFor(trx, actor, automationId);
          requireControl(access);
          const row = access.row;
          if (!dryRun && row.enabled !== 1)
            throw new DomainError('paused', 'Enable the automation before running it');
          inputs.push({
            automation: row,
            versionId: row.live_version_id,
            cause: dryRun ? 'dry_run' : 'manual',
            dryRun,
            payload: { manual: true, by: access.personName },
            requestedBy: actor.personId,
          });
          answers.push({ row, runId: '' });
        } catch (error) {
          if (!(error instanceof DomainError)) throw error;
          answers.push(error);
        }
      }
      const runIds = await queueRuns(trx, inputs);
      let next = 0;
      return answers.map((a) => (a instanceof Error ? a : { row: a.row, runId: runIds[next++]! }));
    }),
  );

  return {
    /** Starts the automations of a workspace that an event matches; returns the runs queued. */
    async receiveEvent(workspaceId: string, event: IncomingEvent): Promise<string[]> {
      // Stored first, then delivered here at once; an engine delivers it if this process stops between.
      const id = await recordEvent(db, { ...event, workspaceId });
      if (id === null) throw duplicateDelivery();
      const started = await deliverEvent(db, id);
      if (started.length) queued();
      return started;
    },

    /** Called after a transaction that queued or woke runs committed (the engine listens). */
    onQueued(listener: () => void): () => void {
      return ctx.onQueued(listener);
    },

    async run(actor: Actor, args: { automation_id?: unknown; dry_run?: unknown }) {
      if (args.automation_id === undefined) throw invalid('automation_id is required for run');
      const dryRun = optionalBoolean(args.dry_run, 'dry_run') ?? false;
      const outcome = await runTogether({ actor, automationId: args.automation_id, dryRun });
      queued();
      return {
        action: 'run' as const,
        automation_id: outcome.row.id,
        dry_run: dryRun,
        run_id: outcome.runId,
        session_id: outcome.row.session_id,
        url: urlOf(outcome.row.id),
      };
    },

    async setEnabled(actor: Actor, args: { automation_id?: unknown; enabled?: unknown }) {
      if (args.automation_id === undefined) throw invalid('automation_id is required for set_enabled');
      if (typeof args.enabled !== 'boolean')
        throw invalid('enabled is required for set_enabled: true or false');
      const enabled = args.enabled;
      const outcome = await db.transaction().execute(async (trx) => {
        const access = await automationFor(trx, actor, args.automation_id);
        requireControl(access);
        const row = access.row;
        const trigger = JSON.parse(row.trigger_json) as Trigger;
        const wasEnabled = row.enabled === 1;
        // Enabling again keeps a still-valid next fire time; pausing clears it.
        const next = enabled
          ? wasEnabled && row.next_fire_at !== null
            ? new Date(row.next_fire_at)
            : nextFireAt(trigger, new Date())
          : null;
        if (wasEnabled !== enabled || (next?.getTime() ?? null) !== row.next_fire_at) {
          await trx
            .updateTable('automations')
            .set({ enabled: enabled ? 1 : 0, next_fire_at: next?.getTime() ?? null, updated_at: Date.now() })
            .where('id', '=', row.id)
            .execute();
        }
        if (enabled && !wasEnabled) {
          // Runs held by the pause (queued, or stopped before a write) go on.
          const held = await trx
            .selectFrom('runs')
            .select('id')
            .where('automation_id', '=', row.id)
            .where('status', 'in', ['queued', 'running', 'waiting'])
            .execute();
          for (const r of held) await wake(trx, r.id);
        }
        // Pausing stops everything: real runs hold at their next step; dry runs end here.
        if (!enabled) await cancelDryRuns(trx, row.id, 'cancelled: the automation was paused');
        if (wasEnabled !== enabled) {
          const actorName = access.personName;
          await postToSession(
            trx,
            row.session_id,
            actor.personId,
            `${actorName} ${enabled ? 'enabled' : 'paused'} this automation.`,
          );
        }
        return { row, next };
      });
      if (enabled) queued();
      return {
        action: 'set_enabled' as const,
        automation_id: outcome.row.id,
        name: outcome.row.name,
        enabled,
        ...(outcome.next ? { next_fire_at: outcome.next.toISOString() } : {}),
        session_id: outcome.row.session_id,
        url: urlOf(outcome.row.id),
      };
    },
  };
}
