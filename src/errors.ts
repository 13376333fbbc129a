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
