import { DomainError } from '../../errors.ts';
import { newId } from '../../ids.ts';
import { log } from '../../observability/log.ts';
import { ModelError, type ModelConfig } from '../../model/model.ts';
import type { Services } from '../../services.ts';
import type { Scope } from '../workspace/actor.ts';
import { assistant } from './assistant.ts';
import { builder } from './builder.ts';
import { replies } from './replies.ts';
import {
  claimRequests,
  finishRequest,
  releaseRequest,
  renewLease,
  RequestLost,
  type AgentRequest,
  type Outcome,
} from './requests.ts';
import { mentionScopes, type Agent, type AgentTurn } from './turn.ts';

export interface AgentWorkerOptions {
  model?: ModelConfig | undefined;
  /** How long a worker holds a request before another may take it over (after a crash). */
  leaseMs?: number | undefined;
  /** Requests of one workspace answered at once, by all workers together; the rest wait. */
  perWorkspace?: number | undefined;
  /** How long one model call may take. */
  timeoutMs?: number | undefined;
  /** Requests this process answers at once. */
  concurrency?: number | undefined;
  /** Claims that never finished (dead workers) after which a request is answered as failed. */
  crashes?: number | undefined;
  workerId?: string | undefined;
  /** Told when a request is done, so queued ones are taken up at once. */
  onDone?: (() => void) | undefined;
}

export const AGENT_DEFAULTS = { perWorkspace: 2, timeoutMs: 120_000, concurrency: 8, crashes: 3 };

/** Installed agents without a behaviour of their own answer as the assistant does, under their name. */
const AGENTS: Record<string, Agent> = { Assistant: assistant, Builder: builder };

/** What each agent needs to do its work (the others read only). */
const NEEDS: Record<string, Scope[]> = {
  Builder: ['documents:read', 'automations:read', 'automations:write'],
};

/**
 * Answers agent requests: claims due ones (within the per-workspace limit), has the agent answer
 * as the person who asked, and posts the reply. The run engine calls `tick` from its loop, so
 * every engine process answers requests and one that dies leaves them to the others.
 */
export function createAgentWorker(services: Services, options: AgentWorkerOptions = {}) {
  const { deps } = services;
  const workerId = options.workerId ?? newId('wrk');
  const leaseMs = options.leaseMs ?? 60_000;
  const perWorkspace = options.perWorkspace ?? AGENT_DEFAULTS.perWorkspace;
  const timeoutMs = options.timeoutMs ?? AGENT_DEFAULTS.timeoutMs;
  const concurrency = options.concurrency ?? AGENT_DEFAULTS.concurrency;
  const crashes = options.crashes ?? AGENT_DEFAULTS.crashes;
  const active = new Set<Promise<void>>();
  const abort = new AbortController();
  let stopped = false;

  async function outcomeFor(request: AgentRequest): Promise<Outcome> {
    const died = request.claims - 1;
    if (died >= crashes) return replies.crashed(request.agent, died);
    const { artifact_id, workspace_id } = request;
    if (artifact_id === null || workspace_id === null)
      throw new Error(`agent request ${request.id} has no artifact`);
    // The workspace's own model (Settings) at this moment, else the server's.
    const model = await services.models.configFor(workspace_id, options.model);
    if (!model) return replies.noModel(request.agent);
    // The agent carries what it needs of what the mention's credential carried, never more.
    const carried = mentionScopes(request.scopes);
    const needs = NEEDS[request.agent] ?? ['documents:read'];
    const lacking = needs.find((s) => !carried.includes(s));
    if (lacking) return replies.noScope(request.agent, lacking);
    const turn: AgentTurn = {
      services,
      request: { ...request, artifact_id, workspace_id },
      actor: {
        personId: request.requested_by,
        workspaceId: workspace_id,
        scopes: new Set(needs),
        // The agent mentioned acts for the person who asked (the Builder's drafts are an agent's).
        by: 'agent',
      },
      model,
      timeoutMs,
      signal: abort.signal,
      workerId,
    };
    try {
      return await (AGENTS[request.agent] ?? assistant)(turn);
    } catch (error) {
      // Stopping this process is no answer: the request waits for the next worker.
      if (abort.signal.aborted) throw new RequestLost('stopped');
      if (error instanceof ModelError) return replies.modelFailed(request.agent, error);
      if (error instanceof DomainError && error.code === 'insufficient_scope') {
        return replies.noScope(request.agent, error.data?.scope as Scope);
      }
      if (error instanceof DomainError && (error.code === 'not_found' || error.code === 'thread_not_found')) {
        const person = await deps.db
          .selectFrom('people')
          .select('name')
          .where('id', '=', request.requested_by)
          .executeTakeFirst();
        return replies.noAccess(person?.name ?? 'the person who asked');
      }
      throw error;
    }
  }

  async function answer(request: AgentRequest): Promise<void> {
    const heartbeat = setInterval(
      () => void renewLease(deps.db, request.id, workerId, leaseMs).catch(() => {}),
      Math.max(250, Math.floor(leaseMs / 3)),
    );
    try {
      await finishRequest(deps, request, workerId, await outcomeFor(request));
    } catch (error) {
      if (error instanceof RequestLost && !stopped) return;
      if (stopped) {
        // Handed back as it was taken, so a clean stop does not count as a worker dying.
        await releaseRequest(deps.db, request.id, workerId, Date.now(), request.claims - 1).catch(() => {});
        return;
      }
      log.error({ err: error, agentRequest: request.id }, 'an agent request could not be answered');
      await releaseRequest(deps.db, request.id, workerId, Date.now() + 5_000, request.claims).catch(() => {});
    } finally {
      clearInterval(heartbeat);
    }
  }

  /** Takes the requests due now that the limits allow and starts answering them; returns how many. */
  async function tick(): Promise<number> {
    if (stopped) return 0;
    const claimed = await claimRequests(deps, {
      workerId,
      leaseMs,
      perWorkspace,
      max: concurrency - active.size,
    });
    for (const request of claimed) {
      const p = answer(request).finally(() => {
        active.delete(p);
        options.onDone?.();
      });
      active.add(p);
    }
    return claimed.length;
  }

  return {
    workerId,
    tick,
    /** Answers what is due, in this process, until nothing is left (tests and the engine's drain). */
    async drain(): Promise<number> {
      let answered = 0;
      for (;;) {
        const claimed = await tick();
        answered += claimed;
        if (claimed === 0 && active.size === 0) return answered;
        await Promise.race(active);
      }
    },
    async stop(): Promise<void> {
      stopped = true;
      abort.abort();
      await Promise.allSettled([...active]);
    },
  };
}

export type AgentWorker = ReturnType<typeof createAgentWorker>;
