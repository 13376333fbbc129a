import { toolNames } from './people.ts';
import { listActivity, listNotifications, unreadNotifications } from '../../contract/people.ts';
import { defineRoute } from '../route.ts';

/** What the person was told, and what agents did for them. */
export const activityRoutes = [
  defineRoute({
    ...listNotifications,
    description: 'mentions and automation notices for the caller, newest first',
    // Mentions quote comments on documents and pages.
    scopes: ['documents:read'],
    handler: async ({ services, actor, query }) => ({
      notifications: await services.notifications.list(actor, query.limit ?? 100),
    }),
  }),
  defineRoute({
    ...unreadNotifications,
    description: 'how many of the caller’s notifications are unread',
    scopes: [],
    handler: async ({ services, actor }) => ({ unread: await services.notifications.unread(actor) }),
  }),
  defineRoute({
    ...listActivity,
    description:
      'the caller’s agent activity history (every tool call, reads included); tool, outcome and before narrow it',
    // Every tool call, naming the documents and automations it touched.
    scopes: ['documents:read', 'automations:read'],
    handler: async ({ services, actor, query }) => ({
      activity: await services.activity.list(actor, query.limit ?? 100, {
        tool: query.tool,
        outcome: query.outcome,
        before: query.before,
        via: query.via,
      }),
      tools: toolNames(),
      vias: await services.activity.vias(actor),
    }),
  }),
];
