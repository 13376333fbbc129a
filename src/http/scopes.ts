import type { Scope } from '../domains/workspace/actor.ts';

/** `the documents:read scope`, `the documents:read and automations:read scopes`. */
export function scopeWords(needed: readonly Scope[]): string {
  const names = needed.length > 1 ? `${needed.slice(0, -1).join(', ')} and ${needed.at(-1)}` : needed[0];
  return `the ${names} scope${needed.length > 1 ? 's' : ''}`;
}

/** What each scope lets an app do, in the words a person reads on the consent and settings pages. */
export const SCOPE_IN_WORDS: Record<Scope, string> = {
  'documents:read': 'Read your documents, pages and tables, and their comments',
  'documents:write': 'Create and change documents and pages, and comment on them',
  'automations:read': 'See your automations, their runs and sessions',
  'automations:write': 'Create, change and run automations, and decide approvals',
};

/**
 * The scope a client is told to ask for first (the 401 challenge names it), and the one an
 * authorization request without `scope` gets. Consent is per scope and happens when a tool first
 * needs one (the 403 challenge names it), so no client asks for all four up front; reading is
 * where nearly every session starts.
 */
export const FIRST_SCOPE: Scope = 'documents:read';
