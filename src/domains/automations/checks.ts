import { DomainError } from '../../errors.ts';
import type { Db } from '../../storage/schema.ts';
import type { Actor } from '../workspace/actor.ts';
import type { Catalogue } from '../../capabilities/catalogue.ts';
import type { AutomationsContext } from './context.ts';
import type { PathPart } from '../../flowplan/issues.ts';
import type { FlowPlan, PlanNode, WriteApproval } from '../../flowplan/plan.ts';
import { summarise, type PlanSummary } from '../../flowplan/summary.ts';
import { subflowGraph, subflowTargetsFor } from './subflows.ts';
import type { SubflowTarget } from '../../flowplan/subflows.ts';
import { approverEmails, subflowTargets, validatePlan, type PlanError } from '../../flowplan/validate.ts';

/** Stored with each version: what the plan does, plus whether it writes through its subflows. */
export interface StoredSummary extends PlanSummary {
  writes_transitively: boolean;
}

export function storedSummary(
  plan: FlowPlan,
  catalogue: Catalogue,
  subflows: Map<string, SubflowTarget>,
): StoredSummary {
  const summary = summarise(plan, catalogue);
  return {
    ...summary,
    writes_transitively: summary.writes.length > 0 || summary.subflows.some((id) => subflows.get(id)?.writes),
  };
}

/** The refusal of a plan with problems: every problem, numbered, and nothing stored. */
export function failedPlan(errors: PlanError[]): DomainError {
  const lines = errors.map((e, i) => {
    const at = e.path.join('.');
    return `${i + 1}. [${e.rule}] ${at && !e.message.startsWith(at) ? `${at}: ` : ''}${e.message}`;
  });
  return new DomainError(
    'invalid_plan',
    `the plan has ${errors.length} problem${errors.length === 1 ? '' : 's'}; nothing was stored.\n${lines.join('\n')}`,
    { data: { kind: 'failed', errors } },
  );
}

/**
 * Checks a plan as `actor` would run it: against their catalogue, the automations its subflows
 * name (and, for an automation that exists, whether they run it back) and the approvers it names.
 */
export async function validateFor(
  ctx: AutomationsContext,
  on: Db,
  actor: Actor,
  raw: unknown,
  writeApproval: WriteApproval,
  automationId: string | undefined,
) {
  const catalogue = await ctx.catalogueFor(actor, on);
  const ids = subflowTargets(raw);
  const subflows = await subflowTargetsFor(on, actor, ids);
  const named = approverEmails(raw);
  const people = named.length
    ? await on
        .selectFrom('people')
        .select((eb) => eb.fn<string>('lower', ['email']).as('email'))
        .where('workspace_id', '=', actor.workspaceId)
        .where((eb) => eb(eb.fn('lower', ['email']), 'in', named))
        .execute()
    : [];
  const result = validatePlan(raw, {
    catalogue,
    writeApproval,
    subflows,
    automationId,
    // Only an automation that exists can be run back by its subflows.
    subflowGraph: automationId ? await subflowGraph(on, actor.workspaceId, ids) : undefined,
    people: new Set(people.map((p) => p.email)),
  });
  return { result, catalogue, subflows };
}

function* planNodes(nodes: PlanNode[], base: PathPart[]): Generator<[PlanNode, PathPart[]]> {
  for (const [i, n] of nodes.entries()) {
    const path = [...base, 'nodes', i];
    yield [n, path];
    if (n.kind === 'map') yield* planNodes(n.body.nodes, [...path, 'body']);
  }
}

/**
 * What keeps a plan from being a workspace automation: every step (and the trigger) that uses the
 * publisher's personal connection, which a workspace automation cannot use.
 */
export function personalConnectorProblems(
  plan: FlowPlan,
  catalogue: Catalogue,
  personalProvider: string | undefined,
): PlanError[] {
  const errors: PlanError[] = [];
  for (const [n, path] of planNodes(plan.nodes, [])) {
    const keys = n.kind === 'capability' ? [n.capability] : n.kind === 'agent' ? (n.tools ?? []) : [];
    for (const key of keys) {
      const ns = catalogue.namespaceOf(key);
      if (!ns?.personalOnly) continue;
      errors.push({
        rule: 'scope/personal-connector',
        path,
        node_id: n.id,
        message: `${key} uses your personal ${ns.plugin.name} connection, which a workspace automation cannot use; publish it as personal, or connect ${ns.plugin.name} for the whole workspace`,
      });
    }
  }
  if (personalProvider) {
    errors.push({
      rule: 'scope/personal-connector',
      path: [],
      message: `the trigger listens on your personal ${personalProvider} connection, which a workspace automation cannot use; publish it as personal, or connect ${personalProvider} for the whole workspace`,
    });
  }
  return errors;
}
