import { DomainError } from '../errors.ts';

export interface FailureResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  isError: true;
  structuredContent?: Record<string, unknown>;
}

/** The one place a refusal becomes the spec's wording on the MCP wire. */
export function failure(error: DomainError): FailureResult {
  const text = error.prefixed ? `Tool failed: ${error.message}` : error.message;
  return {
    content: [{ type: 'text', text }],
    isError: true,
    ...(error.data ? { structuredContent: error.data } : {}),
  };
}

export function unexpectedFailure(reference: string): FailureResult {
  return {
    content: [
      {
        type: 'text',
        text: `Tool failed: an unexpected server error stopped this call (reference ${reference}); try again.`,
      },
    ],
    isError: true,
  };
}

export function scopeFailure(tool: string, scope: string): FailureResult {
  return failure(
    new DomainError(
      'insufficient_scope',
      `${tool} needs the ${scope} scope, which this connection was not granted`,
    ),
  );
}

export { DomainError };
