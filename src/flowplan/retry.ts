import type { PlanNode } from './plan.ts';

/** A capability node's retry policy: how many attempts, and the wait before the second. */
export type RetryPolicy = NonNullable<Extract<PlanNode, { kind: 'capability' }>['retry']>;

/** How an attempt failed, as far as the retry policy cares. */
export interface Failure {
  /** The step said trying again cannot help (a refusal). */
  final: boolean;
  /** `outcome_unknown` and `limit` are never tried again. */
  code: string | null | undefined;
  /** How long the other side asked to wait (a `Retry-After`). */
  retryAfterMs?: unknown;
}

/**
 * The wait in milliseconds before the next attempt of a failed step, or undefined when it is not
 * tried again: the policy allows another attempt and the failure is one trying again can help.
 * The wait doubles with each attempt from `backoff_s` (1 s unless given); a longer wait the
 * service asked for wins.
 */
export function retryWait(
  policy: RetryPolicy | undefined,
  attempt: number,
  failure: Failure,
): number | undefined {
  if (failure.code === 'busy' && !failure.final) return busyWait(policy, attempt, failure.retryAfterMs);
  if (!policy || attempt >= policy.max_attempts || failure.final) return undefined;
  if (failure.code === 'outcome_unknown' || failure.code === 'limit') return undefined;
  const backoff = (policy.backoff_s ?? 1) * 1000 * 2 ** (attempt - 1);
  const asked = failure.retryAfterMs;
  return typeof asked === 'number' && asked > backoff ? asked : backoff;
}

/** Attempts a step gets when what it writes is busy (another writer holds the document). */
export const BUSY_ATTEMPTS = 5;

/**
 * A step whose document another writer held did nothing: it is tried again, with or without a
 * retry policy, after the wait the document named (at least 1 s), up to BUSY_ATTEMPTS attempts or
 * the policy's, whichever is more.
 */
function busyWait(policy: RetryPolicy | undefined, attempt: number, asked: unknown): number | undefined {
  if (attempt >= Math.max(BUSY_ATTEMPTS, policy?.max_attempts ?? 0)) return undefined;
  return typeof asked === 'number' && asked > 1000 ? asked : 1000;
}
