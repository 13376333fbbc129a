import * as contract from '../../contract/agents.ts';
import { defineRoute } from '../route.ts';

/** Which agents are answering on a document's threads (for anyone who can open it). */
export const agentRoutes = [
  defineRoute({
    ...contract.agentRequests,
    description: 'the agent requests on a document’s threads and how far each has got',
    scopes: ['documents:read'],
    handler: ({ services, actor, params }) => services.agents.requests(actor, { document_id: params.id }),
  }),
];
