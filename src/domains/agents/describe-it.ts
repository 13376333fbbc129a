import { DomainError, invalid } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { log } from '../../observability/log.ts';
import type { ModelConfig } from '../../model/model.ts';
import type { activityService } from '../activity/activity.ts';
import type { AutomationsService } from '../automations/automations.ts';
import { personName } from '../workspace/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import { draftWithRepairs, guideText, instructions, REPAIRS } from './builder.ts';

/** The longest sentence `Describe it` takes. */
export const DESCRIBE_MAX_CHARS = 2000;

export const NO_MODEL =
  'No model is configured, so @Builder cannot draft from a sentence; an admin sets TANDEM_MODEL_URL and TANDEM_MODEL. Start from a template instead.';

/** How long a finished drafting's outcome stays readable. */
const KEPT_MS = 15 * 60_000;

/** A drafting under way or done, as the person who asked for it reads it. */
export type Drafting =
  | { request_id: string; status: 'drafting' }
  | { request_id: string; status: 'drafted'; flow_version_id: string }
  | { request_id: string; status: 'failed'; error: string };

/**
 * `Describe it` in the app: @Builder drafts an automation from a person's sentence, as it does
 * from a comment (the same model prompt, the same draft_automation call with its repairs), acting
 * for the person. It never publishes. The model calls take a while, so `start` answers at once
 * and @Builder drafts in the background; the app asks `status` until the draft or the reason it
 * failed is there. The outcome is kept in this process for a quarter of an hour.
 */
export function describeItService(
  deps: {
    automations: AutomationsService;
    activity: ReturnType<typeof activityService>;
    db: Parameters<typeof personName>[0];
  },
  options: { model?: ModelConfig | undefined; timeoutMs?: number } = {},
) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const draftings = new Map<string, { personId: string; state: Drafting; ended?: number }>();
  const forget = () => {
    const now = Date.now();
    for (const [id, d] of draftings)
      if (d.ended !== undefined && now - d.ended > KEPT_MS) draftings.delete(id);
  };

  /** The sentence, checked: what is refused at once, before any model call. */
  function checked(sentence: unknown): string {
    if (typeof sentence !== 'string' || sentence.trim() === '') {
      throw invalid('Describe the automation in a sentence: what should happen, and when');
    }
    if (sentence.length > DESCRIBE_MAX_CHARS) {
      throw invalid(`The description must be at most ${DESCRIBE_MAX_CHARS} characters`);
    }
    if (!options.model) throw new DomainError('invalid_argument', NO_MODEL);
    return sentence;
  }

  const service = {
    modelConfigured: () => options.model !== undefined,

    /** Starts @Builder drafting from the sentence and answers at once with the drafting's id. */
    start(actor: Actor, sentence: unknown): Drafting {
      const text = checked(sentence);
      forget();
      const id = newId('dsc');
      const entry: { personId: string; state: Drafting; ended?: number } = {
        personId: actor.personId,
        state: { request_id: id, status: 'drafting' },
      };
      draftings.set(id, entry);
      service.draft(actor, text).then(
        (drafted) => {
          entry.state = { request_id: id, status: 'drafted', flow_version_id: drafted.flow_version_id };
          entry.ended = Date.now();
        },
        (error: unknown) => {
          if (!(error instanceof DomainError)) log.error({ err: error }, 'Describe it failed');
          const message =
            error instanceof DomainError
              ? error.message
              : '@Builder could not draft it; try again in a moment.';
          entry.state = { request_id: id, status: 'failed', error: message };
          entry.ended = Date.now();
        },
      );
      return entry.state;
    },

    /** Where the caller's drafting is; anyone else's (or one long finished) is not found. */
    status(actor: Actor, requestId: unknown): Drafting {
      const entry = typeof requestId === 'string' ? draftings.get(requestId) : undefined;
      if (!entry || entry.personId !== actor.personId) {
        throw new DomainError('not_found', 'That drafting is not known here; describe the automation again');
      }
      return entry.state;
    },

    /** Drafts from the sentence and waits for the draft (the background of `start`). */
    async draft(actor: Actor, sentence: unknown): Promise<{ flow_version_id: string }> {
      checked(sentence);
      const text = sentence as string;
      const model = options.model as ModelConfig;
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
      let drafted;
      try {
        drafted = await draftWithRepairs({
          model,
          timeoutMs,
          signal: AbortSignal.timeout(timeoutMs * (REPAIRS + 1)),
          instructions: instructions(name, guideText(described), 'in the app, in one sentence'),
          messages: [{ role: 'user', content: `The request, from ${name}:\n${text.trim()}` }],
          fallbackAsk: text,
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
      if ('failed' in drafted) {
        throw new DomainError(
          'invalid_argument',
          `@Builder could not draft an automation that passes the checks after ${REPAIRS + 1} attempts; describe it in more detail. The last problem: ${drafted.failed.split('\n').slice(0, 3).join(' ')}`,
        );
      }
      return drafted;
    },
  };
  return service;
}

export type DescribeItService = ReturnType<typeof describeItService>;
