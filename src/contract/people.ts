import { z } from 'zod';
import { choiceParam, endpoint, integerParam, textParam } from './endpoint.ts';

const workspace = z.object({ workspace_id: z.string(), name: z.string() });

/** Who is signed in, the workspace they act in and every workspace they belong to. */
export const me = endpoint({
  method: 'GET',
  path: '/me',
  output: z.object({
    person_id: z.string(),
    name: z.string(),
    email: z.string(),
    workspace,
    workspaces: z.array(workspace),
    scopes: z.array(z.string()),
    /** Whether they are an admin of this workspace (Settings shows more). */
    admin: z.boolean(),
  }),
});

/** Switches the signed-in browser to another workspace of the same account. */
export const switchWorkspace = endpoint({
  method: 'PUT',
  path: '/me/workspace',
  body: z.object({ workspace_id: z.string().min(1) }),
  output: z.object({ workspace }),
});

export const notification = z.object({
  id: z.string(),
  kind: z.string(),
  body: z.string(),
  artifact_id: z.string().optional(),
  thread_id: z.string().optional(),
  /** An automation's notice: the automation and the run it is about (`/automations/{id}?run={run_id}`). */
  automation_id: z.string().optional(),
  run_id: z.string().optional(),
  /** An approval's notice: the approval, whose card the notification shows. */
  approval_id: z.string().optional(),
  read: z.boolean(),
  /** Milliseconds since the epoch. */
  at: z.number(),
});
export type Notification = z.infer<typeof notification>;

export const listNotifications = endpoint({
  method: 'GET',
  path: '/notifications',
  query: { limit: integerParam(1, 100) },
  output: z.object({ notifications: z.array(notification) }),
});

/** How many of the caller's notifications are unread (the menu says it). */
export const unreadNotifications = endpoint({
  method: 'GET',
  path: '/notifications/unread',
  output: z.object({ unread: z.number() }),
});

export const markNotificationsRead = endpoint({
  method: 'POST',
  path: '/notifications/read',
  body: z.object({
    ids: z
      .array(z.string(), { error: 'ids must be a list of notification ids' })
      .max(500, 'ids may name at most 500 notifications')
      .optional(),
  }),
  output: z.object({ ok: z.literal(true) }),
});

/** The handles the mention picker of comment boxes offers: the workspace's people and agents. */
export const mentionables = endpoint({
  method: 'GET',
  path: '/mentionables',
  output: z.object({
    people: z.array(z.object({ handle: z.string(), name: z.string() })),
    agents: z.array(z.string()),
  }),
});
export type Mentionables = z.infer<typeof mentionables.output>;

export const activityEntry = z.object({
  id: z.string(),
  tool: z.string(),
  targets: z.array(z.string()),
  /** The objects touched, named as the reader may see them now. */
  named: z
    .array(z.object({ id: z.string(), kind: z.string(), label: z.string(), open: z.boolean() }))
    .optional(),
  /** What the call came through: an app, a token, the command line, an agent. */
  via: z.object({ key: z.string(), label: z.string() }).optional(),
  outcome: z.string(),
  error_code: z.string().optional(),
  duration_ms: z.number(),
  at: z.number(),
});
export type ActivityEntry = z.infer<typeof activityEntry>;

export const listActivity = endpoint({
  method: 'GET',
  path: '/activity',
  query: {
    limit: integerParam(1, 100),
    tool: textParam(100),
    outcome: choiceParam('ok', 'error'),
    /** An entry id: the entries older than it. */
    before: textParam(100),
    /** What the calls came through (`via.key` of an entry). */
    via: textParam(200),
  },
  output: z.object({
    activity: z.array(activityEntry),
    /** Every tool an agent can call, for the filter. */
    tools: z.array(z.string()),
    /** What the person's calls came through, for the filter by app. */
    vias: z.array(z.object({ key: z.string(), label: z.string() })).optional(),
  }),
});

/** A write step an approval guards, as it would be sent now (`Writes after approval`). */
export const writeAfterApproval = z.object({
  node_id: z.string(),
  title: z.string().optional(),
  /** The capability in words: `Append to the document`. */
  action: z.string(),
  capability: z.string(),
  /** A document's title, `owner/repo`, a channel, recipients. */
  target: z.string().optional(),
  text: z.object({ label: z.string(), value: z.string() }).optional(),
  input: z.record(z.string(), z.unknown()),
  /** Fields known only after the approval, and why. */
  pending: z.array(z.object({ field: z.string(), reason: z.string() })),
  for_each: z.string().optional(),
});
export type WriteAfterApproval = z.infer<typeof writeAfterApproval>;

export const approvalCard = z.object({
  type: z.literal('approval'),
  approval_id: z.string(),
  run_id: z.string(),
  node_id: z.string(),
  status: z.string(),
  message: z.string(),
  automation_id: z.string().optional(),
  automation_name: z.string().optional(),
  session_id: z.string().optional(),
  approvers: z.string().optional(),
  can_decide: z.boolean().optional(),
  decided_by: z.string().optional(),
  decided_at: z.string().optional(),
  note: z.string().optional(),
  created_at: z.string().optional(),
  expires_at: z.string().optional(),
  /** While it waits: what approving lets happen. */
  writes: z.array(writeAfterApproval).optional(),
});
export type ApprovalCard = z.infer<typeof approvalCard>;

export const sessionMessage = z.object({
  message_id: z.string(),
  kind: z.string(),
  author: z.string().optional(),
  body: z.string(),
  card: z.record(z.string(), z.unknown()).optional(),
  created_at: z.string(),
});
export type SessionMessage = z.infer<typeof sessionMessage>;

export const readSession = endpoint({
  method: 'GET',
  path: '/sessions/:id',
  output: z.object({
    session_id: z.string(),
    title: z.string(),
    automation_id: z.string().optional(),
    messages: z.array(sessionMessage),
  }),
});

export const decideApproval = endpoint({
  method: 'POST',
  path: '/approvals/:id',
  body: z.object({ decision: z.custom<'approve' | 'reject'>(), note: z.custom<string>().optional() }),
  output: z.object({
    approval_id: z.string(),
    run_id: z.string(),
    status: z.string(),
    decided_by: z.string(),
    decided_at: z.string(),
    note: z.string().optional(),
  }),
});

export const awaitingApprovals = endpoint({
  method: 'GET',
  path: '/approvals',
  output: z.object({ approvals: z.array(approvalCard) }),
});

/** One approval's card, wherever it is shown (a notification, a link). */
export const readApproval = endpoint({
  method: 'GET',
  path: '/approvals/:id',
  output: approvalCard,
});

/** The approvals of one run, for the run's page. */
export const runApprovals = endpoint({
  method: 'GET',
  path: '/automations/:id/runs/:run_id/approvals',
  output: z.object({ approvals: z.array(approvalCard) }),
});
