import type { Binding } from '../../flowplan/bindings.ts';
import type { FlowPlan, PlanNode } from '../../flowplan/plan.ts';
import { resolveInputs, type Scope } from '../../flowplan/resolve.ts';
import { maskDeep } from '../../observability/secrets.ts';
import { maskSecretKeys } from './mask.ts';
import { ACTIONS, TEXTS, targetOf, type WritesContext } from './approval-targets.ts';
import { computePureSteps, graphOf, stepsAfter } from './approval-scope.ts';

export type { WritesContext } from './approval-targets.ts';

/**
 * What approving lets happen: every write step that waits on an approval, with its capability in
 * words, its target and its input as it would be sent now. The input goes through the resolver the
 * engine's steps use (`src/flowplan/resolve.ts`) over the run's finished steps, so what the card
 * shows is what the step will be given. Pure steps between the approval and the write (transforms)
 * are worked out now with the engine's own code, so a template's text shows too; a field that
 * comes from a step that has not run yet (or cannot be worked out before it) is named with the
 * reason instead. Targets are named only when the reader can open them.
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

/** Input fields the target says in words. */
const NAMED_BY_TARGET = new Set(['document_id', 'page_id', 'conversation_id', 'thread_id']);

/** The most of one text shown on a card. */
const TEXT_SHOWN = 4000;

const shorten = (text: string) => (text.length > TEXT_SHOWN ? `${text.slice(0, TEXT_SHOWN)}…` : text);

function firstSentence(text: string): string {
  const end = text.search(/[.;(]/);
  return (end > 0 ? text.slice(0, end) : text).trim();
}

/** A step as the card names it: its title, or its id. */
function nameOf(nodes: PlanNode[], id: string): string {
  const node = nodes.find((n) => n.id === id);
  return node?.title ? `“${node.title}”` : `step ${id}`;
}

/** Why a field of a step waiting on an approval is not known yet. */
function pendingFields(
  input: Record<string, Binding> | undefined,
  scope: Scope,
  nodes: PlanNode[],
  later: Later,
): PendingField[] {
  const pending: PendingField[] = [];
  for (const [field, b] of Object.entries(input ?? {})) {
    if (b.kind !== 'ref' || scope.has(b.node)) continue;
    const source = nodes.find((n) => n.id === b.node);
    const name = nameOf(nodes, b.node);
    const failed = later.failed.get(b.node);
    // A transform waits on a step of its own that has not run: say which.
    const waitsOn =
      source?.kind === 'transform'
        ? Object.values(source.input ?? {}).find((i) => i.kind === 'ref' && !scope.has(i.node))
        : undefined;
    pending.push({
      field,
      reason:
        failed !== undefined
          ? `it comes from ${name}, which cannot be worked out yet (${failed})`
          : waitsOn?.kind === 'ref' && later.ids.has(b.node)
            ? `it comes from ${name}, which needs the output of ${nameOf(nodes, waitsOn.node)}, which runs after the approval`
            : later.ids.has(b.node)
              ? `it comes from ${name}, which runs after the approval`
              : `it comes from ${name}, which has not finished yet`,
    });
  }
  return pending;
}

/** The steps after the approval, and the pure ones among them that could not be worked out now. */
interface Later {
  ids: Set<string>;
  failed: Map<string, string>;
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
  later: Later,
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
  const later = stepsAfter(graph.nodes, graph.edges, graph.id);
  // Transforms between the approval and a write are worked out now, as the engine will.
  const failed = computePureSteps(later, graph.scope);
  const laterIds = { ids: new Set(later.map((n) => n.id)), failed };
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
