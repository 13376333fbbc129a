import type { Capability } from '../../capabilities/capability.ts';
import type { Db } from '../../storage/schema.ts';
import { effectiveRole, isParticipant } from '../policies/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';

/**
 * How an approval card says a write in words: the capability as an action, the field holding the
 * text it sends, and its target named for the reader (only what they can open is named).
 */

export interface WritesContext {
  db: Db;
  /** The person reading the card: targets they cannot open are not named. */
  actor: Actor;
  capabilityOf(key: string): Capability | undefined;
  automationName(id: string): Promise<string | undefined>;
}

/** Each write capability as the card says it: `Append to` “Plan”. */
export const ACTIONS: Record<string, string> = {
  'documents.append_to_document': 'Append to',
  'documents.create_document': 'Create the document',
  'pages.write_page': 'Replace the HTML of',
  'comments.add_comment': 'Comment on',
  'conversations.post_message': 'Post a message in',
  'github.create_issue': 'Open a GitHub issue in',
  'github.comment_on_issue': 'Comment on a GitHub issue in',
  'slack.post_message': 'Post to Slack in',
  'slack.post_to_thread': 'Reply in a Slack thread in',
  'email.send': 'Send an e-mail to',
  'http.post': 'Send a POST request to',
};

/** The field holding the text a write sends, and how the card labels it. */
export const TEXTS: Record<string, [string, string]> = {
  'documents.append_to_document': ['content_markdown', 'Text to be added'],
  'documents.create_document': ['content_markdown', 'Text of the new document'],
  'pages.write_page': ['html', 'The page’s new HTML'],
  'comments.add_comment': ['body', 'Comment'],
  'conversations.post_message': ['text', 'Message'],
  'github.create_issue': ['body', 'Issue text'],
  'github.comment_on_issue': ['body', 'Comment'],
  'slack.post_message': ['text', 'Message'],
  'slack.post_to_thread': ['text', 'Message'],
  'email.send': ['body', 'E-mail text'],
};

/** A target's name for the reader: a title they can open, or words that name nothing. */
async function artifactName(ctx: WritesContext, id: unknown, kind: string): Promise<string> {
  if (typeof id !== 'string') return `a ${kind}`;
  const artifact = await ctx.db
    .selectFrom('artifacts')
    .selectAll()
    .where('id', '=', id)
    .where('workspace_id', '=', ctx.actor.workspaceId)
    .executeTakeFirst();
  const role = artifact ? await effectiveRole(ctx.db, ctx.actor.personId, artifact) : null;
  return artifact && role ? `“${artifact.title}”` : `a ${kind} you can’t open`;
}

/** What a write writes to, in words: a document's title, `owner/repo`, a channel, recipients. */
export async function targetOf(
  ctx: WritesContext,
  key: string,
  input: Record<string, unknown>,
): Promise<string | undefined> {
  switch (key) {
    case 'documents.append_to_document':
    case 'comments.add_comment':
      return input.document_id === undefined ? undefined : artifactName(ctx, input.document_id, 'document');
    case 'pages.write_page':
      return input.page_id === undefined ? undefined : artifactName(ctx, input.page_id, 'page');
    case 'documents.create_document':
      return typeof input.title === 'string' ? `“${input.title}”` : undefined;
    case 'conversations.post_message': {
      if (input.conversation_id === undefined) return 'this automation’s session';
      const id = String(input.conversation_id);
      const room = await ctx.db
        .selectFrom('conversations')
        .select('title')
        .where('id', '=', id)
        .where('workspace_id', '=', ctx.actor.workspaceId)
        .executeTakeFirst();
      return room && (await isParticipant(ctx.db, id, ctx.actor.personId))
        ? `“${room.title}”`
        : 'a conversation you can’t open';
    }
    case 'github.create_issue':
      return typeof input.repo === 'string' ? input.repo : undefined;
    case 'github.comment_on_issue':
      return typeof input.repo === 'string'
        ? `${input.repo}${input.number !== undefined ? ` #${String(input.number)}` : ''}`
        : undefined;
    case 'slack.post_message':
    case 'slack.post_to_thread':
      return typeof input.channel === 'string' ? input.channel : undefined;
    case 'email.send':
      return Array.isArray(input.to) ? input.to.map(String).join(', ') : undefined;
    case 'http.post':
      return typeof input.url === 'string' ? input.url : undefined;
    default:
      return undefined;
  }
}
