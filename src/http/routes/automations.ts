import { decideApproval, readSession } from '../contract/people.ts';
import { defineRoute } from '../route.ts';

/** An automation's session and the decisions people make in it. */
export const automationRoutes = [
  defineRoute({
    ...readSession,
    description: 'an automation’s session: messages, run cards, approval cards',
    scopes: ['automations:read'],
    handler: ({ services, actor, params }) => services.automations.session(actor, params.id),
  }),
  defineRoute({
    ...decideApproval,
    description: 'decide an approval: {decision: "approve" | "reject", note?}',
    scopes: ['automations:write'],
    // The contract takes any decision and note: the domain words its own refusals for bad ones.
    bodyHint: 'Send JSON: {"decision": "approve" | "reject", "note"?: "..."}',
    handler: ({ services, actor, params, body }) =>
      services.automations.decideApproval(actor, params.id, body),
  }),
];
