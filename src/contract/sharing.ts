import { z } from 'zod';
import { choiceParam, endpoint } from './endpoint.ts';

const audienceRole = z.enum(['editor', 'commenter', 'viewer']);

export const sharing = z.object({
  scope: z.enum(['user', 'pod', 'org']),
  pod_id: z.string().optional(),
  scope_role: audienceRole,
  people: z.array(z.object({ user_id: z.string(), name: z.string(), role: audienceRole })),
});
export type SharingState = z.infer<typeof sharing>;

/** Who can open an artifact; only its owner and workspace admins see more than not found. */
export const readSharing = endpoint({
  method: 'GET',
  path: '/artifacts/:id/sharing',
  output: sharing,
});

/** Replaces who can open it; takes effect at once, on open live connections too. */
export const writeSharing = endpoint({
  method: 'PUT',
  path: '/artifacts/:id/sharing',
  body: z.object({
    scope: z.custom<'user' | 'pod' | 'org'>(),
    pod_id: z.custom<string>().optional(),
    scope_role: z.custom<'editor' | 'commenter' | 'viewer'>().optional(),
    people: z
      .custom<{ user_id: string; role: 'editor' | 'commenter' | 'viewer'; name?: string }[]>()
      .optional(),
  }),
  output: sharing,
});

/** What the Share dialog offers: the workspace's name, the owner's pods, the workspace's people. */
export const sharingChoices = endpoint({
  method: 'GET',
  path: '/artifacts/:id/sharing/choices',
  output: z.object({
    workspace_name: z.string(),
    pods: z.array(z.object({ pod_id: z.string(), name: z.string() })),
    people: z.array(z.object({ user_id: z.string(), name: z.string() })),
  }),
});

/** Whom a new document can be opened by: the caller's workspace and the pods they belong to. */
export const audiences = endpoint({
  method: 'GET',
  path: '/audiences',
  output: z.object({
    workspace_name: z.string(),
    pods: z.array(z.object({ pod_id: z.string(), name: z.string() })),
  }),
});

/** A document's or page's text at its current version, as a file (an `export` version row). */
export const exportArtifact = endpoint({
  method: 'GET',
  path: '/artifacts/:id/export',
  query: { format: choiceParam('markdown', 'html') },
  output: z.string(),
});
