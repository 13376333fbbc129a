import * as contract from '../../contract/people.ts';
import { TOOLS } from '../../mcp/registry.ts';
import { defineRoute } from '../route.ts';

/** Marking the person's notifications read. */
export const personRoutes = [
  defineRoute({
    ...contract.markNotificationsRead,
    description: 'mark the caller’s notifications read: those named in ids, or all',
    scopes: ['documents:read'],
    bodyHint: 'Send JSON: {"ids"?: ["ntf_…", …]}',
    handler: async ({ services, actor, body }) => {
      await services.notifications.markRead(actor, body.ids ?? 'all');
      return { ok: true as const };
    },
  }),
  defineRoute({
    ...contract.mentionables,
    description: 'the people and agents a comment can mention (the mention picker)',
    scopes: ['documents:read'],
    handler: ({ services, actor }) => services.comments.mentionables(actor),
  }),
];

/** Every tool name, for the activity page's filter. */
export const toolNames = () => TOOLS.map((t) => t.name).sort();
