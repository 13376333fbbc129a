import { STATUS_CODES } from 'node:http';
import { maskSecrets } from '../observability/secrets.ts';
import { StepError } from '../errors.ts';
import type { ConnectionError } from '../net/guarded-fetch.ts';

/**
 * How a connector call's failure becomes the node's error, the same for every service: rate
 * limits and unavailability are retried after the wait the service asked for; a refusal (a 4xx)
 * is final and names the service's own message; a write whose fate is open (a 5xx, a connection
 * lost after sending) is never sent again and says so.
 */

export interface Attempt {
  /** As errors name it: `GitHub`, `Slack`, `E-mail`. */
  service: string;
  /** The capability asked for: `create_issue`. */
  action: string;
  /** A write is sent at most once. */
  write: boolean;
}

export interface Answer {
  status: number;
  /** The service's own words, if it gave any. */
  message: string;
  retryAfterMs?: number | undefined;
  /** The service said its rate limit is spent, whatever the status. */
  rateLimited?: boolean;
}

/** Milliseconds to wait, from a `Retry-After` in seconds or as an HTTP date. */
export function retryAfterMs(value: string | null | undefined, now = Date.now()): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

const waited = (ms: number | undefined) =>
  ms === undefined ? '' : `; it asked to wait ${Math.ceil(ms / 1000)} s before trying again`;

const unknownOutcome = (a: Attempt, what: string) =>
  new StepError(
    `outcome unknown: ${what}; ${a.action} may or may not have been done, so check ${a.service} before running this again`,
    { code: 'outcome_unknown' },
  );

/** What a failed answer means for the run. */
export type Outcome = 'rate_limited' | 'unavailable' | 'server_error' | 'refused';

/** The node's error for an answer the service gave (`said` is its detail: ` (401 Unauthorized): Bad credentials`). */
export function outcomeFailure(a: Attempt, outcome: Outcome, said: string, wait?: number): StepError {
  const retry = { retryable: true, nothingDone: true, retryAfterMs: wait };
  switch (outcome) {
    case 'rate_limited':
      return new StepError(`${a.service} rate-limited ${a.action}${said}${waited(wait)}`, retry);
    case 'unavailable':
      return new StepError(`${a.service} was unavailable for ${a.action}${said}${waited(wait)}`, retry);
    case 'server_error':
      if (a.write) return unknownOutcome(a, `${a.service} answered${said}`);
      return new StepError(`${a.service} failed ${a.action}${said}`, retry);
    case 'refused':
      // A refusal is the service's answer: asking again gets the same one.
      return new StepError(`${a.service} refused ${a.action}${said}`, {
        nothingDone: true,
        retryable: false,
      });
  }
}

/** The node's error for an HTTP answer that is not a success. */
export function answerFailure(a: Attempt, answer: Answer): StepError {
  const { status } = answer;
  const named = `${status} ${STATUS_CODES[status] ?? ''}`.trim();
  const said = ` (${named})${answer.message === '' ? '' : `: ${answer.message}`}`;
  const outcome: Outcome =
    status === 429 || answer.rateLimited
      ? 'rate_limited'
      : status === 503
        ? 'unavailable'
        : status >= 500
          ? 'server_error'
          : 'refused';
  return outcomeFailure(a, outcome, said, answer.retryAfterMs);
}

/** The node's error for a connection that failed. */
export function connectionFailure(a: Attempt, error: ConnectionError): StepError {
  if (a.write && error.reached) return unknownOutcome(a, error.message);
  return new StepError(error.message, { retryable: true, nothingDone: true });
}

/** The text with the connection's secrets, and every secret held, replaced: messages may quote a service. */
export function redact(text: string, secrets: readonly string[]): string {
  return maskSecrets(text, secrets);
}
