import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { DomainError, type ErrorCode } from '../errors.ts';
import { log } from '../observability/log.ts';
import { escapeHtml, htmlPage } from './html.ts';

/** The one map from a refusal's code to its HTTP status; any code not named is a 400. */
const STATUS: Partial<Record<ErrorCode, ContentfulStatusCode>> = {
  not_found: 404,
  thread_not_found: 404,
  unauthenticated: 401,
  forbidden: 403,
  insufficient_scope: 403,
  read_only: 403,
  comment_only: 403,
  archived: 409,
  conversation_archived: 409,
  already_decided: 409,
  not_rerunnable: 409,
  version_conflict: 409,
  write_conflict: 409,
  rate_limited: 429,
  too_long: 413,
};

export function statusOf(code: ErrorCode): ContentfulStatusCode {
  return STATUS[code] ?? 400;
}

/** Whether a path answers in JSON (the API and the hooks) rather than with a page. */
export const speaksJson = (path: string) => path.startsWith('/api/') || path.startsWith('/hooks/');

/**
 * The app's one error handler: a refusal becomes its status and sentence (JSON on the API, a page
 * elsewhere); anything else is logged with its cause and answered as an unexpected error.
 */
export function answerError(error: Error, c: Context): Response {
  if (error instanceof DomainError) {
    const status = statusOf(error.code);
    const retry = error.data?.retry_after_seconds;
    if (typeof retry === 'number') c.header('Retry-After', String(retry));
    if (speaksJson(c.req.path)) {
      return c.json({ error: error.code, message: error.message, ...(error.data ?? {}) }, status);
    }
    return c.html(
      htmlPage('Tandem', `<p class="note" role="alert">${escapeHtml(error.message)}</p>`),
      status,
    );
  }
  log.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed');
  return c.json({ error: 'internal', message: 'An unexpected server error stopped this request.' }, 500);
}
