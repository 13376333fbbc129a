import type { ModelConfig } from '../../model/model.ts';
import { DomainError } from '../../errors.ts';
import type { Services } from '../../services.ts';
import { targetIds } from '../activity/activity.ts';
import { SCOPES, type Actor, type Scope } from '../workspace/actor.ts';
import type { AgentRequest, Outcome } from './requests.ts';

/** One request being answered: who asked, where, and the means the agent has. */
export interface AgentTurn {
  services: Services;
  request: AgentRequest & { artifact_id: string; workspace_id: string };
  /**
   * The person who mentioned the agent, with the scopes the agent needs that the credential which
   * wrote the mention carried (never more): the agent acts with their rights.
   */
  actor: Actor;
  model: ModelConfig;
  timeoutMs: number;
  signal: AbortSignal;
  /** Stores the Builder's draft with the request, in the draft's transaction. */
  workerId: string;
}

export type Agent = (turn: AgentTurn) => Promise<Outcome>;

/** The scopes a mention's request carries: those recorded with it, or reading only for one stored before. */
export function mentionScopes(recorded: string | null): Scope[] {
  if (recorded === null) return ['documents:read'];
  const held = new Set(recorded.split(' '));
  return SCOPES.filter((s) => held.has(s));
}

/** A refusal for an agent whose mention was written by a credential without `scope`. */
export const lacksScope = (scope: Scope) =>
  new DomainError(
    'insufficient_scope',
    `the credential that mentioned the agent does not carry ${scope}, so the agent may not use it either`,
    { data: { scope } },
  );

/**
 * A domain call an agent makes for the person, as the tool it matches (whose scope the agent's
 * actor must hold, else nothing is called), recorded in that person's activity history under the
 * tool and the agent's name, like the person's own tool calls.
 */
export async function asPerson<T>(
  turn: AgentTurn,
  { tool, scope }: { tool: string; scope: Scope },
  args: Record<string, unknown>,
  call: () => Promise<T>,
): Promise<T> {
  if (!turn.actor.scopes.has(scope)) throw lacksScope(scope);
  const started = performance.now();
  const record = (outcome: 'ok' | 'error', result?: unknown, errorCode?: string) =>
    turn.services.activity.record(turn.actor, {
      tool,
      targets: targetIds(args, result),
      outcome,
      errorCode,
      durationMs: performance.now() - started,
      agent: turn.request.agent,
    });
  try {
    const result = await call();
    record('ok', result);
    return result;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    record('error', undefined, typeof code === 'string' ? code : 'failed');
    throw error;
  }
}
