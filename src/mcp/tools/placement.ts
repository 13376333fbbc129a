import { z } from 'zod';
import { specChecked } from '../tool.ts';

/** Where create_document and create_page put what they make: a conversation (posts a card) or a scope. */
export const placement = {
  conversation_id: z.string().optional(),
  scope: specChecked({
    type: 'string',
    enum: ['user', 'pod', 'org'],
    description: 'Default user; pod needs pod_id.',
  }),
  pod_id: z.string().optional(),
};
