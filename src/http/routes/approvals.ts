import { DomainError } from '../../errors.ts';
import { decideApproval, readApproval, readSession, runApprovals } from '../../contract/people.ts';
import { defineRoute } from '../route.ts';

/** An automation's session, its approval cards and the decisions people make on them. */
export const approvalRoutes = [
  defineRoute({
    ...readSession,
    description: 'an automation’s session: messages, run cards, approval cards',
    scopes: ['automations:read'],
    handler: ({ services, actor, params }) => services.automations.session(actor, params.id),
  }),
  defineRoute({
    ...readApproval,
    description:
      'one approval’s card: its question, its state and, while it waits, the writes approving lets happen',
    scopes: ['automations:read'],
    handler: ({ services, actor, params }) => services.automations.approvalCard(actor, params.id),
  }),
  defineRoute({
    ...runApprovals,
    description: 'the approval cards of one run',
    scopes: ['automations:read'],
    handler: async ({ services, actor, params }) => {
      const approvals = await services.automationViews.runApprovals(actor, {
        automation_id: params.id,
        run_id: params.run_id,
      });
      if (!approvals) throw new DomainError('not_found', 'Run not found');
      return { approvals };
    },
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
