import { z } from 'zod';

/**
 * FlowPlan v1 as zod schemas: the validator parses plans with them and describe_capabilities
 * renders them, so what is advertised is what is enforced.
 */

export const PLAN_VERSION = 1;
export const MAX_NODES = 200;
export const MAX_MAP_ITEMS = 1000;
export const DEFAULT_APPROVAL_TIMEOUT_S = 7 * 24 * 3600;
const MAX_DELAY_S = 30 * 24 * 3600;

const nodeId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1–64 letters, digits, "_" or "-"')
  .describe('Unique in the plan (map bodies included).');

export const valuePath = z
  .string()
  .regex(/^$|^[^.]+(\.[^.]+)*$/, 'must be dot-separated keys and array indexes such as items.0.title, or ""')
  .describe('Dot-separated keys and array indexes (items.0.title); "" is the whole value.');

export const literalBinding = z
  .strictObject({ kind: z.literal('literal'), value: z.unknown() })
  .describe('A fixed value.');
export const refBinding = z
  .strictObject({
    kind: z.literal('ref'),
    node: z.string().describe('An upstream node id.'),
    path: valuePath,
  })
  .describe('Part of the output of a node upstream of this one.');
export const triggerBinding = z
  .strictObject({ kind: z.literal('trigger'), path: valuePath })
  .describe('Part of the trigger payload (inside a map body: {item, index}).');

export const binding = z
  .discriminatedUnion('kind', [literalBinding, refBinding, triggerBinding])
  .meta({ id: 'Binding' });
export type Binding = z.infer<typeof binding>;

const inputs = z.record(z.string(), binding).describe('Named inputs, each a binding.');
const common = {
  id: nodeId,
  title: z.string().min(1).max(200).optional().describe('Shown in steps instead of the generated text.'),
};

// ── transform operations ────────────────────────────────────────────────────────────────────────

const items = binding.describe('An array.');
const filterOps = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists'] as const;

interface TransformOp {
  describe: string;
  input: z.ZodType;
  args?: z.ZodType;
  output: z.ZodType;
}

export const TRANSFORM_OPS = {
  get: {
    describe: 'Pick a part of a value by path.',
    input: z.strictObject({ value: binding }),
    args: z.strictObject({ path: valuePath }),
    output: z.object({ value: z.unknown() }),
  },
  template: {
    describe: 'Fill {{name}} placeholders with the named inputs (objects and arrays as JSON).',
    input: inputs.optional(),
    args: z.strictObject({ template: z.string().max(20_000) }),
    output: z.object({ text: z.string() }),
  },
  json_parse: {
    describe: 'Parse JSON text.',
    input: z.strictObject({ text: binding }),
    output: z.object({ value: z.unknown() }),
  },
  json_stringify: {
    describe: 'Write a value as JSON text.',
    input: z.strictObject({ value: binding }),
    args: z.strictObject({ pretty: z.boolean().optional() }).optional(),
    output: z.object({ text: z.string() }),
  },
  join: {
    describe: 'Join an array of values into text.',
    input: z.strictObject({ items }),
    args: z.strictObject({ separator: z.string().max(100).optional() }).optional(),
    output: z.object({ text: z.string() }),
  },
  split: {
    describe: 'Split text into an array.',
    input: z.strictObject({ text: binding }),
    args: z.strictObject({ separator: z.string().min(1).max(100) }),
    output: z.object({ items: z.array(z.string()) }),
  },
  pluck: {
    describe: 'Take one field of every object in an array.',
    input: z.strictObject({ items }),
    args: z.strictObject({ field: valuePath }),
    output: z.object({ items: z.array(z.unknown()) }),
  },
  filter: {
    describe: 'Keep the array items whose field compares true against value.',
    input: z.strictObject({ items }),
    args: z.strictObject({ field: valuePath, op: z.enum(filterOps), value: z.unknown().optional() }),
    output: z.object({ items: z.array(z.unknown()) }),
  },
  count: {
    describe: 'The length of an array (or of text).',
    input: z.strictObject({ items }),
    output: z.object({ count: z.number() }),
  },
  first: {
    describe: 'The first item of an array (null when empty).',
    input: z.strictObject({ items }),
    output: z.object({ value: z.unknown() }),
  },
  last: {
    describe: 'The last item of an array (null when empty).',
    input: z.strictObject({ items }),
    output: z.object({ value: z.unknown() }),
  },
  merge: {
    describe: 'Merge the named object inputs, later names winning.',
    input: inputs,
    output: z.object({ value: z.record(z.string(), z.unknown()) }),
  },
  coalesce: {
    describe: 'The first named input that is neither null nor missing, in the order given.',
    input: inputs,
    output: z.object({ value: z.unknown() }),
  },
  now: {
    describe: 'The current instant.',
    input: z.strictObject({}).optional(),
    args: z.strictObject({ timezone: z.string().optional() }).optional(),
    output: z.object({ iso: z.string(), epoch_ms: z.number(), local: z.string() }),
  },
} satisfies Record<string, TransformOp>;

export type TransformOpName = keyof typeof TRANSFORM_OPS;

const transformNodes = Object.entries(TRANSFORM_OPS).map(([op, def]: [string, TransformOp]) =>
  z.strictObject({
    kind: z.literal('transform'),
    ...common,
    op: z.literal(op),
    input: def.input,
    ...(def.args ? { args: def.args } : {}),
  }),
);

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

export const transformNode = z
  .discriminatedUnion('op', transformNodes as unknown as [z.ZodObject, ...z.ZodObject[]])
  .meta({ id: 'TransformNode' });

export interface TransformNode {
  kind: 'transform';
  id: string;
  title?: string | undefined;
  op: TransformOpName;
  input?: Record<string, Binding> | undefined;
  args?: Record<string, unknown> | undefined;
}

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

// ── triggers ────────────────────────────────────────────────────────────────────────────────────

export const FREQUENCIES = ['hourly', 'daily', 'weekdays', 'weekly'] as const;

const weekday = z.number().int().min(1).max(7).describe('ISO weekday: 1 = Monday … 7 = Sunday.');
const hour = z.number().int().min(0).max(23);
const minute = z.number().int().min(0).max(59);
const timezone = z.string().min(1).describe('An IANA time zone such as Europe/Berlin or UTC.');

/** Each frequency takes exactly its fields, so the advertised shape refuses what publish refuses. */
export const scheduleTrigger = z
  .discriminatedUnion('frequency', [
    z.strictObject({ kind: z.literal('schedule'), frequency: z.literal('hourly'), minute, timezone }),
    z.strictObject({ kind: z.literal('schedule'), frequency: z.literal('daily'), hour, minute, timezone }),
    z.strictObject({ kind: z.literal('schedule'), frequency: z.literal('weekdays'), hour, minute, timezone }),
    z.strictObject({
      kind: z.literal('schedule'),
      frequency: z.literal('weekly'),
      weekday,
      hour,
      minute,
      timezone,
    }),
  ])
  .describe(
    'Fires at the given local time in timezone. Payload: {scheduled_for, fired_at, timezone}. A time in a DST gap fires at the first valid instant after it; in an overlap, once, at the first occurrence; hourly fires every 60 minutes of real time.',
  );

export const connectorEventTrigger = z
  .strictObject({
    kind: z.literal('connector_event'),
    provider: z
      .string()
      .min(1)
      .describe('A connected provider, or "workspace" for events of this workspace.'),
    event: z.string().min(1).describe('An event the provider emits (see the namespaces and connectors).'),
  })
  .describe('Payload: {provider, event, data}.');

export const githubEventTrigger = z
  .strictObject({
    kind: z.literal('github_event'),
    event: z.string().min(1).describe('A GitHub webhook event such as pull_request or issues.'),
    actions: z.array(z.string().min(1)).optional().describe('Actions to match (all when empty or absent).'),
    repo: z
      .string()
      .regex(/^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/, 'must be owner/name')
      .describe('owner/name'),
  })
  .describe('Payload: {event, action, repo, payload}.');

export const trigger = z
  .discriminatedUnion('kind', [scheduleTrigger, connectorEventTrigger, githubEventTrigger])
  .meta({ id: 'Trigger' });
export type Trigger = z.infer<typeof trigger>;
/** A schedule with every field optional, for code that reads them whatever the frequency. */
export type ScheduleFields = {
  kind: 'schedule';
  frequency: (typeof FREQUENCIES)[number];
  weekday?: number;
  hour?: number;
  minute?: number;
  timezone: string;
};

export const WORKSPACE_EVENTS = [
  'document.created',
  'document.edited',
  'comment.created',
  'comment.mentioned',
  'page.written',
] as const;
