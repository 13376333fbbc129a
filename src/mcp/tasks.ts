import { z } from 'zod';
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  MissingRequiredClientCapabilityError,
  ProtocolError,
  ProtocolErrorCode,
  type McpServer,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { DomainError } from '../errors.ts';
import type { RunProgress } from '../domains/automations/run-progress.ts';
import type { Actor } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';
import { runEnded } from './tools/automation-changes.ts';

/**
 * Long work as MCP Tasks: the `io.modelcontextprotocol/tasks` extension of the 2026-07-28
 * revision. A client that declares the extension on a call may get a task back instead of the
 * result; it polls `tasks/get` until the task ends, when the result rides on the task. Tandem's
 * long work is a run (edit_automation `run`, dry runs too), so a task is a run: its id is the run's
 * id and its state is the run's row, which every instance reads and which outlives a restart.
 * A task is visible only to the person who started the run; any other id reads as not found.
 */

export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** How often a client is asked to poll: a run that works finishes in moments, a person takes longer. */
const POLL_WORKING_MS = 1_000;
const POLL_WAITING_MS = 5_000;

/** Whether the client declared the Tasks extension on this request (its per-request capabilities). */
export function declaresTasks(ctx: ServerContext | undefined): boolean {
  const envelope = ctx?.mcpReq.envelope as Record<string, unknown> | undefined;
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as { extensions?: unknown } | undefined;
  const extensions = capabilities?.extensions;
  return !!extensions && typeof extensions === 'object' && TASKS_EXTENSION in extensions;
}

type Status = 'working' | 'input_required' | 'completed' | 'cancelled' | 'failed';

/** The task a run is, in the extension's `DetailedTask` shape. */
export function taskOf(progress: RunProgress): Record<string, unknown> & { taskId: string; status: Status } {
  const { run } = progress;
  const waiting = progress.waiting_on;
  const status: Status = progress.ended ? 'completed' : waiting.length ? 'input_required' : 'working';
  const task = {
    taskId: run.run_id,
    status,
    statusMessage: statusMessage(progress),
    createdAt: run.queued_at as string,
    lastUpdatedAt: progress.updated_at,
    // Runs are kept with their automation; a task lasts as long as its run.
    ttlMs: null,
    ...(progress.ended ? {} : { pollIntervalMs: waiting.length ? POLL_WAITING_MS : POLL_WORKING_MS }),
  };
  if (status === 'completed') {
    const ended = runEnded(progress);
    // The call's result as the 2026-07-28 revision carries it, `resultType` included: requesters
    // read it with the same codec as an immediate tools/call answer.
    return {
      ...task,
      result: {
        resultType: 'complete',
        content: [{ type: 'text', text: ended.text }],
        structuredContent: ended.structured,
      },
    };
  }
  if (status === 'input_required') {
    // A person decides in the app; the client is pointed there (URL-mode elicitation).
    const inputRequests = Object.fromEntries(
      waiting.map((a) => [a.approval_id, inputRequired.elicitUrl({ message: approvalText(a), url: a.url })]),
    );
    return { ...task, inputRequests };
  }
  return task;
}

function approvalText(a: RunProgress['waiting_on'][number]): string {
  const writes = a.writes.length
    ? `Approving lets it ${a.writes
        .map(
          (w) => `${w.action.charAt(0).toLowerCase()}${w.action.slice(1)}${w.target ? ` ${w.target}` : ''}`,
        )
        .join('; ')}.`
    : 'It guards no write.';
  return `Waiting for approval ${a.approval_id} (“${a.message}”), decided by ${a.approvers}. ${writes} Decide it at ${a.url}`;
}

function statusMessage(progress: RunProgress): string {
  const { run } = progress;
  const kind = run.dry_run ? 'Dry run' : 'Run';
  if (progress.waiting_on.length) return progress.waiting_on.map(approvalText).join('\n');
  if (progress.ended) return `${kind} ${run.status}${run.error ? `: ${run.error}` : ''}.`;
  return `${kind} ${run.status}.`;
}

/** The handle a task-augmented call answers with; the call's usual answer rides along. */
export function createdTask<A extends { content: { type: 'text'; text: string }[] }>(
  progress: RunProgress,
  answer: A,
): A {
  const { result: _result, inputRequests: _inputs, ...handle } = taskOf(progress);
  return { resultType: 'task', ...handle, ...answer };
}

const taskParams = z.looseObject({ taskId: z.string() });

function notFound(): ProtocolError {
  return new ProtocolError(ProtocolErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
}

/**
 * Serves `tasks/get`, `tasks/update` and `tasks/cancel` on a server bound to one caller, and
 * advertises the extension in the server's capabilities (as the extension says: an empty object
 * under `extensions`). `tasks/list` and `tasks/result` are not part of this revision of the
 * extension: a finished task carries its result.
 */
export function serveTasks(server: McpServer, services: Services, actor: Actor): void {
  server.server.registerCapabilities({ extensions: { [TASKS_EXTENSION]: {} } });

  const progressOf = async (ctx: ServerContext, taskId: string): Promise<RunProgress> => {
    if (!declaresTasks(ctx))
      throw new MissingRequiredClientCapabilityError({
        requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
      });
    if (!actor.scopes.has('automations:read') && !actor.scopes.has('automations:write')) throw notFound();
    try {
      return await services.automations.runProgress(actor, taskId);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'not_found') throw notFound();
      throw error;
    }
  };

  server.server.setRequestHandler('tasks/get', { params: taskParams }, async ({ taskId }, ctx) => ({
    resultType: 'complete',
    ...taskOf(await progressOf(ctx, taskId)),
  }));

  // An approval is decided by a person in the app, not by the client's answer: the answer to the
  // URL elicitation (the SDK lifts `inputResponses` out of the params) is acknowledged, and the
  // task moves on once the person has decided.
  server.server.setRequestHandler('tasks/update', { params: taskParams }, async ({ taskId }, ctx) => {
    await progressOf(ctx, taskId);
    return { resultType: 'complete' };
  });

  server.server.setRequestHandler('tasks/cancel', { params: taskParams }, async ({ taskId }, ctx) => {
    await progressOf(ctx, taskId);
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      'tasks/cancel is not supported: Tandem cannot stop a run once started (rejecting its approval in the app ends a run that waits on one)',
    );
  });
}
