import type { PlanNode } from '../../flowplan/plan.ts';
import { approvalNode } from './approval.ts';
import { agentNode, capabilityNode } from './capability.ts';
import type { NodeKind } from './context.ts';
import { delayNode } from './delay.ts';
import { mapNode } from './map.ts';
import { notifyNode } from './notify.ts';
import { branchNode, transformNode } from './pure.ts';
import { subflowNode } from './subflow.ts';

/** Every node kind, each one object with its behaviour. */
const KINDS: NodeKind[] = [
  transformNode,
  branchNode,
  capabilityNode,
  agentNode,
  notifyNode,
  delayNode,
  approvalNode,
  subflowNode,
  mapNode,
] as NodeKind[];

const byKind = new Map(KINDS.map((k) => [k.kind, k]));

export function nodeKind(node: PlanNode): NodeKind {
  const kind = byKind.get(node.kind);
  if (!kind) throw new Error(`no behaviour for node kind ${node.kind}`);
  return kind;
}
