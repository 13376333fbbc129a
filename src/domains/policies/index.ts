/**
 * Who may do what, in one module for every transport (MCP tools, the JSON API and pages, the
 * live-editing socket, OAuth consent). Each rule loads what it judges inside the caller's
 * transaction, and anything the person cannot reach fails exactly like an id that does not exist.
 *
 * - artifacts: a person's effective role on a document, page or table; conversations and pods
 *   they take part in; what a role allows (`requireRole`).
 * - automations: who may open an automation and who may control it (creator or admins).
 * - sessions: who may see an automation's session.
 * - approvals: who may decide an approval step.
 * - accounts: which workspaces a signed-in account may act in (sign-in, switching, consent).
 */
export * from './artifacts.ts';
export * from './automations.ts';
export * from './sessions.ts';
export * from './approvals.ts';
export { membershipsOf as workspacesOf } from '../auth/accounts.ts';
