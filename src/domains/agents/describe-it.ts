import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import type { ModelConfig } from '../../model/model.ts';
import { log } from '../../observability/log.ts';
import type { Db } from '../../storage/schema.ts';
import type { activityService } from '../activity/activity.ts';
import type { AutomationsService } from '../automations/automations.ts';
import { personName } from '../workspace/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import { draftWithRepairs, guideText, instructions, REPAIRS } from './builder.ts';

/** The longest sentence `Describe it` takes. */
export const DESCRIBE_MAX_CHARS = 2000;

export const NO_MODEL =
  'No model is configured, so @Builder cannot draft from a sentence; an admin can connect one in Settings. Start from a template instead.';

/** How long a finished drafting's outcome stays readable. */
const KEPT_MS = 15 * 60_000;

/** A drafting under way or done, as the person who asked for it reads it. */
export type Drafting =
  | { request_id: string; status: 'drafting' }
  | { request_id: string; status: 'drafted'; flow_version_id: string }
  | { request_id: string; status: 'failed'; error: string };

interface DescribeDeps {
  automations: AutomationsService;
  activity: ReturnType<typeof activityService>;
  db: Db;
  /** The model the workspace answers through (its own from Settings, else the server's). */
  modelFor: (workspaceId: string) => Promise<ModelConfig | undefined>;
}

/**
 * `Describe it` in the app: @Builder drafts an automation from a person's sentence, as it does
 * from a comment (the same model prompt, the same draft_automation call with its repairs), acting
 * for the person. It never publishes. `start` answers at once; the drafting goes on in the
 * background of the instance that took it, and where it stands is a row any instance reads.
 */
export function describeItService(deps: DescribeDeps, options: { timeoutMs?: number } = {}) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  // Past this a drafting still marked under way was lost with the process that ran it.
  const lostAfterMs = timeoutMs * (REPAIRS + 2) + 60_000;

  return {
    modelConfigured: async (actor: Actor) => (await deps.modelFor(actor.workspaceId)) !== undefined,

    /** Starts @Builder drafting from the sentence and answers at once with the drafting's id. */
    async start(actor: Actor, sentence: unknown): Promise<Drafting> {
      const { text, model } = await checked(deps, actor, sentence);
      const now = Date.now();
      await deps.db
        .deleteFrom('describe_requests')
        .where('ended_at', '<', now - KEPT_MS)
        .execute();
      const id = newId('dsc');
      await deps.db
        .insertInto('describe_requests')
        .values({
          id,
          workspace_id: actor.workspaceId,
          person_id: actor.personId,
          status: 'drafting',
          flow_version_id: null,
          error: null,
          created_at: now,
          ended_at: null,
        })
        .execute();
      const ended = (values: { status: 'drafted' | 'failed'; flow_version_id?: string; error?: string }) =>
        deps.db
          .updateTable('describe_requests')
          .set({ ...values, ended_at: Date.now() })
          .where('id', '=', id)
          .execute();
      drafted(deps, actor, text, model, timeoutMs)
        .then(
          (draft) => ended({ status: 'drafted', flow_version_id: draft.flow_version_id }),
          (error: unknown) => {
            if (!(error instanceof DomainError)) log.error({ err: error }, 'Describe it failed');
            const message =
              error instanceof DomainError
                ? error.message
                : '@Builder could not draft it; try again in a moment.';
            return ended({ status: 'failed', error: message });
          },
        )
        .catch((error: unknown) => log.error({ err: error }, 'Describe it could not store how it ended'));
      return { request_id: id, status: 'drafting' };
    },

    /** Where the caller's drafting is; anyone else's (or one long finished) is not found. */
    async status(actor: Actor, requestId: unknown): Promise<Drafting> {
      const row =
        typeof requestId === 'string'
          ? await deps.db
              .selectFrom('describe_requests')
              .selectAll()
              .where('id', '=', requestId)
              .where('person_id', '=', actor.personId)
              .where('workspace_id', '=', actor.workspaceId)
              .executeTakeFirst()
          : undefined;
      if (!row)
        throw new DomainError('not_found', 'That drafting is not known here; describe the automation again');
      if (row.status === 'drafted' && row.flow_version_id) {
        return { request_id: row.id, status: 'drafted', flow_version_id: row.flow_version_id };
      }
      if (row.status === 'failed') return { request_id: row.id, status: 'failed', error: row.error ?? '' };
      if (Date.now() - row.created_at > lostAfterMs) {
        return {
          request_id: row.id,
          status: 'failed',
          error: '@Builder stopped before it finished (its server restarted); describe it again.',
        };
      }
      return { request_id: row.id, status: 'drafting' };
    },
  };
}

/** The sentence, checked, and the model to draft with: what is refused at once, before any model call. */
async function checked(deps: DescribeDeps, actor: Actor, sentence: unknown) {
  if (typeof sentence !== 'string' || sentence.trim() === '') {
    throw invalid('Describe the automation in a sentence: what should happen, and when');
  }
  if (sentence.length > DESCRIBE_MAX_CHARS) {
    throw invalid(`The description must be at most ${DESCRIBE_MAX_CHARS} characters`);
  }
  const model = await deps.modelFor(actor.workspaceId);
  if (!model) throw new DomainError('invalid_argument', NO_MODEL);
  return { text: sentence, model };
}

/** @Builder's drafting itself: the catalogue, the model's plan, draft_automation with its repairs. */
async function drafted(
  deps: DescribeDeps,
  actor: Actor,
  sentence: string,
  model: ModelConfig,
  timeoutMs: number,
): Promise<{ flow_version_id: string }> {
  const builder: Actor = { ...actor, by: 'agent' };
  const record = (tool: string, started: number, outcome: 'ok' | 'error', targets: string[] = []) =>
    deps.activity.record(builder, {
      tool,
      targets,
      outcome,
      durationMs: performance.now() - started,
      agent: 'Builder',
    });
  let started = performance.now();
  const described = await deps.automations.describe(builder, {});
  await record('describe_capabilities', started, 'ok');
  const name = await personName(deps.db, actor.personId);
  let result;
  try {
    result = await draftWithRepairs({
      model,
      timeoutMs,
      signal: AbortSignal.timeout(timeoutMs * (REPAIRS + 1)),
      instructions: instructions(name, guideText(described), 'in the app, in one sentence'),
      messages: [{ role: 'user', content: `The request, from ${name}:\n${sentence.trim()}` }],
      fallbackAsk: sentence,
      draft: async (args) => {
        started = performance.now();
        try {
          const draft = await deps.automations.draft(builder, args, { agent: 'Builder' });
          await record('draft_automation', started, 'ok', [draft.flow_version_id]);
          return draft;
        } catch (error) {
          await record('draft_automation', started, 'error');
          throw error;
        }
      },
    });
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw new DomainError(
      'invalid_argument',
      `@Builder could not reach the model (${(error as Error).message}); try again in a moment.`,
    );
  }
  if ('failed' in result) {
    throw new DomainError(
      'invalid_argument',
      `@Builder could not draft an automation that passes the checks after ${REPAIRS + 1} attempts; describe it in more detail. The last problem: ${result.failed.split('\n').slice(0, 3).join(' ')}`,
    );
  }
  return result;
}

export type DescribeItService = ReturnType<typeof describeItService>;
