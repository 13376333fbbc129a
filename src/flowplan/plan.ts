import { z } from 'zod';
import { binding, common, inputs, type Binding } from './bindings.ts';
import { transformNode, type TransformNode } from './transforms.ts';

/**
 * FlowPlan v1 as zod schemas: the validator parses plans with them and describe_capabilities
 * renders them, so what is advertised is what is enforced.
 */

export const PLAN_VERSION = 1;
export const MAX_NODES = 200;
export const MAX_MAP_ITEMS = 1000;
export const DEFAULT_APPROVAL_TIMEOUT_S = 7 * 24 * 3600;
const MAX_DELAY_S = 30 * 24 * 3600;

// ── node kinds ──────────────────────────────────────────────────────────────────────────────────

export const capabilityNode = z
  .strictObject({
    kind: z.literal('capability'),
    ...common,
    capability: z
      .string()
      .regex(/^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$/, 'must be a capability key such as documents.read_document')
      .describe('A capability key <namespace>.<name> from describe_capabilities.'),
    input: inputs.optional(),
    retry: z
      .strictObject({
        max_attempts: z.number().int().min(1).max(5),
        backoff_s: z.number().min(0).max(3600).optional(),
      })
      .optional(),
  })
  .meta({ id: 'CapabilityNode' });

export const agentNode = z
  .strictObject({
    kind: z.literal('agent'),
    ...common,
    instructions: binding,
    input: inputs.optional(),
    output_schema: z
      .record(z.string(), z.unknown())
      .optional()
      .describe('A JSON Schema object; the output then follows it, otherwise it is {text}.'),
    tools: z.array(z.string()).max(20).optional().describe('Keys of read capabilities the model may call.'),
  })
  .meta({ id: 'AgentNode' });

const binaryOps = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains'] as const;
const unaryOps = ['exists', 'truthy'] as const;
export const branchNode = z
  .strictObject({
    kind: z.literal('branch'),
    ...common,
    condition: z.union([
      z.strictObject({ op: z.enum(binaryOps), left: binding, right: binding }),
      z.strictObject({ op: z.enum(unaryOps), left: binding }),
    ]),
  })
  .meta({ id: 'BranchNode' });

export const edge = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    when: z.boolean().optional().describe('Required on edges leaving a branch; forbidden elsewhere.'),
  })
  .meta({ id: 'Edge' });
export type Edge = z.infer<typeof edge>;

export const mapNode = z
  .strictObject({
    kind: z.literal('map'),
    ...common,
    items: binding.describe(`An array of at most ${MAX_MAP_ITEMS} items.`),
    get body() {
      return z.strictObject({ nodes: z.array(node), edges: z.array(edge).optional() });
    },
    result: z.string().describe('The body node whose output is collected for each item.'),
    concurrency: z.number().int().min(1).max(10).optional(),
  })
  .meta({ id: 'MapNode' });

export const subflowNode = z
  .strictObject({
    kind: z.literal('subflow'),
    ...common,
    automation_id: z.string().describe('Its live version runs as a child run.'),
    input: inputs.optional().describe("The child's trigger payload."),
  })
  .meta({ id: 'SubflowNode' });

export const approvalNode = z
  .strictObject({
    kind: z.literal('approval'),
    ...common,
    message: binding,
    approvers: z
      .union([z.enum(['creator', 'admins']), z.array(z.email()).min(1).max(20)])
      .optional()
      .describe('"creator" (default), "admins", or e-mail addresses of people.'),
    timeout_s: z.number().int().min(60).max(MAX_DELAY_S).optional().describe('Default 7 days.'),
    on_timeout: z.enum(['fail', 'skip']).optional().describe('"fail" (default) or "skip".'),
  })
  .meta({ id: 'ApprovalNode' });

export const notifyNode = z
  .strictObject({
    kind: z.literal('notify'),
    ...common,
    message: binding,
    to: z.enum(['session', 'creator']).optional().describe('"session" (default) or "creator".'),
  })
  .meta({ id: 'NotifyNode' });

export const delayNode = z
  .union([
    z.strictObject({
      kind: z.literal('delay'),
      ...common,
      seconds: z.number().int().min(1).max(MAX_DELAY_S),
    }),
    z.strictObject({
      kind: z.literal('delay'),
      ...common,
      until: binding.describe('An ISO-8601 instant.'),
    }),
  ])
  .meta({ id: 'DelayNode' });

export const NODE_KINDS = [
  'capability',
  'agent',
  'transform',
  'branch',
  'map',
  'subflow',
  'approval',
  'notify',
  'delay',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];

export const nodeShapes = {
  capability: capabilityNode,
  agent: agentNode,
  transform: transformNode,
  branch: branchNode,
  map: mapNode,
  subflow: subflowNode,
  approval: approvalNode,
  notify: notifyNode,
  delay: delayNode,
} satisfies Record<NodeKind, z.ZodType>;

export const node: z.ZodType<PlanNode> = z
  .union([
    capabilityNode,
    agentNode,
    transformNode,
    branchNode,
    mapNode,
    subflowNode,
    approvalNode,
    notifyNode,
    delayNode,
  ])
  .meta({ id: 'Node' }) as unknown as z.ZodType<PlanNode>;

/** Parsed nodes, written out because the map body makes the type recursive. */
export type PlanNode =
  | z.infer<typeof capabilityNode>
  | z.infer<typeof agentNode>
  | TransformNode
  | z.infer<typeof branchNode>
  | MapNode
  | z.infer<typeof subflowNode>
  | z.infer<typeof approvalNode>
  | z.infer<typeof notifyNode>
  | z.infer<typeof delayNode>;

export interface MapNode {
  kind: 'map';
  id: string;
  title?: string | undefined;
  items: Binding;
  body: { nodes: PlanNode[]; edges?: Edge[] | undefined };
  result: string;
  concurrency?: number | undefined;
}

export const plan = z
  .strictObject({
    planVersion: z.literal(PLAN_VERSION),
    name: z.string().min(1).max(200),
    description: z.string().max(2000),
    nodes: z.array(node).min(1).describe(`At most ${MAX_NODES} nodes, map bodies included.`),
    edges: z.array(edge).optional(),
  })
  .meta({ id: 'FlowPlan' });
export type FlowPlan = {
  planVersion: 1;
  name: string;
  description: string;
  nodes: PlanNode[];
  edges?: Edge[] | undefined;
};

/** The plan's top level alone: nodes and edges are parsed one by one so every error is found. */
export const planFrame = z.strictObject({
  planVersion: plan.shape.planVersion,
  name: plan.shape.name,
  description: plan.shape.description,
  nodes: z.array(z.unknown()).min(1),
  edges: z.array(z.unknown()).optional(),
});

export const writeApproval = z
  .enum(['required', 'automatic'])
  .describe(
    '"required" (default): every write capability needs an approval node upstream on every path (inside map bodies and subflows too: the approval precedes the map or subflow node). "automatic": writes run unattended and the plan may contain no approval node.',
  );
export type WriteApproval = z.infer<typeof writeApproval>;
