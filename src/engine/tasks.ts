import { log } from '../observability/log.ts';
import { maskSecrets } from '../observability/secrets.ts';
import { DomainError, LimitError, StepError } from '../errors.ts';
import { retryWait } from '../flowplan/retry.ts';
import type { AdvanceEnv } from './advance.ts';
import { storedInput } from './inputs.ts';
import { LeaseLost, type ErrorCode, type RunState } from './run-state.ts';
import { nodeKind } from './steps/index.ts';
import type { StartTask } from './steps/context.ts';
import type { Task } from './walker.ts';

// What a round of a run does: the tasks the walk gave it, each step started by its node kind.

/** Does a round's tasks; says whether they were all worked out in memory (nothing to read again). */
export async function doTasks(
  env: AdvanceEnv,
  state: RunState,
  tasks: Task[],
  now: number,
): Promise<boolean> {
  const { store } = env;
  let inMemory = true;
  const outside: Promise<void>[] = [];
  for (const task of tasks) {
    if (task.type === 'skip') {
      await store.finish('staged', state, task.key, task.node.id, { status: 'skipped' });
    } else if (task.type === 'map-finish') {
      await store.finish(
        'staged',
        state,
        task.key,
        task.node.id,
        task.failed
          ? { status: 'failed', error: task.failed, keepOutput: true }
          : { status: 'succeeded', output: { results: task.results } },
      );
    } else if (task.type === 'check') {
      const kind = nodeKind(task.node);
      const due = task.row.wait_until === null || task.row.wait_until <= now;
      if (!kind.check || (!due && task.node.kind !== 'subflow' && task.node.kind !== 'approval')) continue;
      inMemory = false;
      await env.breathe();
      await kind.check(env, state, task as never);
    } else {
      const kind = nodeKind(task.node);
      if (!kind.pure) {
        inMemory = false;
        await env.breathe();
      }
      const step = startStep(env, state, task);
      if (kind.outside) outside.push(step);
      else await step;
    }
  }
  const settled = await Promise.allSettled(outside);
  const failure = settled.find((r) => r.status === 'rejected');
  if (failure) throw failure.reason;
  return inMemory;
}

function errorCodeOf(error: unknown): ErrorCode | null {
  if (error instanceof LimitError) return 'limit';
  if (error instanceof StepError) return (error.code as ErrorCode | undefined) ?? null;
  return null;
}

/** Starts one step; a failure becomes the step's state (retried when its policy says so). */
async function startStep(
  env: AdvanceEnv,
  state: RunState,
  task: Extract<Task, { type: 'start' }>,
): Promise<void> {
  const { db, store } = env;
  const { key, node } = task;
  const kind = nodeKind(node);
  const attempt = (task.row?.attempt ?? 0) + 1;
  if (!task.row) state.nodes += 1;
  const begun = { attempt, started_at: Date.now(), input_json: storedInput(node, task.scope) };
  if (!kind.pure)
    await store.write(db, state, key, node.id, { status: 'running', ...begun, wait_until: null });
  try {
    await kind.start(env, state, { ...task, begun } as StartTask as never);
  } catch (error) {
    if (error instanceof LeaseLost) throw error;
    const known = error instanceof StepError || error instanceof DomainError;
    const message = maskSecrets(known ? error.message : `unexpected error: ${(error as Error).message}`);
    if (!known) log.error({ err: error, node: key }, 'a step failed unexpectedly');
    const code = errorCodeOf(error);
    // A step error says whether trying again can help; one that says it cannot is not retried.
    const wait = retryWait(node.kind === 'capability' ? node.retry : undefined, attempt, {
      final: error instanceof StepError && error.retryable === false,
      code,
      retryAfterMs: (error as { retryAfterMs?: unknown }).retryAfterMs,
    });
    if (wait !== undefined) {
      await store.write(db, state, key, node.id, {
        status: 'pending',
        error: message,
        wait_until: Date.now() + wait,
      });
      return;
    }
    await store.finish(kind.pure ? 'staged' : db, state, key, node.id, {
      status: 'failed',
      error: message,
      code,
      begun: kind.pure ? begun : undefined,
    });
  }
}
