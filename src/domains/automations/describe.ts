import { z } from 'zod';
import { invalid } from '../../errors.ts';
import type { Catalogue } from '../../capabilities/catalogue.ts';
import type { Capability } from '../../capabilities/capability.ts';
import { binding } from '../../flowplan/bindings.ts';
import { MAX_NODES, NODE_KINDS, nodeShapes, plan, PLAN_VERSION, writeApproval } from '../../flowplan/plan.ts';
import { TRANSFORM_OPS } from '../../flowplan/transforms.ts';
import { trigger, WORKSPACE_EVENTS } from '../../flowplan/triggers.ts';

/** describe_capabilities output beyond this many bytes sheds the tail namespaces' schemas. */
export const DESCRIBE_BUDGET_BYTES = 90_000;

type Json = Record<string, unknown>;

function render(schema: z.ZodType, io: 'input' | 'output' = 'input'): Json {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Json;
  delete json.$schema;
  return json;
}

/**
 * The FlowPlan as one self-contained JSON Schema (node kinds, Binding and Edge under $defs) and
 * its parts. Rendered once from the schemas the validator parses with.
 */
function renderContract() {
  const planSchema = render(plan);
  const defs = (planSchema.$defs ?? {}) as Record<string, Json>;
  const shapes: Record<string, Json> = {};
  for (const kind of NODE_KINDS) {
    const id = (nodeShapes[kind].meta() as { id?: string } | undefined)?.id;
    const shape = id ? defs[id] : undefined;
    if (!shape) throw new Error(`node kind ${kind} has no rendered shape`);
    shapes[kind] = shape;
  }
  const transformOps: Record<string, Json> = {};
  for (const [op, def] of Object.entries(TRANSFORM_OPS) as [
    string,
    (typeof TRANSFORM_OPS)[keyof typeof TRANSFORM_OPS],
  ][]) {
    transformOps[op] = {
      describe: def.describe,
      input: render(def.input),
      ...('args' in def ? { args: render(def.args) } : {}),
      output: render(def.output, 'output'),
    };
  }
  return {
    plan_schema: planSchema,
    node_shapes: shapes,
    transform_ops: transformOps,
    bindings: render(binding),
    trigger_input: {
      ...render(trigger),
      payloads: {
        schedule: '{scheduled_for, fired_at, timezone}',
        connector_event: '{provider, event, data}',
        github_event: '{event, action, repo, payload}',
        manual: '{manual: true, by}',
      },
    },
    write_approval: render(writeApproval),
  };
}

let contract: ReturnType<typeof renderContract> | undefined;
export function flowPlanContract() {
  contract ??= renderContract();
  return contract;
}

export interface CapabilityEntry {
  key: string;
  kind: 'read' | 'write';
  describe: string;
  large?: boolean;
  async?: boolean;
  input?: Json;
  output?: Json;
}

function capabilityEntry(cap: Capability, withSchemas: boolean): CapabilityEntry {
  return {
    key: cap.key,
    kind: cap.kind,
    describe: cap.describe,
    ...(cap.large ? { large: true } : {}),
    ...(cap.async ? { async: true } : {}),
    ...(withSchemas ? { input: render(cap.input), output: render(cap.output, 'output') } : {}),
  };
}

export interface DescribeArgs {
  namespaces?: unknown;
  include_schemas?: unknown;
}

export function describeCapabilities(catalogue: Catalogue, args: DescribeArgs) {
  const withSchemas = args.include_schemas === undefined ? true : args.include_schemas;
  if (typeof withSchemas !== 'boolean') throw invalid('include_schemas must be a boolean');
  let names = [...catalogue.namespaces.keys()];
  if (args.namespaces !== undefined) {
    if (!Array.isArray(args.namespaces) || args.namespaces.some((n) => typeof n !== 'string')) {
      throw invalid('namespaces must be an array of namespace names such as ["documents", "github"]');
    }
    const wanted = [...new Set(args.namespaces as string[])];
    const unknown = wanted.filter((n) => !catalogue.namespaces.has(n));
    if (unknown.length) {
      throw invalid(
        `unknown namespace${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}; known: ${names.join(', ')}`,
      );
    }
    names = names.filter((n) => wanted.includes(n));
  }
  const entries = names.map((name) => {
    const state = catalogue.namespaces.get(name);
    if (!state) throw new Error(`namespace ${name} vanished`);
    return {
      namespace: name,
      connected: state.connected,
      ...(state.plugin.events.length ? { events: state.plugin.events } : {}),
      capabilities: state.plugin.capabilities.map((cap) => capabilityEntry(cap, withSchemas)),
    };
  });
  const c = flowPlanContract();
  const result = {
    plan_version: PLAN_VERSION as 1,
    max_nodes: MAX_NODES,
    connectors: catalogue.connectors.map((entry) => ({ ...entry })),
    node_shapes: c.node_shapes,
    transform_ops: c.transform_ops,
    bindings: c.bindings,
    trigger_input: c.trigger_input,
    write_approval: c.write_approval,
    plan_schema: c.plan_schema,
    trigger_events: {
      workspace: [...WORKSPACE_EVENTS],
      ...Object.fromEntries(
        [...catalogue.eventProviders()]
          .filter(([p, s]) => p !== 'workspace' && s.connected)
          .map(([p, s]) => [p, [...s.events]]),
      ),
    },
    namespaces: entries,
    truncated: false,
    schemas_dropped: undefined as string[] | undefined,
  };
  // Past the budget, the namespaces at the tail lose their schemas until the whole fits.
  let size = Buffer.byteLength(JSON.stringify(result));
  const dropped: string[] = [];
  for (let i = entries.length - 1; i >= 0 && size > DESCRIBE_BUDGET_BYTES; i--) {
    const entry = entries[i] as (typeof entries)[number];
    if (!entry.capabilities.some((cap) => 'input' in cap || 'output' in cap)) continue;
    entry.capabilities = entry.capabilities.map(({ input: _input, output: _output, ...rest }) => rest);
    dropped.unshift(entry.namespace);
    size = Buffer.byteLength(JSON.stringify(result));
  }
  if (dropped.length) {
    result.truncated = true;
    result.schemas_dropped = dropped;
  } else delete result.schemas_dropped;
  return result;
}
