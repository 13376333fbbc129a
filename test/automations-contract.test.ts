import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Ajv2020 } from 'ajv/dist/2020.js';
import fc from 'fast-check';
import {
  BUILTIN_PLUGINS,
  Catalogue,
  CONNECTOR_PLUGINS,
  type NamespaceState,
} from '../src/capabilities/catalogue.ts';
import { flowPlanContract } from '../src/domains/automations/describe.ts';
import {
  NODE_KINDS,
  plan as planSchema,
  writeApproval as writeApprovalSchema,
} from '../src/flowplan/plan.ts';
import { TRANSFORM_OPS } from '../src/flowplan/transforms.ts';
import { trigger as triggerSchema } from '../src/flowplan/triggers.ts';
import { validatePlan, type ValidationContext } from '../src/flowplan/validate.ts';

/*
 * What describe_capabilities advertises (JSON Schema, checked here with ajv as any client would)
 * against what the validator enforces (zod and validatePlan), on hand-written and random input.
 */

type Json = Record<string, unknown>;

const contract = flowPlanContract();
const planJson = contract.plan_schema as Json;
const defs = planJson.$defs as Record<string, Json>;

const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
const ajvPlan = ajv.compile(planJson);
/** A part of the contract that points into the plan schema's $defs, made whole. */
const withDefs = (schema: Json): Json => ({
  ...schema,
  $defs: { ...defs, ...((schema.$defs as Json) ?? {}) },
});

// Every namespace connected, a subflow target that only reads: only graph mistakes can fail a plan.
const namespaces = new Map<string, NamespaceState>(
  [...BUILTIN_PLUGINS, ...CONNECTOR_PLUGINS].map((plugin) => [
    plugin.namespace,
    { plugin, connected: true, personalOnly: false, providers: plugin.providers },
  ]),
);
const catalogue = new Catalogue(namespaces, []);
const ctx: ValidationContext = {
  catalogue,
  writeApproval: 'required',
  subflows: new Map([['auto_reader', { writes: false }]]),
};

const planOf = (nodes: unknown[], edges?: unknown[]): Json => ({
  planVersion: 1,
  name: 'Contract',
  description: 'Checks the advertised schema.',
  nodes,
  ...(edges ? { edges } : {}),
});

const clone = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

// ── the corpus ──────────────────────────────────────────────────────────────────────────────────

const lit = (value: unknown) => ({ kind: 'literal', value });
const trig = (path = '') => ({ kind: 'trigger', path });

/** One valid node of every kind, none of them referring to another node. */
const VALID_NODES: Json[] = [
  {
    kind: 'capability',
    id: 'read',
    capability: 'documents.read_document',
    input: { document_id: lit('doc_1') },
  },
  {
    kind: 'capability',
    id: 'read2',
    title: 'Read it again',
    capability: 'documents.read_document',
    input: { document_id: trig('document_id'), window: lit(100) },
    retry: { max_attempts: 5, backoff_s: 3600 },
  },
  { kind: 'capability', id: 'chans', capability: 'slack.list_channels' },
  { kind: 'agent', id: 'ag', instructions: lit('Summarise') },
  {
    kind: 'agent',
    id: 'ag2',
    title: 'Structured',
    instructions: trig('text'),
    input: { doc: lit('x') },
    output_schema: { type: 'object', properties: { n: { type: 'number' } } },
    tools: ['documents.read_document', 'github.get_issue'],
  },
  { kind: 'branch', id: 'b1', condition: { op: 'eq', left: trig('a'), right: lit(1) } },
  { kind: 'branch', id: 'b2', condition: { op: 'truthy', left: trig('a') } },
  { kind: 'branch', id: 'b3', condition: { op: 'exists', left: trig('a.b.0') } },
  {
    kind: 'map',
    id: 'm',
    items: trig('items'),
    body: { nodes: [{ kind: 'notify', id: 'inner', message: trig('item') }] },
    result: 'inner',
  },
  {
    kind: 'map',
    id: 'm2',
    title: 'Each',
    items: trig('items'),
    body: {
      nodes: [
        { kind: 'transform', id: 'g', op: 'get', input: { value: trig('item') }, args: { path: 'title' } },
        { kind: 'notify', id: 'n2', message: trig('index') },
      ],
      edges: [{ from: 'g', to: 'n2' }],
    },
    result: 'g',
    concurrency: 10,
  },
  { kind: 'subflow', id: 'sf', automation_id: 'auto_reader' },
  { kind: 'subflow', id: 'sf2', automation_id: 'auto_reader', input: { x: lit(1), y: trig('') } },
  { kind: 'approval', id: 'ok', message: lit('Go?') },
  {
    kind: 'approval',
    id: 'ok2',
    message: trig('why'),
    approvers: ['lead@example.com', 'ops@example.org'],
    timeout_s: 60,
    on_timeout: 'skip',
  },
  { kind: 'approval', id: 'ok3', message: lit('Go?'), approvers: 'admins', timeout_s: 30 * 24 * 3600 },
  { kind: 'notify', id: 'n', message: lit({ any: ['json', 1, null] }) },
  { kind: 'notify', id: 'n3', message: lit(null), to: 'creator' },
  { kind: 'delay', id: 'd1', seconds: 1 },
  { kind: 'delay', id: 'd2', seconds: 30 * 24 * 3600 },
  { kind: 'delay', id: 'd3', until: trig('at') },
];

/** One valid transform node per op. */
const VALID_TRANSFORMS: Record<string, Json> = {
  get: { input: { value: trig('') }, args: { path: 'items.0.title' } },
  template: { input: { a: lit('x'), b: trig('b') }, args: { template: 'A {{a}} B {{b}}' } },
  json_parse: { input: { text: lit('{"a":1}') } },
  json_stringify: { input: { value: trig('') }, args: { pretty: true } },
  join: { input: { items: trig('list') }, args: { separator: ', ' } },
  split: { input: { text: trig('text') }, args: { separator: '\n' } },
  pluck: { input: { items: trig('list') }, args: { field: 'name' } },
  filter: { input: { items: trig('list') }, args: { field: 'state', op: 'eq', value: 'open' } },
  count: { input: { items: trig('list') } },
  first: { input: { items: trig('list') } },
  last: { input: { items: trig('list') } },
  merge: { input: { a: lit({ x: 1 }), b: trig('extra') } },
  coalesce: { input: { a: trig('maybe'), b: lit('fallback') } },
  now: { args: { timezone: 'Europe/Berlin' } },
};
const transformNode = (op: string, id = `t_${op}`): Json => ({
  kind: 'transform',
  id,
  op,
  ...VALID_TRANSFORMS[op],
});
const ALL_VALID: Json[] = [...VALID_NODES, ...Object.keys(VALID_TRANSFORMS).map((op) => transformNode(op))];

/** Values that are the wrong thing almost anywhere. */
const JUNK: unknown[] = [null, 0, -1, 2.5, 'text', '', true, [], {}, [1], { kind: 'literal' }];

type Path = (string | number)[];

function pathsOf(value: unknown, at: Path = []): Path[] {
  if (Array.isArray(value)) return [at, ...value.flatMap((v, i) => pathsOf(v, [...at, i]))];
  if (value && typeof value === 'object') {
    return [at, ...Object.entries(value).flatMap(([k, v]) => pathsOf(v, [...at, k]))];
  }
  return [at];
}

function getAt(value: unknown, path: Path): unknown {
  let current = value;
  for (const part of path) current = (current as Record<string | number, unknown>)?.[part];
  return current;
}

/** A copy with the value at path replaced (undefined deletes an object key, or an array item). */
function setAt(value: unknown, path: Path, next: unknown): unknown {
  if (path.length === 0) return next;
  const copy = clone(value) as Record<string | number, unknown>;
  const parent = getAt(copy, path.slice(0, -1)) as Record<string | number, unknown> | unknown[];
  const last = path.at(-1) as string | number;
  if (next === undefined) {
    if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
  } else (parent as Record<string | number, unknown>)[last] = next;
  return copy;
}

/** Every systematic mutation of a node: drop, replace with junk, add a field, at every path. */
function mutations(node: Json): unknown[] {
  const out: unknown[] = [];
  for (const path of pathsOf(node)) {
    if (path.length === 0) continue;
    out.push(setAt(node, path, undefined));
    for (const junk of JUNK) out.push(setAt(node, path, junk));
    const here = getAt(node, path);
    if (here && typeof here === 'object' && !Array.isArray(here))
      out.push(setAt(node, path, { ...here, extra: 1 }));
  }
  out.push({ ...node, extra: 1 });
  return out;
}

/** Hand-picked edge cases, mostly just past a limit. */
const capability = ALL_VALID[0] as Json;
const mapNode = VALID_NODES.find((n) => n.id === 'm') as Json;
const approvalNode = VALID_NODES.find((n) => n.id === 'ok') as Json;
const delayNode = VALID_NODES.find((n) => n.id === 'd1') as Json;
const notifyNode = VALID_NODES.find((n) => n.id === 'n') as Json;
const agentNode = VALID_NODES.find((n) => n.id === 'ag') as Json;
const EDGE_CASES: unknown[] = [
  { ...capability, retry: { max_attempts: 6 } },
  { ...capability, retry: { max_attempts: 0 } },
  { ...capability, retry: { max_attempts: 1.5 } },
  { ...capability, retry: { max_attempts: 1, backoff_s: -1 } },
  { ...capability, retry: { max_attempts: 1, backoff_s: 3601 } },
  { ...capability, retry: { backoff_s: 1 } },
  { ...capability, capability: 'Documents.read' },
  { ...capability, capability: 'documents' },
  { ...capability, capability: 'documents.read.document' },
  { ...capability, id: 'x'.repeat(64) },
  { ...capability, id: 'x'.repeat(65) },
  { ...capability, id: 'dot.id' },
  { ...capability, id: 'ümlaut' },
  { ...capability, id: '' },
  { ...capability, title: '' },
  { ...capability, title: 't'.repeat(200) },
  { ...capability, title: 't'.repeat(201) },
  { ...mapNode, concurrency: 11 },
  { ...mapNode, concurrency: 0 },
  { ...mapNode, concurrency: 2.5 },
  { ...mapNode, body: { nodes: [{ kind: 'notify', id: 'inner' }] } },
  { ...mapNode, body: { nodes: [{ kind: 'mystery', id: 'inner' }] } },
  { ...mapNode, body: { nodes: [{ ...notifyNode, id: 'inner', extra: true }] } },
  { ...mapNode, body: { nodes: [notifyNode], edges: [{ from: 'n' }] } },
  { ...mapNode, body: { nodes: [notifyNode], edges: [{ from: 'n', to: 'n', when: 'yes' }] } },
  { ...mapNode, body: { nodes: [] } },
  { ...mapNode, body: { nodes: [mapNode] } },
  { ...mapNode, body: { nodes: [{ ...mapNode, concurrency: 11 }] } },
  { ...approvalNode, timeout_s: 59 },
  { ...approvalNode, timeout_s: 30 * 24 * 3600 + 1 },
  { ...approvalNode, timeout_s: 600.5 },
  { ...approvalNode, approvers: [] },
  { ...approvalNode, approvers: 'everyone' },
  { ...approvalNode, approvers: ['not-an-email'] },
  { ...approvalNode, approvers: ['a@b'] },
  { ...approvalNode, approvers: Array.from({ length: 21 }, (_, i) => `p${i}@example.com`) },
  { ...approvalNode, approvers: Array.from({ length: 20 }, (_, i) => `p${i}@example.com`) },
  { ...approvalNode, on_timeout: 'retry' },
  { ...delayNode, seconds: 0 },
  { ...delayNode, seconds: 30 * 24 * 3600 + 1 },
  { ...delayNode, seconds: 1.5 },
  { ...delayNode, until: trig('at') },
  { kind: 'delay', id: 'd' },
  { ...notifyNode, to: 'everyone' },
  { ...notifyNode, message: { kind: 'ref', node: 'x' } },
  { ...notifyNode, message: { kind: 'ref', node: 'x', path: 'a..b' } },
  { ...notifyNode, message: { kind: 'ref', node: 'x', path: '.a' } },
  { ...notifyNode, message: { kind: 'trigger', path: 'a.' } },
  { ...notifyNode, message: { kind: 'trigger', path: 'items.0.title' } },
  { ...notifyNode, message: { kind: 'env', path: '' } },
  { ...notifyNode, message: { kind: 'literal', value: 1, path: '' } },
  { ...agentNode, tools: Array.from({ length: 21 }, () => 'documents.read_document') },
  { ...agentNode, tools: Array.from({ length: 20 }, () => 'documents.read_document') },
  { ...agentNode, output_schema: [] },
  { kind: 'branch', id: 'b', condition: { op: 'exists', left: trig(''), right: trig('') } },
  { kind: 'branch', id: 'b', condition: { op: 'eq', left: trig('') } },
  { kind: 'branch', id: 'b', condition: { op: 'truthy' } },
  { kind: 'transform', id: 't', op: 'reverse', input: {} },
  { kind: 'transform', id: 't', op: 'now', input: { x: lit(1) } },
  { kind: 'transform', id: 't', op: 'now', input: {} },
  { kind: 'transform', id: 't', op: 'now' },
  { kind: 'transform', id: 't', op: 'template', args: { template: 'x' } },
  { kind: 'transform', id: 't', op: 'template', args: { template: 'x'.repeat(20_001) } },
  { kind: 'transform', id: 't', op: 'json_stringify', input: { value: trig('') } },
  { kind: 'transform', id: 't', op: 'merge' },
  { kind: 'transform', id: 't', op: 'merge', input: {} },
  { kind: 'transform', id: 't', op: 'count', input: { items: trig('') }, args: {} },
  { kind: 'transform', id: 't', op: 'split', input: { text: trig('') }, args: { separator: '' } },
  {
    kind: 'transform',
    id: 't',
    op: 'filter',
    input: { items: trig('') },
    args: { field: 'a', op: 'truthy' },
  },
  {
    kind: 'transform',
    id: 't',
    op: 'filter',
    input: { items: trig('') },
    args: { field: 'a', op: 'exists' },
  },
  'node',
  null,
  [],
  {},
];

/** Plans whose top level is wrong. */
const PLAN_CASES: unknown[] = [
  { ...planOf([notifyNode]), planVersion: 2 },
  { ...planOf([notifyNode]), planVersion: '1' },
  { ...planOf([notifyNode]), name: '' },
  { ...planOf([notifyNode]), name: 'n'.repeat(200) },
  { ...planOf([notifyNode]), name: 'n'.repeat(201) },
  { ...planOf([notifyNode]), description: 'd'.repeat(2000) },
  { ...planOf([notifyNode]), description: 'd'.repeat(2001) },
  { ...planOf([notifyNode]), extra: true },
  { ...planOf([notifyNode]), edges: {} },
  { ...planOf([notifyNode]), edges: [{ from: 'n', to: 'n', when: 1 }] },
  { ...planOf([notifyNode]), edges: [{ from: 'n', to: 'n', label: 'x' }] },
  { ...planOf([notifyNode]), edges: [{ to: 'n' }] },
  planOf([]),
  { planVersion: 1, name: 'x', nodes: [notifyNode] },
  { planVersion: 1, description: '', nodes: [notifyNode] },
  { planVersion: 1, name: 'x', description: '' },
];

// ── the oracle: does a plan break no graph rule? ────────────────────────────────────────────────

/**
 * Whether a plan that parses breaks no graph rule, for plans whose bindings never refer to a node
 * (undefined when it has refs: then this cannot tell).
 */
function graphFine(raw: Json): boolean | undefined {
  if (JSON.stringify(raw).includes('"kind":"ref"')) return undefined;
  const ids = new Set<string>();
  let total = 0;
  const level = (nodes: Json[], edges: Json[]): boolean => {
    const here = new Map<string, Json>();
    for (const n of nodes) {
      total += 1;
      const id = n.id as string;
      if (ids.has(id)) return false;
      ids.add(id);
      here.set(id, n);
    }
    for (const e of edges) {
      const from = here.get(e.from as string);
      if (!from || !here.has(e.to as string)) return false;
      if ((from.kind === 'branch') !== (e.when !== undefined)) return false;
    }
    // Acyclic: repeatedly drop nodes with no incoming edge.
    const left = new Set(here.keys());
    let changed = true;
    while (changed) {
      changed = false;
      for (const id of left) {
        if (!edges.some((e) => e.to === id && left.has(e.from as string))) {
          left.delete(id);
          changed = true;
        }
      }
    }
    if (left.size) return false;
    for (const n of nodes) {
      if (n.kind === 'capability') {
        const cap = catalogue.capability(n.capability as string);
        if (!cap || cap.kind !== 'read') return false;
        const input = (n.input as Record<string, Json> | undefined) ?? {};
        for (const [k, b] of Object.entries(input)) {
          const field = cap.input.shape[k];
          if (!field) return false;
          if (b.kind === 'literal' && !field.safeParse(b.value).success) return false;
        }
        for (const [k, field] of Object.entries(cap.input.shape)) {
          if (!(k in input) && !field.safeParse(undefined).success) return false;
        }
      }
      if (n.kind === 'agent') {
        for (const key of (n.tools as string[]) ?? [])
          if (catalogue.capability(key)?.kind !== 'read') return false;
      }
      if (n.kind === 'subflow' && !ctx.subflows.has(n.automation_id as string)) return false;
      if (n.kind === 'map') {
        const body = n.body as { nodes: Json[]; edges?: Json[] };
        if (!body.nodes.some((b) => b.id === n.result)) return false;
        if (!level(body.nodes, body.edges ?? [])) return false;
      }
    }
    return true;
  };
  return level(raw.nodes as Json[], (raw.edges as Json[]) ?? []) && total <= 200;
}

// ── the three verdicts on one sample ────────────────────────────────────────────────────────────

interface Verdicts {
  ajv: boolean;
  zod: boolean;
}

function judge(raw: unknown): Verdicts {
  const sample = clone(raw);
  const verdicts = { ajv: ajvPlan(sample) as boolean, zod: planSchema.safeParse(sample).success };
  assert.equal(
    verdicts.ajv,
    verdicts.zod,
    `advertised schema says ${verdicts.ajv ? 'valid' : 'invalid'}, zod says ${verdicts.zod ? 'valid' : 'invalid'}: ${JSON.stringify(sample).slice(0, 600)}${verdicts.ajv ? '' : `\najv: ${JSON.stringify(ajvPlan.errors?.slice(0, 3))}`}`,
  );
  const result = validatePlan(sample, ctx);
  if (!verdicts.ajv) {
    assert.ok(
      !result.ok && result.errors.some((x) => x.rule === 'shape'),
      `validatePlan must report a shape error for ${JSON.stringify(sample).slice(0, 400)}; got ${JSON.stringify(result)}`,
    );
  } else {
    assert.ok(
      result.ok || !result.errors.some((x) => x.rule === 'shape'),
      `validatePlan reports a shape error the schemas do not: ${JSON.stringify(result)}`,
    );
    if (graphFine(sample as Json) === true) {
      assert.ok(result.ok, `a plan with no graph mistake must pass: ${JSON.stringify(result)}`);
      assert.deepEqual(result.plan, planSchema.parse(sample));
    }
  }
  return verdicts;
}

const asPlan = (node: unknown) => planOf([node]);

// ── (a) the parts of the contract are the plan schema's parts ───────────────────────────────────

describe('contract: the advertised parts', () => {
  it('plan_schema compiles as JSON Schema 2020-12 and accepts a plan of every node kind', () => {
    assert.equal(typeof ajvPlan, 'function');
    assert.equal(ajvPlan(planOf(ALL_VALID)), true, JSON.stringify(ajvPlan.errors));
    assert.equal(validatePlan(planOf(ALL_VALID), ctx).ok, true);
  });

  it('node_shapes has exactly the node kinds, each the $defs entry of that kind', () => {
    assert.deepEqual(Object.keys(contract.node_shapes).sort(), [...NODE_KINDS].sort());
    const kindOf = (schema: Json): unknown[] => {
      const own = ((schema.properties as Json | undefined)?.kind as Json | undefined)?.const;
      const members = [...((schema.anyOf as Json[]) ?? []), ...((schema.oneOf as Json[]) ?? [])];
      return [...new Set([...(own === undefined ? [] : [own]), ...members.flatMap(kindOf)])];
    };
    for (const kind of NODE_KINDS) {
      const named = Object.entries(defs).filter(([, schema]) => {
        const kinds = kindOf(schema);
        return kinds.length === 1 && kinds[0] === kind;
      });
      assert.equal(named.length, 1, `one $defs entry for ${kind}`);
      const [name, schema] = named[0] as [string, Json];
      assert.deepEqual(contract.node_shapes[kind], schema, kind);
      assert.ok(
        (defs.Node?.anyOf as Json[]).some((member) => member.$ref === `#/$defs/${name}`),
        `Node lists ${name}`,
      );
    }
    assert.equal((defs.Node?.anyOf as Json[]).length, NODE_KINDS.length);
  });

  it('bindings is the Binding of the plan schema', () => {
    const bindings = contract.bindings as Json;
    assert.equal(bindings.$ref, '#/$defs/Binding');
    assert.deepEqual((bindings.$defs as Json).Binding, defs.Binding);
    const check = ajv.compile(bindings);
    for (const b of [lit(1), lit(null), trig(''), { kind: 'ref', node: 'a', path: 'x.0' }])
      assert.equal(check(b), true);
    for (const b of [
      { kind: 'literal' },
      { kind: 'ref', node: 'a' },
      { kind: 'trigger', path: '.' },
      { kind: 'x' },
    ]) {
      assert.equal(check(b), false, JSON.stringify(b));
    }
  });

  const compiled = new Map<string, ReturnType<typeof ajv.compile>>();
  const shapeCheck = (kind: (typeof NODE_KINDS)[number]) => {
    let check = compiled.get(kind);
    if (!check) {
      check = ajv.compile(withDefs(contract.node_shapes[kind] as Json));
      compiled.set(kind, check);
    }
    return check;
  };

  it('each node shape, given the plan $defs, judges a lone node as the plan schema does', () => {
    for (const node of [...ALL_VALID, ...EDGE_CASES]) {
      if (!node || typeof node !== 'object' || Array.isArray(node)) continue;
      const kind = (node as Json).kind as string;
      if (!(NODE_KINDS as readonly string[]).includes(kind)) continue;
      const shape = shapeCheck(kind as (typeof NODE_KINDS)[number]);
      assert.equal(shape(node), ajvPlan(asPlan(node)), JSON.stringify(node).slice(0, 300));
    }
  });
});

// ── (b) advertised and enforced agree on every sample ───────────────────────────────────────────

describe('contract: advertised schema and validator agree', () => {
  it('accepts every hand-written valid node, alone and together', () => {
    for (const node of ALL_VALID) {
      const verdict = judge(asPlan(node));
      assert.equal(verdict.ajv, true, JSON.stringify(node));
      assert.equal(validatePlan(asPlan(node), ctx).ok, true, JSON.stringify(node));
    }
    assert.equal(judge(planOf(ALL_VALID)).zod, true);
  });

  it('agrees on the hand-picked edge cases', () => {
    const rejected = EDGE_CASES.filter((node) => !judge(asPlan(node)).ajv);
    // The corpus is mostly invalid on purpose; make sure it stays so.
    assert.ok(rejected.length > EDGE_CASES.length / 2, `${rejected.length} of ${EDGE_CASES.length} rejected`);
  });

  it('rejects each limit just past its edge and accepts it at the edge', () => {
    const verdict = (node: unknown) => judge(asPlan(node)).ajv;
    assert.equal(verdict({ ...capability, retry: { max_attempts: 5 } }), true);
    assert.equal(verdict({ ...capability, retry: { max_attempts: 6 } }), false);
    assert.equal(verdict({ ...mapNode, concurrency: 10 }), true);
    assert.equal(verdict({ ...mapNode, concurrency: 11 }), false);
    assert.equal(verdict({ ...approvalNode, timeout_s: 60 }), true);
    assert.equal(verdict({ ...approvalNode, timeout_s: 59 }), false);
    assert.equal(verdict({ ...delayNode, seconds: 30 * 24 * 3600 }), true);
    assert.equal(verdict({ ...delayNode, seconds: 30 * 24 * 3600 + 1 }), false);
    assert.equal(verdict({ ...capability, id: 'x'.repeat(64) }), true);
    assert.equal(verdict({ ...capability, id: 'x'.repeat(65) }), false);
    assert.equal(verdict({ ...mapNode, body: { nodes: [{ kind: 'notify', id: 'inner' }] } }), false);
  });

  it('agrees on the plans with a broken top level', () => {
    for (const raw of PLAN_CASES) judge(raw);
  });

  it('agrees on every drop, junk value and extra field at every path of every valid node', () => {
    let samples = 0;
    let rejected = 0;
    for (const node of ALL_VALID) {
      for (const mutated of mutations(node)) {
        samples += 1;
        if (!judge(asPlan(mutated)).ajv) rejected += 1;
      }
    }
    assert.ok(samples > 1000, `${samples} samples`);
    assert.ok(rejected > samples / 2, `${rejected} of ${samples} rejected`);
  });

  it('agrees on every mutation of a whole plan', () => {
    const raw = planOf(
      [
        { kind: 'branch', id: 'br', condition: { op: 'truthy', left: trig('go') } },
        { kind: 'notify', id: 'yes', message: lit('yes') },
        { kind: 'delay', id: 'wait', seconds: 60 },
      ],
      [
        { from: 'br', to: 'yes', when: true },
        { from: 'yes', to: 'wait' },
      ],
    );
    assert.equal(validatePlan(raw, ctx).ok, true);
    for (const path of pathsOf(raw)) {
      if (path.length === 0) continue;
      judge(setAt(raw, path, undefined));
      for (const junk of JUNK) judge(setAt(raw, path, junk));
    }
  });

  // Random node-ish objects: mostly wrong, sometimes right.
  const id = fc.oneof(
    fc.constantFrom('a', 'node_1', 'x-y', 'Z9'),
    fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/),
    fc.constantFrom('', 'has space', 'dot.ted', 'é', 'x'.repeat(65)),
  );
  const path = fc.constantFrom('', 'a', 'items.0.title', 'a..b', '.', '.a', 'a.', '0');
  const bindingArb = fc.oneof(
    fc.record({ kind: fc.constant('literal'), value: fc.jsonValue({ maxDepth: 2 }) }),
    fc.record({ kind: fc.constant('trigger'), path }),
    fc.record({ kind: fc.constant('ref'), node: id, path }),
    fc.record(
      { kind: fc.constantFrom('literal', 'ref', 'trigger', 'env'), path, node: id },
      { requiredKeys: ['kind'] },
    ),
    fc.jsonValue({ maxDepth: 1 }),
  );
  const inputs = fc.oneof(
    fc.dictionary(fc.constantFrom('value', 'text', 'items', 'document_id', 'x'), bindingArb, { maxKeys: 3 }),
    fc.jsonValue({ maxDepth: 1 }),
  );
  const smallInt = fc.oneof(
    fc.integer({ min: -2, max: 12 }),
    fc.constantFrom(59, 60, 3600, 2_592_000, 2_592_001, 1.5),
  );
  const anyValue = fc.jsonValue({ maxDepth: 1 });
  const leafNode = fc.record(
    {
      kind: fc.oneof(fc.constantFrom(...NODE_KINDS), fc.constantFrom('script', '')),
      id,
      title: fc.oneof(fc.string({ maxLength: 3 }), fc.constant('t'.repeat(201))),
      capability: fc.constantFrom(
        'documents.read_document',
        'documents.create_document',
        'github.get_issue',
        'nope.nope',
        'Bad',
      ),
      input: inputs,
      retry: fc.oneof(
        fc.record({ max_attempts: smallInt, backoff_s: smallInt }, { requiredKeys: [] }),
        anyValue,
      ),
      instructions: bindingArb,
      output_schema: fc.oneof(fc.dictionary(fc.string({ maxLength: 3 }), anyValue, { maxKeys: 2 }), anyValue),
      tools: fc.oneof(
        fc.array(fc.constantFrom('documents.read_document', 'documents.create_document', 'x'), {
          maxLength: 3,
        }),
        anyValue,
      ),
      op: fc.oneof(
        fc.constantFrom(...Object.keys(TRANSFORM_OPS)),
        fc.constantFrom('reverse', 'eq', 'truthy'),
      ),
      args: fc.oneof(
        fc.record(
          {
            path,
            template: fc.string({ maxLength: 5 }),
            separator: fc.string({ maxLength: 2 }),
            field: path,
            op: fc.constantFrom('eq', 'exists', 'truthy'),
            value: anyValue,
            pretty: fc.oneof(fc.boolean(), anyValue),
            timezone: fc.oneof(fc.constant('UTC'), anyValue),
          },
          { requiredKeys: [] },
        ),
        anyValue,
      ),
      condition: fc.record(
        {
          op: fc.constantFrom('eq', 'contains', 'exists', 'truthy', 'nope'),
          left: bindingArb,
          right: bindingArb,
        },
        { requiredKeys: [] },
      ),
      items: bindingArb,
      result: id,
      concurrency: smallInt,
      automation_id: fc.constantFrom('auto_reader', 'auto_missing'),
      message: bindingArb,
      approvers: fc.oneof(
        fc.constantFrom('creator', 'admins', 'everyone'),
        fc.array(fc.constantFrom('a@example.com', 'bad', 'x@y'), { maxLength: 3 }),
        anyValue,
      ),
      timeout_s: smallInt,
      on_timeout: fc.constantFrom('fail', 'skip', 'retry'),
      to: fc.constantFrom('session', 'creator', 'all'),
      seconds: smallInt,
      until: bindingArb,
    },
    { requiredKeys: [] },
  );
  // A map may hold random nodes in its body.
  const nodeArb = fc.oneof(
    { weight: 4, arbitrary: leafNode },
    {
      weight: 1,
      arbitrary: fc.record(
        {
          kind: fc.constant('map'),
          id,
          items: bindingArb,
          body: fc.oneof(
            fc.record({ nodes: fc.array(leafNode, { maxLength: 3 }) }),
            fc.record({
              nodes: fc.array(leafNode, { maxLength: 2 }),
              edges: fc.array(fc.record({ from: id, to: id }), { maxLength: 2 }),
            }),
            anyValue,
          ),
          result: id,
          concurrency: smallInt,
        },
        { requiredKeys: ['kind', 'body'] },
      ),
    },
  );
  // Valid nodes with one random change, so that many samples sit right at the edge of valid.
  const nearValid = fc
    .tuple(fc.constantFrom(...ALL_VALID), fc.nat(), fc.oneof(anyValue, bindingArb, fc.constant(undefined)))
    .map(([node, at, value]) => {
      const paths = pathsOf(node).filter((p) => p.length > 0);
      return setAt(node, paths[at % paths.length] as Path, value);
    });

  it('agrees on random node-ish objects', () => {
    fc.assert(
      fc.property(nodeArb, (node) => {
        judge(asPlan(node));
      }),
      { numRuns: 3000 },
    );
  });

  it('agrees on valid nodes with one random change', () => {
    let accepted = 0;
    fc.assert(
      fc.property(nearValid, (node) => {
        if (judge(asPlan(node)).ajv) accepted += 1;
      }),
      { numRuns: 3000 },
    );
    assert.ok(accepted > 100, `${accepted} near-valid samples were valid`);
  });

  it('agrees on random plans of several nodes and edges', () => {
    const planArb = fc.record(
      {
        planVersion: fc.oneof(fc.constant(1), anyValue),
        name: fc.oneof(fc.constant('P'), fc.string({ maxLength: 3 })),
        description: fc.oneof(fc.constant(''), anyValue),
        nodes: fc.array(fc.oneof(fc.constantFrom(...ALL_VALID), nearValid, nodeArb), { maxLength: 5 }),
        edges: fc.array(
          fc.oneof(
            fc.record({ from: id, to: id, when: fc.boolean() }, { requiredKeys: ['from', 'to'] }),
            anyValue,
          ),
          { maxLength: 3 },
        ),
      },
      { requiredKeys: ['planVersion', 'name', 'nodes'] },
    );
    fc.assert(
      fc.property(planArb, (raw) => {
        judge(raw);
      }),
      { numRuns: 1500 },
    );
  });
});

// ── (c) transform ops as advertised ─────────────────────────────────────────────────────────────

describe('contract: transform_ops', () => {
  const variant = (op: string): Json => {
    const members = defs.TransformNode?.oneOf as Json[];
    const found = members.find((m) => ((m.properties as Json).op as Json).const === op);
    assert.ok(found, `TransformNode has op ${op}`);
    return found;
  };
  const withoutDefs = (schema: Json): Json => {
    const { $defs: _defs, ...rest } = schema;
    return rest;
  };

  it('lists exactly the ops the transform node accepts', () => {
    const ops = (defs.TransformNode?.oneOf as Json[]).map((m) => ((m.properties as Json).op as Json).const);
    assert.deepEqual(Object.keys(contract.transform_ops).sort(), [...ops].sort());
    assert.deepEqual(Object.keys(VALID_TRANSFORMS).sort(), [...ops].sort());
  });

  it('advertises for each op the input and args the transform node schema has', () => {
    for (const [op, advertised] of Object.entries(contract.transform_ops) as [string, Json][]) {
      const properties = variant(op).properties as Json;
      assert.deepEqual(withoutDefs(advertised.input as Json), properties.input, `${op} input`);
      if (advertised.args)
        assert.deepEqual(withoutDefs(advertised.args as Json), properties.args, `${op} args`);
      else assert.equal(properties.args, undefined, `${op} takes no args`);
      assert.equal(typeof advertised.describe, 'string');
      assert.equal((advertised.output as Json).type, 'object', `${op} output`);
    }
  });

  /** Candidate args: the valid ones of every op, and junk. */
  const argCandidates: unknown[] = [
    ...Object.values(VALID_TRANSFORMS).map((t) => t.args),
    {},
    { extra: 1 },
    { path: 'a..b' },
    { path: 1 },
    { template: 1 },
    { template: 'x'.repeat(20_001) },
    { template: 'ok', extra: true },
    { pretty: 'yes' },
    { separator: '' },
    { separator: 's'.repeat(101) },
    { separator: 's'.repeat(100) },
    { field: '.' },
    { field: 'a', op: 'truthy' },
    { field: 'a', op: 'exists' },
    { field: 'a', op: 'contains', value: [1] },
    { op: 'eq', value: 1 },
    { timezone: 3 },
    null,
    'args',
    [],
  ].filter((a) => a !== undefined);

  it('a node whose args break the advertised args schema is rejected by both, and accepted by both otherwise', () => {
    for (const [op, advertised] of Object.entries(contract.transform_ops) as [string, Json][]) {
      const argsOk = advertised.args ? ajv.compile(advertised.args as Json) : undefined;
      for (const args of argCandidates) {
        const node = { ...transformNode(op), args };
        const verdict = judge(asPlan(node));
        const expected = argsOk ? (argsOk(args) as boolean) : false;
        assert.equal(verdict.ajv, expected, `${op} with args ${JSON.stringify(args).slice(0, 80)}`);
      }
    }
  });

  /** Candidate inputs: the valid ones of every op, and junk. */
  const inputCandidates: unknown[] = [
    ...Object.values(VALID_TRANSFORMS).map((t) => t.input),
    {},
    { value: lit(1), extra: lit(2) },
    { items: { kind: 'literal' } },
    { text: 'plain' },
    { items: trig('a..b') },
    null,
    [],
  ].filter((i) => i !== undefined);

  it('a node whose input breaks the advertised input schema is rejected by both, and accepted by both otherwise', () => {
    for (const [op, advertised] of Object.entries(contract.transform_ops) as [string, Json][]) {
      const inputOk = ajv.compile(advertised.input as Json);
      for (const input of inputCandidates) {
        const node = { ...transformNode(op), input };
        assert.equal(
          judge(asPlan(node)).ajv,
          inputOk(input) as boolean,
          `${op} with input ${JSON.stringify(input)}`,
        );
      }
    }
  });

  it('each op accepts exactly what the zod op schemas accept', () => {
    for (const [op, def] of Object.entries(TRANSFORM_OPS) as [
      string,
      {
        input: { safeParse(v: unknown): { success: boolean } };
        args?: { safeParse(v: unknown): { success: boolean } };
      },
    ][]) {
      const advertised = (contract.transform_ops as Record<string, Json>)[op] as Json;
      const inputOk = ajv.compile(advertised.input as Json);
      for (const input of inputCandidates) {
        // An optional input schema is advertised as the object it takes when given.
        if (input === undefined) continue;
        assert.equal(
          inputOk(input),
          def.input.safeParse(input).success,
          `${op} input ${JSON.stringify(input)}`,
        );
      }
      if (!def.args) continue;
      const argsOk = ajv.compile(advertised.args as Json);
      for (const args of argCandidates) {
        assert.equal(
          argsOk(args),
          def.args.safeParse(args).success,
          `${op} args ${JSON.stringify(args).slice(0, 80)}`,
        );
      }
    }
  });
});

// ── (d) triggers ────────────────────────────────────────────────────────────────────────────────

describe('contract: trigger_input', () => {
  const triggerJson = contract.trigger_input as Json;
  const ajvTrigger = ajv.compile(triggerJson);
  const agree = (raw: unknown) => {
    const sample = clone(raw);
    const advertised = ajvTrigger(sample) as boolean;
    assert.equal(advertised, triggerSchema.safeParse(sample).success, JSON.stringify(sample));
    return advertised;
  };

  it('advertises the payload of every trigger kind and of a manual run', () => {
    assert.deepEqual(Object.keys(triggerJson.payloads as Json).sort(), [
      'connector_event',
      'github_event',
      'manual',
      'schedule',
    ]);
  });

  const VALID_TRIGGERS = [
    { kind: 'schedule', frequency: 'hourly', minute: 5, timezone: 'UTC' },
    { kind: 'schedule', frequency: 'daily', hour: 0, minute: 0, timezone: 'Europe/Berlin' },
    { kind: 'schedule', frequency: 'weekdays', hour: 23, minute: 59, timezone: 'America/New_York' },
    { kind: 'schedule', frequency: 'weekly', weekday: 7, hour: 9, minute: 30, timezone: 'Asia/Tokyo' },
    { kind: 'schedule', frequency: 'weekly', weekday: 1, hour: 0, minute: 0, timezone: 'UTC' },
    { kind: 'connector_event', provider: 'workspace', event: 'document.created' },
    { kind: 'connector_event', provider: 'github', event: 'push' },
    { kind: 'github_event', event: 'pull_request', repo: 'acme/web' },
    { kind: 'github_event', event: 'issues', actions: ['opened', 'closed'], repo: 'a.b/c_d-e' },
    { kind: 'github_event', event: 'issues', actions: [], repo: 'a/b' },
  ];

  it('accepts the valid triggers, both ways', () => {
    for (const t of VALID_TRIGGERS) assert.equal(agree(t), true, JSON.stringify(t));
  });

  it('rejects the invalid triggers, both ways', () => {
    const invalid = [
      { kind: 'schedule', frequency: 'monthly', timezone: 'UTC' },
      // Each frequency takes exactly its own fields.
      { kind: 'schedule', frequency: 'hourly', hour: 9, minute: 0, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'daily', weekday: 1, hour: 9, minute: 0, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'weekly', weekday: 1, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'daily', minute: 0, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'daily', hour: 24, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'daily', hour: -1, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'hourly', minute: 60, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'hourly', minute: 1.5, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'weekly', weekday: 0, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'weekly', weekday: 8, timezone: 'UTC' },
      { kind: 'schedule', frequency: 'daily', hour: 9 },
      { kind: 'schedule', frequency: 'daily', hour: 9, timezone: '' },
      { kind: 'schedule', frequency: 'daily', hour: 9, timezone: 'UTC', cron: '* * * * *' },
      { kind: 'connector_event', provider: '', event: 'x' },
      { kind: 'connector_event', provider: 'github' },
      { kind: 'connector_event', provider: 'github', event: '' },
      { kind: 'github_event', event: 'push', repo: 'acme' },
      { kind: 'github_event', event: 'push', repo: 'acme/web/extra' },
      { kind: 'github_event', event: 'push', repo: 'acme/web', actions: [''] },
      { kind: 'github_event', event: 'push', repo: 'acme/web', actions: 'opened' },
      { kind: 'github_event', repo: 'acme/web' },
      { kind: 'manual' },
      { frequency: 'daily', timezone: 'UTC' },
      null,
      'schedule',
    ];
    for (const t of invalid) assert.equal(agree(t), false, JSON.stringify(t));
  });

  it('agrees on random triggers', () => {
    const field = fc.oneof(fc.integer({ min: -1, max: 61 }), fc.constant(1.5), fc.jsonValue({ maxDepth: 0 }));
    const arb = fc.oneof(
      fc
        .constantFrom(...VALID_TRIGGERS)
        .chain((t) =>
          fc
            .tuple(fc.constantFrom(...Object.keys(t), 'extra'), fc.oneof(field, fc.constant(undefined)))
            .map(([k, v]) => setAt(t, [k], v)),
        ),
      fc.record(
        {
          kind: fc.constantFrom('schedule', 'connector_event', 'github_event', 'manual'),
          frequency: fc.constantFrom('hourly', 'daily', 'weekdays', 'weekly', 'yearly'),
          weekday: field,
          hour: field,
          minute: field,
          timezone: fc.constantFrom('UTC', '', 'Mars/Olympus'),
          provider: fc.constantFrom('workspace', 'github', ''),
          event: fc.constantFrom('push', ''),
          actions: fc.oneof(fc.array(fc.constantFrom('opened', '')), fc.jsonValue({ maxDepth: 0 })),
          repo: fc.constantFrom('a/b', 'ab', 'a/b/c', 'a b/c'),
        },
        { requiredKeys: ['kind'] },
      ),
    );
    fc.assert(
      fc.property(arb, (t) => {
        agree(t);
      }),
      { numRuns: 2000 },
    );
  });
});

// ── (e) write_approval ──────────────────────────────────────────────────────────────────────────

describe('contract: write_approval', () => {
  it('lists exactly required and automatic, as the validator takes them', () => {
    const advertised = contract.write_approval as Json;
    assert.equal(advertised.type, 'string');
    assert.deepEqual([...(advertised.enum as string[])].sort(), ['automatic', 'required']);
    const check = ajv.compile(advertised);
    for (const value of ['required', 'automatic', 'manual', '', 'Required', null, true]) {
      assert.equal(check(value), writeApprovalSchema.safeParse(value).success, JSON.stringify(value));
    }
  });

  it('means what it says: an approval is refused under automatic and a bare write under required', () => {
    const write = {
      kind: 'capability',
      id: 'post',
      capability: 'conversations.post_message',
      input: { text: lit('hi') },
    };
    const gated = planOf(
      [{ kind: 'approval', id: 'ok', message: lit('Go?') }, write],
      [{ from: 'ok', to: 'post' }],
    );
    assert.equal(validatePlan(gated, { ...ctx, writeApproval: 'required' }).ok, true);
    assert.equal(validatePlan(planOf([write]), { ...ctx, writeApproval: 'automatic' }).ok, true);
    const r1 = validatePlan(planOf([write]), { ...ctx, writeApproval: 'required' });
    assert.ok(!r1.ok && r1.errors.some((x) => x.rule === 'write/needs-approval'));
    const r2 = validatePlan(gated, { ...ctx, writeApproval: 'automatic' });
    assert.ok(!r2.ok && r2.errors.some((x) => x.rule === 'write/approval-with-automatic'));
  });
});
