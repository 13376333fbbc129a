import { z } from 'zod';
import { endpoint } from './endpoint.ts';

/** The agent requests on a document's threads: the app shows which agent is answering where. */
export const agentRequests = endpoint({
  method: 'GET',
  path: '/documents/:id/agent-requests',
  output: z.object({
    document_id: z.string(),
    requests: z.array(
      z.object({
        request_id: z.string(),
        thread_id: z.string(),
        agent: z.string(),
        status: z.enum(['pending', 'answering', 'answered', 'failed']),
        requested_by: z.string(),
        reply_comment_id: z.string().optional(),
        flow_version_id: z.string().optional(),
      }),
    ),
  }),
});

export type AgentRequest = z.infer<typeof agentRequests.output>['requests'][number];
