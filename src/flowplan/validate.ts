import type { Catalogue } from '../capabilities/catalogue.ts';
import { describeIssues, isObject, type PathPart } from './issues.ts';
import { plan as planSchema, type FlowPlan, type WriteApproval } from './plan.ts';
import { nodeRules } from './rules/nodes.ts';
import { planShape, planTooManyNodes, readGraph } from './rules/structure.ts';
import { writeApprovalWithAutomatic, writeNeedsApproval } from './rules/writes.ts';
import type { SubflowGraph, SubflowTarget } from './subflows.ts';

/**
 * The FlowPlan validator: pure, given a catalogue and what it knows of the automations around the
 * plan, it returns every error at once. Each rule of flowplan.md is a function named after it, in
 * rules/: structure.ts (shape, nodes, edges, cycles, map results), nodes.ts (bindings,
 * capabilities, subflows, approvers) and writes.ts (the write rule).
 */

export type { SubflowTarget } from './subflows.ts';

export type Rule =
  | 'shape'
  | 'plan/too-many-nodes'
  | 'node/duplicate-id'
  | 'edge/unknown-node'
  | 'edge/when'
  | 'dag/cycle'
  | 'capability/unknown'
  | 'capability/not-connected'
  | 'capability/input'
  | 'binding/unknown-node'
  | 'binding/not-upstream'
  | 'write/needs-approval'
  | 'write/approval-with-automatic'
  | 'subflow/unknown'
  | 'subflow/forbidden'
  | 'subflow/cycle'
  | 'approval/unknown-approver'
  | 'map/result'
  | 'scope/personal-connector';

export interface PlanError {
  rule: Rule;
  path: PathPart[];
  node_id?: string;
  message: string;
}

export interface ValidationContext {
  catalogue: Catalogue;
  writeApproval: WriteApproval;
  /** Automations a subflow node may name, by id: those the drafter can open that have a live version. */
  subflows: ReadonlyMap<string, SubflowTarget>;
  /** The automation this plan is a version of, which may not run itself, directly or through others. */
  automationId?: string | undefined;
  /** The subflow calls beyond the plan's own, through live versions, to find a cycle back to automationId. */
  subflowGraph?: SubflowGraph | undefined;
  /**
   * The lower-case e-mail addresses, among those the plan names as approvers, of the workspace's
   * people; when given, every named approver must be one of them.
   */
  people?: ReadonlySet<string> | undefined;
}

export type ValidationResult = { ok: true; plan: FlowPlan } | { ok: false; errors: PlanError[] };

/** Node ids of every subflow node, so the caller can look their targets up before validating. */
export function subflowTargets(raw: unknown): string[] {
  const found: string[] = [];
  const walk = (nodes: unknown) => {
    if (!Array.isArray(nodes)) return;
    for (const n of nodes) {
      if (!isObject(n)) continue;
      if (n.kind === 'subflow' && typeof n.automation_id === 'string') found.push(n.automation_id);
      if (n.kind === 'map' && isObject(n.body)) walk(n.body.nodes);
    }
  };
  if (isObject(raw)) walk(raw.nodes);
  return [...new Set(found)];
}

/** The e-mail addresses approval nodes name as approvers, so the caller can look them up before validating. */
export function approverEmails(raw: unknown): string[] {
  const found: string[] = [];
  const walk = (nodes: unknown) => {
    if (!Array.isArray(nodes)) return;
    for (const n of nodes) {
      if (!isObject(n)) continue;
      if (n.kind === 'approval' && Array.isArray(n.approvers))
        for (const a of n.approvers) if (typeof a === 'string') found.push(a.toLowerCase());
      if (n.kind === 'map' && isObject(n.body)) walk(n.body.nodes);
    }
  };
  if (isObject(raw)) walk(raw.nodes);
  return [...new Set(found)];
}

/** Records one broken rule: where, on which node, and how to fix it. */
export type Report = (rule: Rule, path: PathPart[], message: string, nodeId?: string) => void;

/** Checks a raw plan against the FlowPlan schema and every graph rule; all errors at once. */
export function validatePlan(raw: unknown, ctx: ValidationContext): ValidationResult {
  const errors: PlanError[] = [];
  const report: Report = (rule, path, message, nodeId) =>
    errors.push({ rule, path, ...(nodeId ? { node_id: nodeId } : {}), message });

  if (!isObject(raw)) {
    report(
      'shape',
      [],
      'plan_json must be a FlowPlan object with planVersion, name, description, nodes and edges',
    );
    return { ok: false, errors };
  }
  planShape(raw, report);
  planTooManyNodes(raw, report);
  const graph = readGraph(raw, report);
  for (const gn of graph.nodes.values()) if (gn.parsed) nodeRules(gn, gn.parsed, graph, ctx, report);
  if (ctx.writeApproval === 'automatic') writeApprovalWithAutomatic(graph, report);
  else writeNeedsApproval(graph, ctx, report);

  if (errors.length > 0) return { ok: false, errors };
  // Everything the rules checked is also what the advertised plan schema accepts.
  const full = planSchema.safeParse(raw);
  if (!full.success) {
    return {
      ok: false,
      errors: describeIssues(full.error.issues, []).map((p) => ({ rule: 'shape', ...p })),
    };
  }
  return { ok: true, plan: full.data as FlowPlan };
}
