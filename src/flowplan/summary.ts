import type { Catalogue } from '../capabilities/catalogue.ts';
import { DEFAULT_APPROVAL_TIMEOUT_S, type Edge, type FlowPlan, type PlanNode } from './plan.ts';
import { TRANSFORM_OPS } from './transforms.ts';
import type { Binding } from './bindings.ts';
import { topologicalOrder } from './graph.ts';

/** What a plan does, as the automations page shows it. */
export interface PlanSummary {
  steps: string[];
  writes: string[];
  namespaces: string[];
  connectors: string[];
  personal_connectors: string[];
  /** Whether any agent node needs the model. */
  uses_model: boolean;
  subflows: string[];
}

function short(text: string, max = 80): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

export function bindingText(b: Binding): string {
  if (b.kind === 'literal')
    return typeof b.value === 'string' ? `"${short(b.value)}"` : short(JSON.stringify(b.value) ?? 'null');
  if (b.kind === 'ref') return b.path ? `${b.node}.${b.path}` : b.node;
  return b.path ? `trigger.${b.path}` : 'the trigger';
}

function duration(seconds: number): string {
  const units: [number, string][] = [
    [86_400, 'day'],
    [3600, 'hour'],
    [60, 'minute'],
    [1, 'second'],
  ];
  for (const [size, name] of units) {
    if (seconds % size === 0) {
      const n = seconds / size;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${seconds} seconds`;
}

function firstSentence(text: string): string {
  const end = text.search(/[.;(]/);
  return (end > 0 ? text.slice(0, end) : text).trim();
}

function describeNode(n: PlanNode, catalogue: Catalogue): string {
  switch (n.kind) {
    case 'capability': {
      const cap = catalogue.capability(n.capability);
      return cap ? `${firstSentence(cap.describe)} (${n.capability})` : n.capability;
    }
    case 'agent':
      return `Ask the model: ${bindingText(n.instructions)}${n.tools?.length ? ` (may use ${n.tools.join(', ')})` : ''}`;
    case 'transform': {
      const inputs = Object.values(n.input ?? {}).map(bindingText);
      if (n.op === 'template' && typeof n.args?.template === 'string') {
        return `Fill the template "${short(n.args.template, 60)}"${inputs.length ? ` with ${inputs.join(', ')}` : ''}`;
      }
      return `${firstSentence(TRANSFORM_OPS[n.op].describe)}${inputs.length ? ` of ${inputs.join(', ')}` : ''} (${n.op})`;
    }
    case 'branch': {
      const c = n.condition;
      const right = 'right' in c ? ` ${bindingText(c.right)}` : '';
      return `Check whether ${bindingText(c.left)} ${c.op}${right}`;
    }
    case 'map':
      return `For each item of ${bindingText(n.items)}${n.concurrency && n.concurrency > 1 ? ` (${n.concurrency} at a time)` : ''}, collecting ${n.result}:`;
    case 'subflow':
      return `Run automation ${n.automation_id}`;
    case 'approval': {
      const who =
        n.approvers === undefined || n.approvers === 'creator'
          ? 'the creator'
          : n.approvers === 'admins'
            ? 'a workspace admin'
            : n.approvers.join(' or ');
      const timeout = duration(n.timeout_s ?? DEFAULT_APPROVAL_TIMEOUT_S);
      return `Ask ${who} to approve: ${bindingText(n.message)} (${n.on_timeout === 'skip' ? 'skipped' : 'fails'} after ${timeout})`;
    }
    case 'notify':
      return `Notify ${n.to === 'creator' ? 'the creator' : 'the session'}: ${bindingText(n.message)}`;
    case 'delay':
      return 'seconds' in n ? `Wait ${duration(n.seconds)}` : `Wait until ${bindingText(n.until)}`;
  }
}

function stepLines(
  nodes: PlanNode[],
  edges: readonly Edge[],
  prefix: string,
  catalogue: Catalogue,
  out: string[],
): void {
  const byId = new Map(nodes.map((n) => [n.id, n]));
  const order = topologicalOrder(
    nodes.map((n) => n.id),
    edges,
  );
  order.forEach((id, i) => {
    const n = byId.get(id) as PlanNode;
    const number = `${prefix}${i + 1}`;
    const guards = edges
      .filter((e) => e.to === id && e.when !== undefined)
      .map((e) => `when ${e.from} is ${e.when ? 'true' : 'false'}`);
    const condition = guards.length ? ` [${guards.join(' or ')}]` : '';
    out.push(`${number}. ${n.title ?? describeNode(n, catalogue)}${condition}`);
    if (n.kind === 'map') stepLines(n.body.nodes, n.body.edges ?? [], `${number}.`, catalogue, out);
  });
}

function* allNodes(nodes: PlanNode[]): Generator<PlanNode> {
  for (const n of nodes) {
    yield n;
    if (n.kind === 'map') yield* allNodes(n.body.nodes);
  }
}

export function summarise(plan: FlowPlan, catalogue: Catalogue): PlanSummary {
  const steps: string[] = [];
  stepLines(plan.nodes, plan.edges ?? [], '', catalogue, steps);
  const writes = new Set<string>();
  const namespaces = new Set<string>();
  const subflows = new Set<string>();
  let usesModel = false;
  const use = (key: string) => {
    namespaces.add(key.split('.')[0] as string);
    if (catalogue.capability(key)?.kind === 'write') writes.add(key);
  };
  for (const n of allNodes(plan.nodes)) {
    if (n.kind === 'capability') use(n.capability);
    if (n.kind === 'agent') {
      usesModel = true;
      for (const key of n.tools ?? []) use(key);
    }
    if (n.kind === 'subflow') subflows.add(n.automation_id);
  }
  const connectors = new Set<string>();
  const personal = new Set<string>();
  for (const ns of namespaces) {
    const state = catalogue.namespaces.get(ns);
    if (!state || state.plugin.builtin) continue;
    const usable = catalogue.connectors.filter((c) => c.namespace === ns && c.connected);
    for (const c of usable) connectors.add(c.provider);
    if (state.personalOnly) for (const c of usable) personal.add(c.provider);
  }
  return {
    steps,
    writes: [...writes],
    namespaces: [...namespaces],
    connectors: [...connectors],
    personal_connectors: [...personal],
    uses_model: usesModel,
    subflows: [...subflows],
  };
}
