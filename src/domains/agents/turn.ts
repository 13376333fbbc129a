import type { ModelConfig } from '../../model/model.ts';
import type { Services } from '../../services.ts';
import { targetIds } from '../activity/activity.ts';
import type { Actor } from '../workspace/actor.ts';
import type { AgentRequest, Outcome } from './requests.ts';

/** One request being answered: who asked, where, and the means the agent has. */
export interface AgentTurn {
  services: Services;
  request: AgentRequest & { artifact_id: string; workspace_id: string };
  /** The person who mentioned the agent: the agent reads with their rights, and only reads. */
  actor: Actor;
  model: ModelConfig;
  timeoutMs: number;
  signal: AbortSignal;
  /** Stores the Builder's draft with the request, in the draft's transaction. */
  workerId: string;
}

export type Agent = (turn: AgentTurn) => Promise<Outcome>;

/**
 * A domain call an agent makes for the person, recorded in that person's activity history under
 * the tool it matches and the agent's name, like the person's own tool calls.
 */
export async function asPerson<T>(
  turn: AgentTurn,
  tool: string,
  args: Record<string, unknown>,
  call: () => Promise<T>,
): Promise<T> {
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
    await record('ok', result);
    return result;
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    await record('error', undefined, typeof code === 'string' ? code : 'failed');
    throw error;
  }
}
