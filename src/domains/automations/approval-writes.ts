import type { Capability } from '../../capabilities/capability.ts';
import type { Binding } from '../../flowplan/bindings.ts';
import type { Edge, FlowPlan, PlanNode } from '../../flowplan/plan.ts';
import { resolveInputs, Scope } from '../../flowplan/resolve.ts';
import { maskDeep } from '../../observability/secrets.ts';
import type { Db } from '../../storage/schema.ts';
import { effectiveRole, isParticipant } from '../policies/artifacts.ts';
import type { Actor } from '../workspace/actor.ts';
import { maskSecretKeys } from './mask.ts';

/**
 * What approving lets happen: every write step that waits on an approval, with its capability in
 * words, its target and its input as it would be sent now. The input goes through the resolver the
 * engine's steps use (`src/flowplan/resolve.ts`) over the run's finished steps, so what the card
 * shows is what the step will be given; a field that comes from a step that has not run yet is
 * named with the reason instead. Targets are named only when the reader can open them.
 */

export interface PendingField {
  field: string;
  reason: string;
}

export interface WriteAfterApproval {
  node_id: string;
  /** The step's own title, when the plan gives one. */
  title?: string;
  /** The capability in words: `Append to the document`. */
  action: string;
  capability: string;
  /** What it writes to: a document's title, `owner/repo`, a channel, recipients. */
  target?: string;
  /** For writes of text: the text that would be sent (a document's new text, a message). */
  text?: { label: string; value: string };
  /** The rest of the input as it would be sent now (secrets masked). */
  input: Record<string, unknown>;
  /** Fields that cannot be known until after the approval, and why. */
  pending: PendingField[];
  /** Inside a map: it runs once for each item. */
  for_each?: string;
}

const ACTIONS: Record<string, string> = {
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
const TEXTS: Record<string, [string, string]> = {
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

/** Input fields the target says in words. */
const NAMED_BY_TARGET = new Set(['document_id', 'page_id', 'conversation_id', 'thread_id']);

/** The most of one text shown on a card. */
const TEXT_SHOWN = 4000;

const shorten = (text: string) => (text.length > TEXT_SHOWN ? `${text.slice(0, TEXT_SHOWN)}…` : text);

function firstSentence(text: string): string {
  const end = text.search(/[.;(]/);
  return (end > 0 ? text.slice(0, end) : text).trim();
}

const DONE = new Set(['succeeded', 'simulated', 'skipped']);

interface NodeState {
  status: string;
  output_json: string | null;
}

/** The outputs of a graph's finished steps, as the walker puts them in scope. */
function fill(scope: Scope, nodes: PlanNode[], rows: Map<string, NodeState>, prefix: string): void {
  for (const n of nodes) {
    const row = rows.get(prefix + n.id);
    if (!row || !DONE.has(row.status)) continue;
    if (row.status === 'skipped' && !row.output_json) continue;
    scope.outputs.set(n.id, row.output_json === null ? undefined : (JSON.parse(row.output_json) as unknown));
  }
}

/** The graph an approval's step sits in (the plan, or one item of a map) and the scope it sees. */
function graphOf(
  plan: FlowPlan,
  rows: Map<string, NodeState>,
  trigger: unknown,
  key: string,
): { nodes: PlanNode[]; edges: Edge[]; scope: Scope; id: string } | undefined {
  const parts = key.split('.');
  const id = parts.pop() as string;
  let nodes = plan.nodes;
  let edges = plan.edges ?? [];
  let prefix = '';
  let scope = new Scope(trigger);
  fill(scope, nodes, rows, prefix);
  for (const part of parts) {
    const match = /^(.+)\[(\d+)\]$/.exec(part);
    if (!match) return undefined;
    const map = nodes.find((n) => n.id === match[1]);
    if (map?.kind !== 'map') return undefined;
    const index = Number(match[2]);
    const row = rows.get(prefix + map.id);
    const items = row?.output_json ? (JSON.parse(row.output_json) as { items?: unknown[] }).items : undefined;
    prefix = `${prefix}${part}.`;
    scope = new Scope({ item: items?.[index], index }, scope);
    nodes = map.body.nodes;
    edges = map.body.edges ?? [];
    fill(scope, nodes, rows, prefix);
  }
  return { nodes, edges, scope, id };
}

/** The steps after `from` in its graph, in plan order. */
function after(nodes: PlanNode[], edges: Edge[], from: string): PlanNode[] {
  const seen = new Set<string>();
  const queue = [from];
  while (queue.length > 0) {
    const at = queue.shift() as string;
    for (const e of edges) {
      if (e.from === at && !seen.has(e.to)) {
        seen.add(e.to);
        queue.push(e.to);
      }
    }
  }
  return nodes.filter((n) => seen.has(n.id));
}

export interface WritesContext {
  db: Db;
  /** The person reading the card: targets they cannot open are not named. */
  actor: Actor;
  capabilityOf(key: string): Capability | undefined;
  automationName(id: string): Promise<string | undefined>;
}

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

async function targetOf(
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

/** Why a field of a step waiting on an approval is not known yet. */
function pendingFields(
  input: Record<string, Binding> | undefined,
  scope: Scope,
  nodes: PlanNode[],
  later: Set<string>,
): PendingField[] {
  const pending: PendingField[] = [];
  for (const [field, b] of Object.entries(input ?? {})) {
    if (b.kind !== 'ref' || scope.has(b.node)) continue;
    const source = nodes.find((n) => n.id === b.node);
    const name = source?.title ? `“${source.title}”` : `step ${b.node}`;
    pending.push({
      field,
      reason: later.has(b.node)
        ? `it comes from ${name}, which runs after the approval`
        : `it comes from ${name}, which has not finished yet`,
    });
  }
  return pending;
}

function writesInside(node: PlanNode, ctx: WritesContext): Extract<PlanNode, { kind: 'capability' }>[] {
  if (node.kind === 'capability') return ctx.capabilityOf(node.capability)?.kind === 'write' ? [node] : [];
  if (node.kind === 'map') return node.body.nodes.flatMap((n) => writesInside(n, ctx));
  return [];
}

async function describeWrite(
  ctx: WritesContext,
  node: Extract<PlanNode, { kind: 'capability' }>,
  scope: Scope,
  nodes: PlanNode[],
  later: Set<string>,
  forEach?: string,
): Promise<WriteAfterApproval> {
  const cap = ctx.capabilityOf(node.capability);
  // The same resolution the capability step makes when it starts.
  const resolved = maskSecretKeys(maskDeep(resolveInputs(node.input, scope))) as Record<string, unknown>;
  const pending = forEach
    ? Object.entries(node.input ?? {})
        .filter(([, b]) => b.kind !== 'literal')
        .map(([field]) => ({ field, reason: `it is worked out for each item as ${forEach} runs` }))
    : pendingFields(node.input, scope, nodes, later);
  const shownInput = forEach
    ? Object.fromEntries(
        Object.entries(node.input ?? {}).flatMap(([k, b]) => (b.kind === 'literal' ? [[k, b.value]] : [])),
      )
    : resolved;
  const [textField, textLabel] = TEXTS[node.capability] ?? [];
  const input: Record<string, unknown> = {};
  let text: WriteAfterApproval['text'];
  for (const [k, v] of Object.entries(shownInput)) {
    // The target names these (a title, or that it cannot be opened): never shown as bare ids.
    if (NAMED_BY_TARGET.has(k)) continue;
    if (k === textField && typeof v === 'string') text = { label: textLabel as string, value: shorten(v) };
    else input[k] = typeof v === 'string' ? shorten(v) : v;
  }
  const target = await targetOf(ctx, node.capability, shownInput);
  return {
    node_id: node.id,
    ...(node.title ? { title: node.title } : {}),
    action: ACTIONS[node.capability] ?? (cap ? firstSentence(cap.describe) : node.capability),
    capability: node.capability,
    ...(target ? { target } : {}),
    ...(text ? { text } : {}),
    input,
    pending,
    ...(forEach ? { for_each: forEach } : {}),
  };
}

/** The writes waiting on the approval of step `key` of a run, as they would be sent now. */
export async function writesAfterApproval(
  ctx: WritesContext,
  run: { id: string; trigger_json: string; plan_json: string },
  key: string,
): Promise<WriteAfterApproval[]> {
  const plan = JSON.parse(run.plan_json) as FlowPlan;
  const rowList = await ctx.db
    .selectFrom('run_nodes')
    .select(['node_key', 'status', 'output_json'])
    .where('run_id', '=', run.id)
    .execute();
  const rows = new Map(rowList.map((r) => [r.node_key, r]));
  const graph = graphOf(plan, rows, JSON.parse(run.trigger_json) as unknown, key);
  if (!graph) return [];
  const later = after(graph.nodes, graph.edges, graph.id);
  const laterIds = new Set(later.map((n) => n.id));
  const writes: WriteAfterApproval[] = [];
  for (const node of later) {
    if (node.kind === 'subflow') {
      const name = (await ctx.automationName(node.automation_id)) ?? 'another automation';
      writes.push({
        node_id: node.id,
        ...(node.title ? { title: node.title } : {}),
        action: `Run ${name === 'another automation' ? name : `“${name}”`}, with its own writes`,
        capability: 'subflow',
        input: {},
        pending: [],
      });
      continue;
    }
    const forEach = node.kind === 'map' ? (node.title ? `“${node.title}”` : `step ${node.id}`) : undefined;
    for (const write of writesInside(node, ctx)) {
      writes.push(await describeWrite(ctx, write, graph.scope, graph.nodes, laterIds, forEach));
    }
  }
  return writes;
}
