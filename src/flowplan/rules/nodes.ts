import type { z } from 'zod';
import type { Capability } from '../../capabilities/capability.ts';
import { bindingsOf, compatible, jsonOf, outputSchemaOf, typeAt } from '../graph.ts';
import { describeIssues, withArticle, type PathPart } from '../issues.ts';
import type { Binding } from '../bindings.ts';
import type { PlanNode } from '../plan.ts';
import { subflowProblems } from '../subflows.ts';
import type { Report, ValidationContext } from '../validate.ts';
import type { GraphNode, PlanGraph } from './structure.ts';

/**
 * The rules on each node's contents: its bindings (`binding/unknown-node`,
 * `binding/not-upstream`), the capabilities it names (`capability/unknown`,
 * `capability/not-connected`, `capability/input`), the automation a subflow runs
 * (`subflow/unknown`, `subflow/forbidden`, `subflow/cycle`) and an approval's approvers
 * (`approval/unknown-approver`).
 */

type Ref = Extract<Binding, { kind: 'ref' }>;

/** `binding/unknown-node`: a ref names a node of the plan. */
export function bindingUnknownNode(
  gn: GraphNode,
  b: Ref,
  path: PathPart[],
  graph: PlanGraph,
  report: Report,
) {
  if (graph.nodes.has(b.node)) return false;
  report('binding/unknown-node', path, `ref names "${b.node}", which is not a node of this plan`, gn.id);
  return true;
}

/** `binding/not-upstream`: a ref names a node that has finished before this one starts. */
export function bindingNotUpstream(
  gn: GraphNode,
  b: Ref,
  path: PathPart[],
  graph: PlanGraph,
  report: Report,
) {
  const level = gn.level;
  if (level.upstream.get(gn.id)?.has(b.node) || level.outer.has(b.node)) return;
  const target = graph.nodes.get(b.node) as GraphNode;
  const insideMap = target.level.mapId && target.level !== level ? target.level.mapId : undefined;
  report(
    'binding/not-upstream',
    path,
    insideMap
      ? `ref names "${b.node}", a node inside map "${insideMap}"'s body; refer to "${insideMap}" (its results) from after the map instead`
      : `ref names "${b.node}", which does not run before "${gn.id}"; add an edge path from "${b.node}" to "${gn.id}" or refer to an upstream node`,
    gn.id,
  );
}

/** `capability/unknown` and `capability/not-connected`: the capability a node names, if usable. */
export function capabilityKnownAndConnected(
  gn: GraphNode,
  key: string,
  path: PathPart[],
  ctx: ValidationContext,
  report: Report,
): Capability | undefined {
  const ns = ctx.catalogue.namespaceOf(key);
  const cap = ctx.catalogue.capability(key);
  if (!ns || !cap) {
    const known = ns ? ns.plugin.capabilities.map((c) => c.key).join(', ') : undefined;
    report(
      'capability/unknown',
      path,
      known
        ? `${key} is not a capability of ${ns?.plugin.namespace}; use one of ${known}`
        : `${key} is not a known capability; describe_capabilities lists the namespaces and their capabilities`,
      gn.id,
    );
    return undefined;
  }
  if (!ns.connected) {
    report(
      'capability/not-connected',
      path,
      `${key} needs the ${ns.plugin.namespace} connector, which is not connected for you in this workspace; connect it or use another capability`,
      gn.id,
    );
    return undefined;
  }
  return cap;
}

/**
 * `capability/input`: a capability node's input fields against the capability's schema —
 * literals by value, refs by the upstream output schema where one is known.
 */
export function capabilityInput(
  gn: GraphNode,
  input: Record<string, Binding>,
  cap: Capability,
  graph: PlanGraph,
  ctx: ValidationContext,
  report: Report,
) {
  const schema = cap.input;
  const shape = schema.shape as Record<string, z.ZodType>;
  const json = jsonOf(schema) as { properties?: Record<string, Record<string, unknown>> };
  const key = cap.key;
  for (const [field, b] of Object.entries(input)) {
    const path = [...gn.path, 'input', field];
    const fieldSchema = shape[field];
    if (!fieldSchema) {
      report(
        'capability/input',
        path,
        `${key} has no input ${field}; its inputs are ${Object.keys(shape).join(', ')}`,
        gn.id,
      );
      continue;
    }
    if (b.kind === 'literal') {
      const result = fieldSchema.safeParse(b.value);
      if (!result.success) {
        for (const p of describeIssues(result.error.issues, [...path, 'value'])) {
          report('capability/input', p.path, `${key}: ${p.message}`, gn.id);
        }
      }
    } else if (b.kind === 'ref') {
      const source = graph.nodes.get(b.node)?.parsed;
      if (!source) continue;
      const actual = typeAt(outputSchemaOf(source, ctx.catalogue), b.path);
      const expected = json.properties?.[field]?.type;
      if (!compatible(typeof expected === 'string' ? expected : undefined, actual)) {
        report(
          'capability/input',
          path,
          `${key} wants ${field} as ${withArticle(String(expected))}, but ${b.node}${b.path ? `.${b.path}` : ''} is ${withArticle(String(actual))}; point the ref at ${withArticle(String(expected))} or convert it with a transform node`,
          gn.id,
        );
      }
    }
  }
  for (const [field, fieldSchema] of Object.entries(shape)) {
    if (input[field] !== undefined || fieldSchema.safeParse(undefined).success) continue;
    report(
      'capability/input',
      [...gn.path, 'input'],
      `${key} needs input ${field}; add it as a binding`,
      gn.id,
    );
  }
}

/** `capability/input` for an agent node: its tools may only be read capabilities. */
export function agentToolsRead(
  gn: GraphNode,
  tools: readonly string[],
  ctx: ValidationContext,
  report: Report,
) {
  tools.forEach((key, i) => {
    const cap = capabilityKnownAndConnected(gn, key, [...gn.path, 'tools', i], ctx, report);
    if (cap && cap.kind !== 'read') {
      report(
        'capability/input',
        [...gn.path, 'tools', i],
        `${key} writes; an agent node's tools may only be read capabilities (add a capability node after an approval to write)`,
        gn.id,
      );
    }
  });
}

/** `subflow/unknown`, `subflow/forbidden`, `subflow/cycle`: the automation a subflow node runs. */
export function subflowTarget(gn: GraphNode, id: string, ctx: ValidationContext, report: Report) {
  for (const problem of subflowProblems(id, ctx))
    report(problem.rule, [...gn.path, 'automation_id'], problem.message, gn.id);
}

/** `approval/unknown-approver`: every person an approval names is a person of the workspace. */
export function approvalUnknownApprover(
  gn: GraphNode,
  approvers: readonly string[],
  people: ReadonlySet<string>,
  report: Report,
) {
  approvers.forEach((email, i) => {
    if (people.has(email.toLowerCase())) return;
    report(
      'approval/unknown-approver',
      [...gn.path, 'approvers', i],
      `approver ${email} is not a person of this workspace, so nobody could ever decide the approval; name people of the workspace by their e-mail address, or use "creator" or "admins"`,
      gn.id,
    );
  });
}

/** Every rule on one node's contents, in the order its errors are reported. */
export function nodeRules(
  gn: GraphNode,
  n: PlanNode,
  graph: PlanGraph,
  ctx: ValidationContext,
  report: Report,
) {
  for (const [rel, b] of bindingsOf(n)) {
    if (b.kind !== 'ref') continue;
    const path = [...gn.path, ...rel, 'node'];
    if (!bindingUnknownNode(gn, b, path, graph, report)) bindingNotUpstream(gn, b, path, graph, report);
  }
  if (n.kind === 'capability') {
    const cap = capabilityKnownAndConnected(gn, n.capability, [...gn.path, 'capability'], ctx, report);
    if (cap) capabilityInput(gn, n.input ?? {}, cap, graph, ctx, report);
  } else if (n.kind === 'agent') {
    agentToolsRead(gn, n.tools ?? [], ctx, report);
  } else if (n.kind === 'subflow') {
    subflowTarget(gn, n.automation_id, ctx, report);
  } else if (n.kind === 'approval' && Array.isArray(n.approvers) && ctx.people) {
    approvalUnknownApprover(gn, n.approvers, ctx.people, report);
  }
}
