import { DomainError, invalid } from '../../errors.ts';
import type { ModelConfig } from '../../model/model.ts';
import type { activityService } from '../activity/activity.ts';
import type { AutomationsService } from '../automations/automations.ts';
import { personName } from '../workspace/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import { draftWithRepairs, guideText, instructions, REPAIRS } from './builder.ts';

/** The longest sentence `Describe it` takes. */
export const DESCRIBE_MAX_CHARS = 2000;

export const NO_MODEL =
  'No model is configured, so @Builder cannot draft from a sentence; an admin can connect one in Settings. Start from a template instead.';

/**
 * `Describe it` in the app: @Builder drafts an automation from a person's sentence, as it does
 * from a comment (the same model prompt, the same draft_automation call with its repairs), acting
 * for the person. It never publishes.
 */
export function describeItService(
  deps: {
    automations: AutomationsService;
    activity: ReturnType<typeof activityService>;
    db: Parameters<typeof personName>[0];
    /** The model the workspace answers through (its own from Settings, else the server's). */
    modelFor: (workspaceId: string) => Promise<ModelConfig | undefined>;
  },
  options: { timeoutMs?: number } = {},
) {
  const timeoutMs = options.timeoutMs ?? 60_000;
  return {
    modelConfigured: async (actor: Actor) => (await deps.modelFor(actor.workspaceId)) !== undefined,

    async draft(actor: Actor, sentence: unknown): Promise<{ flow_version_id: string }> {
      if (typeof sentence !== 'string' || sentence.trim() === '') {
        throw invalid('Describe the automation in a sentence: what should happen, and when');
      }
      if (sentence.length > DESCRIBE_MAX_CHARS) {
        throw invalid(`The description must be at most ${DESCRIBE_MAX_CHARS} characters`);
      }
      const model = await deps.modelFor(actor.workspaceId);
      if (!model) throw new DomainError('invalid_argument', NO_MODEL);
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
      if ('failed' in drafted) {
        throw new DomainError(
          'invalid_argument',
          `@Builder could not draft an automation that passes the checks after ${REPAIRS + 1} attempts; describe it in more detail. The last problem: ${drafted.failed.split('\n').slice(0, 3).join(' ')}`,
        );
      }
      return drafted;
    },
  };
}

export type DescribeItService = ReturnType<typeof describeItService>;
