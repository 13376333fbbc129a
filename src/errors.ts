/**
 * Every refusal a domain makes is one of these: a stable code for programs, the sentence a
 * person or agent reads, and optional structured detail (returned as structuredContent).
 * Transports map them to their wire form in one place each; nothing else builds error text.
 */
export type ErrorCode =
  | 'invalid_argument'
  | 'not_found'
  | 'forbidden'
  | 'read_only'
  | 'comment_only'
  | 'archived'
  | 'conversation_archived'
  | 'wrong_type'
  | 'no_content'
  | 'version_conflict'
  | 'thread_not_found'
  | 'insufficient_scope'
  | 'unauthenticated'
  | 'write_conflict'
  | 'excerpt_not_found'
  | 'excerpt_ambiguous'
  | 'not_empty'
  | 'selection_gone'
  | 'too_long'
  | 'invalid_plan'
  | 'paused'
  | 'already_decided'
  | 'not_rerunnable'
  | 'duplicate_delivery'
  | 'rate_limited';

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly data: Record<string, unknown> | undefined;
  /** False for sentences the spec gives without the `Tool failed:` prefix. */
  readonly prefixed: boolean;

  constructor(
    code: ErrorCode,
    message: string,
    options: { data?: Record<string, unknown>; prefixed?: boolean } = {},
  ) {
    super(message);
    this.name = 'DomainError';
    this.code = code;
    this.data = options.data;
    this.prefixed = options.prefixed ?? true;
  }
}

export const notFound = () => new DomainError('not_found', 'Artifact not found');
export const invalid = (message: string) => new DomainError('invalid_argument', message);

/** A step failed in a way worth reporting on the node (not a bug of the engine). */
export class StepError extends Error {
  /**
   * Whether trying the step again can help (a network error) or not (a refusal, a bad input);
   * undefined when the error does not say, and then the step's retry policy decides.
   */
  readonly retryable: boolean | undefined;
  /** Why, as a value the engine acts on (`outcome_unknown` is never retried, `timeout`, …). */
  readonly code: string | undefined;
  /** How long the other side asked to wait before the next attempt (a `Retry-After`). */
  readonly retryAfterMs: number | undefined;
  /**
   * The other side did nothing: it was never reached, or it answered with a refusal or a rate
   * limit. A call sent at most once may then be sent again.
   */
  readonly nothingDone: boolean;
  constructor(
    message: string,
    options: { retryable?: boolean; code?: string; retryAfterMs?: number; nothingDone?: boolean } = {},
  ) {
    super(message);
    this.name = 'StepError';
    this.retryable = options.retryable;
    this.code = options.code;
    this.retryAfterMs = options.retryAfterMs;
    this.nothingDone = options.nothingDone ?? false;
  }
}

/** A cap that stopped a step: never retried. */
export class LimitError extends StepError {
  constructor(message: string) {
    super(message, { retryable: false, code: 'limit' });
    this.name = 'LimitError';
  }
}
