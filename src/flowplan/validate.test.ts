import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  BUILTIN_PLUGINS,
  Catalogue,
  CONNECTOR_PLUGINS,
  type ConnectorEntry,
  type NamespaceState,
} from '../capabilities/catalogue.ts';
import type { ConnectorPlugin } from '../capabilities/capability.ts';
import type { Binding } from './bindings.ts';
import type { FlowPlan } from './plan.ts';
import { summarise } from './summary.ts';
import {
  validatePlan,
  type PlanError,
  type Rule,
  type SubflowTarget,
  type ValidationContext,
  type ValidationResult,
} from './validate.ts';

// ── a workspace: built-ins, GitHub shared, Slack only through my own connection, e-mail not mine ──

function plugin(namespace: string): ConnectorPlugin {
  const found = CONNECTOR_PLUGINS.find((p) => p.namespace === namespace);
  assert.ok(found, `connector plugin ${namespace}`);
  return found;
}

const namespaces = new Map<string, NamespaceState>();
for (const p of BUILTIN_PLUGINS) {
  namespaces.set(p.namespace, { plugin: p, connected: true, personalOnly: false, providers: [] });
}
namespaces.set('github', {
  plugin: plugin('github'),
  connected: true,
  personalOnly: false,
  providers: ['github'],
});
namespaces.set('slack', {
  plugin: plugin('slack'),
  connected: true,
  personalOnly: true,
  providers: ['slack'],
});
namespaces.set('email', {
  plugin: plugin('email'),
  connected: false,
  personalOnly: false,
  providers: ['gmail'],
});

const connectors: ConnectorEntry[] = [
  { provider: 'github', name: 'GitHub', personal: false, namespace: 'github', connected: true },
  { provider: 'slack', name: 'Slack', personal: true, namespace: 'slack', connected: true },
  // Someone else's personal Gmail: visible, not usable by me.
  { provider: 'gmail', name: 'Gmail', personal: true, namespace: 'email', connected: false },
];

const catalogue = new Catalogue(namespaces, connectors);

const SUBFLOWS = new Map<string, SubflowTarget>([
  ['auto_reader', { writes: false }],
  ['auto_writer', { writes: true }],
  ['auto_self', { writes: false }],
]);

const ctx: ValidationContext = {
  catalogue,
  writeApproval: 'required',
  subflows: SUBFLOWS,
  automationId: 'auto_self',
};
const automatic: ValidationContext = { ...ctx, writeApproval: 'automatic' };

// ── plan builders ───────────────────────────────────────────────────────────────────────────────

type Raw = Record<string, unknown>;

const lit = (value: unknown): Binding => ({ kind: 'literal', value });
const ref = (node: string, path = ''): Binding => ({ kind: 'ref', node, path });
const trig = (path = ''): Binding => ({ kind: 'trigger', path });

function planOf(nodes: unknown[], edges?: unknown[]): Raw {
  return {
    planVersion: 1,
    name: 'Test plan',
    description: 'A plan built by the tests.',
    nodes,
    ...(edges ? { edges } : {}),
  };
}

const e = (from: string, to: string, when?: boolean) => ({
  from,
  to,
  ...(when === undefined ? {} : { when }),
});
const notify = (id: string, message: Binding = lit('hello')) => ({ kind: 'notify', id, message });
const approval = (id: string) => ({ kind: 'approval', id, message: lit('Go ahead?') });
const readDoc = (id: string, documentId: Binding = lit('doc_1')) => ({
  kind: 'capability',
  id,
  capability: 'documents.read_document',
  input: { document_id: documentId },
});
const postMessage = (id: string, text: Binding = lit('Hi')) => ({
  kind: 'capability',
  id,
  capability: 'conversations.post_message',
  input: { text },
});
const branchOn = (id: string, left: Binding = trig('flag')) => ({
  kind: 'branch',
  id,
  condition: { op: 'truthy', left },
});
const mapOver = (id: string, nodes: unknown[], result: string, edges?: unknown[]) => ({
  kind: 'map',
  id,
  items: trig('items'),
  body: { nodes, ...(edges ? { edges } : {}) },
  result,
});

function errorsOf(raw: unknown, context: ValidationContext = ctx): PlanError[] {
  const result = validatePlan(raw, context);
  assert.equal(result.ok, false, 'the plan should be refused');
  return (result as Extract<ValidationResult, { ok: false }>).errors;
}

function validOk(raw: unknown, context: ValidationContext = ctx): FlowPlan {
  const result = validatePlan(raw, context);
  assert.deepEqual(result.ok ? [] : result.errors, [], 'the plan should be accepted');
  return (result as Extract<ValidationResult, { ok: true }>).plan;
}

interface Expected {
  rule: Rule;
  path: (string | number)[];
  node_id?: string | undefined;
  /** What the message must say (the fix). */
  says: RegExp;
}

/** The one error with this rule and path, checked for node_id and message. */
function expectError(errors: PlanError[], want: Expected): PlanError {
  const found = errors.filter(
    (x) => x.rule === want.rule && JSON.stringify(x.path) === JSON.stringify(want.path),
  );
  assert.equal(
    found.length,
    1,
    `expected one ${want.rule} error at ${JSON.stringify(want.path)}; got ${JSON.stringify(errors, null, 2)}`,
  );
  const error = found[0] as PlanError;
  assert.equal(error.node_id, want.node_id, `node_id of ${JSON.stringify(error)}`);
  assert.match(error.message, want.says);
  return error;
}

const rules = (errors: PlanError[]) => [...new Set(errors.map((x) => x.rule))].sort();

// ── shape ───────────────────────────────────────────────────────────────────────────────────────

describe('validatePlan: shape', () => {
  it('refuses something that is not a plan object', () => {
    for (const raw of [null, 'plan', 3, [planOf([notify('a')])]]) {
      const errors = errorsOf(raw);
      assert.deepEqual(rules(errors), ['shape']);
      expectError(errors, { rule: 'shape', path: [], says: /FlowPlan object with planVersion, name/ });
    }
  });

  it('names the node kinds when the kind is unknown', () => {
    const errors = errorsOf(planOf([{ id: 'x', kind: 'script', code: 'rm -rf /' }]));
    assert.deepEqual(rules(errors), ['shape']);
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'kind'],
      node_id: 'x',
      says: /must be capability, agent, transform, branch, map, subflow, approval, notify or delay/,
    });
  });

  it('says a missing field is required', () => {
    const errors = errorsOf(planOf([{ kind: 'notify', id: 'n' }]));
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'message'],
      node_id: 'n',
      says: /message is required/,
    });
  });

  it('tells a value of the wrong type apart from a missing one', () => {
    const errors = errorsOf({ ...planOf([{ kind: 'delay', id: 'd', seconds: 'soon' }]), name: 5 });
    expectError(errors, { rule: 'shape', path: ['name'], says: /^name must be a string$/ });
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'seconds'],
      node_id: 'd',
      says: /seconds must be a number/,
    });
  });

  it('says to remove an unknown field', () => {
    const errors = errorsOf(planOf([{ ...notify('n'), colour: 'red' }]));
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0],
      node_id: 'n',
      says: /unknown field colour; remove it/,
    });
  });

  it('refuses ids with characters outside [A-Za-z0-9_-] and ids past 64 characters', () => {
    for (const id of ['has space', 'dot.ted', 'x'.repeat(65), '']) {
      const errors = errorsOf(planOf([notify(id)]));
      expectError(errors, {
        rule: 'shape',
        path: ['nodes', 0, 'id'],
        node_id: id === '' ? undefined : id,
        says: /must be 1–64 letters, digits, "_" or "-"/,
      });
    }
    validOk(planOf([notify('A-z_09'), notify('y'.repeat(64))]));
  });

  it('refuses another planVersion and says which one', () => {
    const errors = errorsOf({ ...planOf([notify('n')]), planVersion: 2 });
    assert.deepEqual(rules(errors), ['shape']);
    expectError(errors, { rule: 'shape', path: ['planVersion'], says: /planVersion must be 1/ });
  });

  it('refuses a plan with no nodes, and says it needs one', () => {
    const errors = errorsOf(planOf([]));
    expectError(errors, { rule: 'shape', path: ['nodes'], says: /at least 1 item/ });
  });

  it('names the binding kinds when a binding kind is unknown', () => {
    const errors = errorsOf(planOf([notify('n', { kind: 'env', path: 'HOME' } as unknown as Binding)]));
    assert.deepEqual(rules(errors), ['shape']);
    const error = errors[0] as PlanError;
    assert.equal(error.node_id, 'n');
    assert.deepEqual(error.path.slice(0, 3), ['nodes', 0, 'message']);
    assert.match(error.message, /literal, ref or trigger/);
  });

  it('refuses a ref binding without a path', () => {
    const errors = errorsOf(
      planOf([notify('a'), notify('n', { kind: 'ref', node: 'a' } as Binding)], [e('a', 'n')]),
    );
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 1, 'message', 'path'],
      node_id: 'n',
      says: /path is required/,
    });
  });

  it('refuses a delay with both seconds and until', () => {
    const errors = errorsOf(planOf([{ kind: 'delay', id: 'd', seconds: 60, until: trig('at') }]));
    assert.deepEqual(rules(errors), ['shape']);
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0],
      node_id: 'd',
      says: /unknown field (until|seconds); remove it/,
    });
    validOk(planOf([{ kind: 'delay', id: 'd', seconds: 60 }]));
    validOk(planOf([{ kind: 'delay', id: 'd', until: trig('at') }]));
  });

  it('refuses a delay past 30 days', () => {
    const errors = errorsOf(planOf([{ kind: 'delay', id: 'd', seconds: 30 * 24 * 3600 + 1 }]));
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'seconds'],
      node_id: 'd',
      says: /at most 2592000/,
    });
  });

  it('refuses a binary branch op without right', () => {
    const errors = errorsOf(planOf([{ kind: 'branch', id: 'b', condition: { op: 'eq', left: trig('x') } }]));
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'condition', 'right'],
      node_id: 'b',
      says: /right is required/,
    });
  });

  it('refuses a unary branch op with right', () => {
    const errors = errorsOf(
      planOf([{ kind: 'branch', id: 'b', condition: { op: 'exists', left: trig('x'), right: lit(1) } }]),
    );
    assert.deepEqual(rules(errors), ['shape']);
    const error = errors[0] as PlanError;
    assert.equal(error.node_id, 'b');
    assert.deepEqual(error.path.slice(0, 3), ['nodes', 0, 'condition']);
    // Either "remove right" or "use a binary op" fixes it; the message must point at one of them.
    assert.match(error.message, /unknown field right; remove it|op must be eq, ne/);
  });

  it('refuses an unknown branch op', () => {
    const errors = errorsOf(
      planOf([{ kind: 'branch', id: 'b', condition: { op: 'matches', left: trig('x'), right: lit('y') } }]),
    );
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'condition', 'op'],
      node_id: 'b',
      says: /must be eq, ne, gt, gte, lt, lte or contains/,
    });
  });

  it('refuses retry.max_attempts above 5 and map concurrency above 10', () => {
    const errors = errorsOf(
      planOf([
        { ...readDoc('r'), retry: { max_attempts: 6 } },
        { ...mapOver('m', [notify('x')], 'x'), concurrency: 11 },
      ]),
    );
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'retry', 'max_attempts'],
      node_id: 'r',
      says: /at most 5/,
    });
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 1, 'concurrency'],
      node_id: 'm',
      says: /at most 10/,
    });
  });

  it('finds shape errors inside a map body, with the path into the body', () => {
    const errors = errorsOf(planOf([mapOver('m', [{ kind: 'notify', id: 'inner' }], 'inner')]));
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 0, 'body', 'nodes', 0, 'message'],
      node_id: 'inner',
      says: /is required/,
    });
  });

  it('refuses an edge with an unknown field', () => {
    const errors = errorsOf(planOf([notify('a'), notify('b')], [{ from: 'a', to: 'b', label: 'next' }]));
    expectError(errors, { rule: 'shape', path: ['edges', 0], says: /unknown field label; remove it/ });
  });
});

// ── plan/too-many-nodes ─────────────────────────────────────────────────────────────────────────

const many = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => notify(`${prefix}${i}`));

describe('validatePlan: plan/too-many-nodes', () => {
  it('refuses 201 nodes and says to split into subflows', () => {
    const errors = errorsOf(planOf(many(201, 'n')));
    assert.deepEqual(rules(errors), ['plan/too-many-nodes']);
    expectError(errors, {
      rule: 'plan/too-many-nodes',
      path: ['nodes'],
      says: /201 nodes .*at most 200.*split it into subflows/,
    });
  });

  it('counts map body nodes: 150 at the top and 60 in a body is too many', () => {
    const errors = errorsOf(planOf([...many(149, 'n'), mapOver('m', many(60, 'b'), 'b0')]));
    expectError(errors, {
      rule: 'plan/too-many-nodes',
      path: ['nodes'],
      says: /210 nodes \(map bodies included\)/,
    });
  });

  it('accepts exactly 200 nodes, map bodies included', () => {
    validOk(planOf([...many(139, 'n'), mapOver('m', many(60, 'b'), 'b0')]));
    validOk(planOf(many(200, 'n')));
  });
});

// ── node/duplicate-id ───────────────────────────────────────────────────────────────────────────

describe('validatePlan: node/duplicate-id', () => {
  it('refuses two nodes with one id, pointing at the second and naming the first', () => {
    const errors = errorsOf(planOf([notify('a'), notify('b'), notify('a')]));
    assert.deepEqual(rules(errors), ['node/duplicate-id']);
    expectError(errors, {
      rule: 'node/duplicate-id',
      path: ['nodes', 2, 'id'],
      node_id: 'a',
      says: /already used at nodes\.0; give every node its own id/,
    });
  });

  it('refuses an id used both at the top and inside a map body', () => {
    const errors = errorsOf(planOf([notify('a'), mapOver('m', [notify('a')], 'a')]));
    expectError(errors, {
      rule: 'node/duplicate-id',
      path: ['nodes', 1, 'body', 'nodes', 0, 'id'],
      node_id: 'a',
      says: /already used at nodes\.0/,
    });
  });

  it('refuses an id used in two map bodies', () => {
    const errors = errorsOf(planOf([mapOver('m1', [notify('x')], 'x'), mapOver('m2', [notify('x')], 'x')]));
    expectError(errors, {
      rule: 'node/duplicate-id',
      path: ['nodes', 1, 'body', 'nodes', 0, 'id'],
      node_id: 'x',
      says: /already used at nodes\.0\.body\.nodes\.0/,
    });
  });

  it('still checks the body of a map whose id is taken, so every mistake in it is reported', () => {
    const errors = errorsOf(planOf([mapOver('m', [notify('x')], 'x'), mapOver('m', [[]], 'x')]));
    assert.ok(rules(errors).includes('node/duplicate-id'));
    expectError(errors, {
      rule: 'shape',
      path: ['nodes', 1, 'body', 'nodes', 0],
      says: /must be a node object/,
    });
  });
});

// ── edges ───────────────────────────────────────────────────────────────────────────────────────

describe('validatePlan: edge/unknown-node', () => {
  it('refuses an edge to or from a node that does not exist', () => {
    const errors = errorsOf(planOf([notify('a')], [e('a', 'ghost'), e('nobody', 'a')]));
    assert.deepEqual(rules(errors), ['edge/unknown-node']);
    expectError(errors, {
      rule: 'edge/unknown-node',
      path: ['edges', 0, 'to'],
      says: /"ghost".*use one of the node ids/,
    });
    expectError(errors, {
      rule: 'edge/unknown-node',
      path: ['edges', 1, 'from'],
      says: /"nobody".*use one of the node ids/,
    });
  });

  it('refuses an edge from a map body out to the top level, naming where that node is', () => {
    const errors = errorsOf(
      planOf([notify('a'), mapOver('m', [notify('inner')], 'inner', [e('inner', 'a')])]),
    );
    expectError(errors, {
      rule: 'edge/unknown-node',
      path: ['nodes', 1, 'body', 'edges', 0, 'to'],
      says: /"a" is a node of another graph \(nodes\.0\); edges join nodes of the same list/,
    });
  });

  it('refuses an edge from the top level into a map body, naming where that node is', () => {
    const errors = errorsOf(
      planOf([notify('a'), mapOver('m', [notify('inner')], 'inner')], [e('a', 'inner')]),
    );
    expectError(errors, {
      rule: 'edge/unknown-node',
      path: ['edges', 0, 'to'],
      says: /node of another graph \(nodes\.1\.body\.nodes\.0\); edges join nodes of the same list/,
    });
  });
});

describe('validatePlan: edge/when', () => {
  it('requires when on an edge leaving a branch', () => {
    const errors = errorsOf(
      planOf([branchOn('br'), notify('yes'), notify('no')], [e('br', 'yes', true), e('br', 'no')]),
    );
    assert.deepEqual(rules(errors), ['edge/when']);
    expectError(errors, {
      rule: 'edge/when',
      path: ['edges', 1],
      node_id: 'br',
      says: /needs when: true or when: false/,
    });
  });

  it('refuses when on an edge that does not leave a branch', () => {
    const errors = errorsOf(planOf([notify('a'), notify('b')], [e('a', 'b', false)]));
    expectError(errors, {
      rule: 'edge/when',
      path: ['edges', 0, 'when'],
      node_id: 'a',
      says: /only edges leaving a branch node may; remove it/,
    });
  });

  it('checks edges inside a map body too', () => {
    const body = [branchOn('bb', trig('item')), notify('x')];
    const errors = errorsOf(planOf([mapOver('m', body, 'x', [e('bb', 'x')])]));
    expectError(errors, {
      rule: 'edge/when',
      path: ['nodes', 0, 'body', 'edges', 0],
      node_id: 'bb',
      says: /needs when/,
    });
  });
});

describe('validatePlan: dag/cycle', () => {
  it('refuses a cycle and names it', () => {
    const errors = errorsOf(
      planOf([notify('a'), notify('b'), notify('c')], [e('a', 'b'), e('b', 'c'), e('c', 'b')]),
    );
    assert.deepEqual(rules(errors), ['dag/cycle']);
    const error = expectError(errors, {
      rule: 'dag/cycle',
      path: ['edges'],
      node_id: 'b',
      says: /remove one of these edges/,
    });
    assert.match(error.message, /b → c → b/);
  });

  it('refuses a self-loop', () => {
    const errors = errorsOf(planOf([notify('a')], [e('a', 'a')]));
    expectError(errors, {
      rule: 'dag/cycle',
      path: ['edges'],
      node_id: 'a',
      says: /cycle a → a; remove one/,
    });
  });

  it('refuses a cycle inside a map body, at the body edges', () => {
    const errors = errorsOf(
      planOf([mapOver('m', [notify('x'), notify('y')], 'y', [e('x', 'y'), e('y', 'x')])]),
    );
    expectError(errors, {
      rule: 'dag/cycle',
      path: ['nodes', 0, 'body', 'edges'],
      node_id: 'x',
      says: /x → y → x/,
    });
  });
});

// ── capabilities ────────────────────────────────────────────────────────────────────────────────

describe('validatePlan: capability/unknown', () => {
  it('refuses an unknown namespace and points at describe_capabilities', () => {
    const errors = errorsOf(
      planOf([{ kind: 'capability', id: 'j', capability: 'jira.create_ticket', input: {} }]),
    );
    assert.deepEqual(rules(errors), ['capability/unknown']);
    expectError(errors, {
      rule: 'capability/unknown',
      path: ['nodes', 0, 'capability'],
      node_id: 'j',
      says: /jira\.create_ticket is not a known capability; describe_capabilities lists/,
    });
  });

  it('refuses an unknown name in a known namespace and lists the ones it has', () => {
    const errors = errorsOf(planOf([{ kind: 'capability', id: 'g', capability: 'github.delete_repo' }]));
    expectError(errors, {
      rule: 'capability/unknown',
      path: ['nodes', 0, 'capability'],
      node_id: 'g',
      says: /not a capability of github; use one of github\.get_issue, github\.list_pull_requests, github\.create_issue, github\.comment_on_issue/,
    });
  });

  it('refuses an unknown tool of an agent node, at the tool', () => {
    const errors = errorsOf(
      planOf([
        {
          kind: 'agent',
          id: 'ag',
          instructions: lit('Summarise'),
          tools: ['documents.read_document', 'web.search'],
        },
      ]),
    );
    expectError(errors, {
      rule: 'capability/unknown',
      path: ['nodes', 0, 'tools', 1],
      node_id: 'ag',
      says: /describe_capabilities/,
    });
  });
});

describe('validatePlan: capability/not-connected', () => {
  it('refuses a capability of a connector not connected for me', () => {
    const errors = errorsOf(
      planOf(
        [
          {
            kind: 'capability',
            id: 's',
            capability: 'email.send',
            input: { to: lit(['ada@acme.test']), subject: lit('Invoice'), body: lit('Attached.') },
          },
          approval('ok'),
        ],
        [e('ok', 's')],
      ),
    );
    assert.deepEqual(rules(errors), ['capability/not-connected']);
    expectError(errors, {
      rule: 'capability/not-connected',
      path: ['nodes', 0, 'capability'],
      node_id: 's',
      says: /email connector.*connect it or use another capability/,
    });
  });

  it('refuses an agent tool of a connector not connected for me', () => {
    const errors = errorsOf(
      planOf([{ kind: 'agent', id: 'ag', instructions: lit('Mail the summary'), tools: ['email.send'] }]),
    );
    expectError(errors, {
      rule: 'capability/not-connected',
      path: ['nodes', 0, 'tools', 0],
      node_id: 'ag',
      says: /connect it/,
    });
  });

  it('accepts connectors connected for the workspace and through my own personal connection', () => {
    validOk(
      planOf([
        {
          kind: 'capability',
          id: 'g',
          capability: 'github.get_issue',
          input: { repo: lit('acme/web'), number: lit(7) },
        },
        { kind: 'capability', id: 's', capability: 'slack.list_channels', input: {} },
      ]),
    );
  });
});

describe('validatePlan: capability/input', () => {
  it('refuses an input field the capability does not have and lists the ones it has', () => {
    const node = { ...readDoc('r'), input: { document_id: lit('d'), doc: lit('d') } };
    const errors = errorsOf(planOf([node]));
    assert.deepEqual(rules(errors), ['capability/input']);
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 0, 'input', 'doc'],
      node_id: 'r',
      says: /has no input doc; its inputs are document_id, offset, window/,
    });
  });

  it('refuses a missing required input field and says to add it', () => {
    const errors = errorsOf(planOf([{ ...readDoc('r'), input: { offset: lit(0) } }]));
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 0, 'input'],
      node_id: 'r',
      says: /needs input document_id; add it as a binding/,
    });
  });

  it('treats a capability node without input as missing its required fields', () => {
    const errors = errorsOf(planOf([{ kind: 'capability', id: 'r', capability: 'documents.read_document' }]));
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 0, 'input'],
      node_id: 'r',
      says: /needs input document_id/,
    });
  });

  it('checks literals by value against the field schema', () => {
    const errors = errorsOf(
      planOf([
        readDoc('r', lit(42)),
        {
          kind: 'capability',
          id: 'l',
          capability: 'documents.list_documents',
          input: { limit: lit(51), scope: lit('everyone') },
        },
      ]),
    );
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 1, 'input', 'limit', 'value'],
      node_id: 'l',
      says: /must be at most 50/,
    });
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 1, 'input', 'scope', 'value'],
      node_id: 'l',
      says: /must be mine, shared, pod or org/,
    });
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 0, 'input', 'document_id', 'value'],
      node_id: 'r',
      says: /^documents\.read_document: nodes\.0\.input\.document_id\.value must be a string$/,
    });
  });

  it('refuses a ref whose upstream output is known to be of the wrong type', () => {
    const count = { kind: 'transform', id: 'c', op: 'count', input: { items: trig('items') } };
    const errors = errorsOf(planOf([count, readDoc('r', ref('c', 'count'))], [e('c', 'r')]));
    assert.deepEqual(rules(errors), ['capability/input']);
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 1, 'input', 'document_id'],
      node_id: 'r',
      says: /wants document_id as a string, but c\.count is a number; .*convert it with a transform node/,
    });
  });

  it('follows array indexes in a ref path to the item type', () => {
    const list = {
      kind: 'capability',
      id: 'prs',
      capability: 'github.list_pull_requests',
      input: { repo: lit('a/b') },
    };
    const bad = {
      kind: 'capability',
      id: 'issue',
      capability: 'github.get_issue',
      input: { repo: lit('a/b'), number: ref('prs', 'pull_requests.0.title') },
    };
    const errors = errorsOf(planOf([list, bad], [e('prs', 'issue')]));
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 1, 'input', 'number'],
      node_id: 'issue',
      says: /wants number as an integer, but prs\.pull_requests\.0\.title is a string/,
    });
  });

  it('accepts a ref from a number output into an integer input', () => {
    // A pull request's number, as listed, is the number get_issue wants.
    const list = {
      kind: 'capability',
      id: 'prs',
      capability: 'github.list_pull_requests',
      input: { repo: lit('a/b') },
    };
    const issue = {
      kind: 'capability',
      id: 'issue',
      capability: 'github.get_issue',
      input: { repo: lit('a/b'), number: ref('prs', 'pull_requests.0.number') },
    };
    validOk(planOf([list, issue], [e('prs', 'issue')]));
    // A count is a fine page size.
    const count = { kind: 'transform', id: 'c', op: 'count', input: { items: trig('items') } };
    const listDocs = {
      kind: 'capability',
      id: 'docs',
      capability: 'documents.list_documents',
      input: { limit: ref('c', 'count') },
    };
    validOk(planOf([count, listDocs], [e('c', 'docs')]));
  });

  it('accepts a ref into an output whose type is not known', () => {
    const get = {
      kind: 'transform',
      id: 'g',
      op: 'get',
      input: { value: trig('doc') },
      args: { path: 'id' },
    };
    const agent = {
      kind: 'agent',
      id: 'ag',
      instructions: lit('Pick a document'),
      output_schema: { type: 'object' },
    };
    validOk(
      planOf(
        [
          get,
          agent,
          { kind: 'subflow', id: 'sf', automation_id: 'auto_reader' },
          readDoc('r1', ref('g', 'value')),
          readDoc('r2', ref('ag', 'document_id')),
          readDoc('r3', ref('sf', 'anything.at.all')),
        ],
        [e('g', 'r1'), e('ag', 'r2'), e('sf', 'r3')],
      ),
    );
  });

  it('accepts a ref of the right type', () => {
    const read = readDoc('r');
    const again = readDoc('r2', ref('r', 'document_id'));
    validOk(planOf([read, again], [e('r', 'r2')]));
  });

  it('refuses an agent tool that writes', () => {
    const errors = errorsOf(
      planOf([
        {
          kind: 'agent',
          id: 'ag',
          instructions: lit('Do it'),
          tools: ['pages.read_page', 'documents.create_document'],
        },
      ]),
    );
    assert.deepEqual(rules(errors), ['capability/input']);
    expectError(errors, {
      rule: 'capability/input',
      path: ['nodes', 0, 'tools', 1],
      node_id: 'ag',
      says: /documents\.create_document writes; an agent node's tools may only be read capabilities/,
    });
  });
});

// ── bindings ────────────────────────────────────────────────────────────────────────────────────

describe('validatePlan: binding/unknown-node', () => {
  it('refuses a ref to a node that does not exist', () => {
    const errors = errorsOf(planOf([notify('n', ref('ghost', 'text'))]));
    assert.deepEqual(rules(errors), ['binding/unknown-node']);
    expectError(errors, {
      rule: 'binding/unknown-node',
      path: ['nodes', 0, 'message', 'node'],
      node_id: 'n',
      says: /"ghost", which is not a node of this plan/,
    });
  });

  it('checks every binding place of a node', () => {
    const errors = errorsOf(
      planOf([
        { kind: 'branch', id: 'b', condition: { op: 'eq', left: ref('g1', ''), right: ref('g2', '') } },
        { kind: 'agent', id: 'ag', instructions: ref('g3', ''), input: { x: ref('g4', '') } },
        { kind: 'delay', id: 'd', until: ref('g5', '') },
        { ...mapOver('m', [notify('x')], 'x'), items: ref('g6', '') },
      ]),
    );
    for (const [path, nodeId] of [
      [['nodes', 0, 'condition', 'left', 'node'], 'b'],
      [['nodes', 0, 'condition', 'right', 'node'], 'b'],
      [['nodes', 1, 'instructions', 'node'], 'ag'],
      [['nodes', 1, 'input', 'x', 'node'], 'ag'],
      [['nodes', 2, 'until', 'node'], 'd'],
      [['nodes', 3, 'items', 'node'], 'm'],
    ] as const) {
      expectError(errors, {
        rule: 'binding/unknown-node',
        path: [...path],
        node_id: nodeId,
        says: /not a node of this plan/,
      });
    }
  });
});

describe('validatePlan: binding/not-upstream', () => {
  it('refuses a ref to a sibling that does not run before', () => {
    const errors = errorsOf(planOf([notify('a'), notify('b', ref('a', 'message_id'))]));
    assert.deepEqual(rules(errors), ['binding/not-upstream']);
    expectError(errors, {
      rule: 'binding/not-upstream',
      path: ['nodes', 1, 'message', 'node'],
      node_id: 'b',
      says: /add an edge path from "a" to "b" or refer to an upstream node/,
    });
  });

  it('refuses a ref to a node downstream', () => {
    const errors = errorsOf(planOf([notify('a', ref('b', 'message_id')), notify('b')], [e('a', 'b')]));
    expectError(errors, {
      rule: 'binding/not-upstream',
      path: ['nodes', 0, 'message', 'node'],
      node_id: 'a',
      says: /"b", which does not run before "a"/,
    });
  });

  it('refuses a ref to itself', () => {
    const errors = errorsOf(planOf([notify('a', ref('a', 'message_id'))]));
    expectError(errors, {
      rule: 'binding/not-upstream',
      path: ['nodes', 0, 'message', 'node'],
      node_id: 'a',
      says: /upstream/,
    });
  });

  it('accepts a ref to a node two edges upstream', () => {
    validOk(
      planOf([notify('a'), notify('b'), notify('c', ref('a', 'message_id'))], [e('a', 'b'), e('b', 'c')]),
    );
  });

  it('refuses a ref from outside a map into its body, and says to use the map', () => {
    const errors = errorsOf(
      planOf(
        [mapOver('m', [notify('inner')], 'inner'), notify('after', ref('inner', 'message_id'))],
        [e('m', 'after')],
      ),
    );
    expectError(errors, {
      rule: 'binding/not-upstream',
      path: ['nodes', 1, 'message', 'node'],
      node_id: 'after',
      says: /inside map "m"'s body; refer to "m" \(its results\)/,
    });
  });

  it('lets a body node ref a node upstream of the map, but not one beside it', () => {
    const body = [notify('inner', ref('before', 'message_id'))];
    validOk(planOf([notify('before'), mapOver('m', body, 'inner')], [e('before', 'm')]));

    const errors = errorsOf(
      planOf([notify('beside'), mapOver('m', [notify('inner', ref('beside', 'message_id'))], 'inner')]),
    );
    expectError(errors, {
      rule: 'binding/not-upstream',
      path: ['nodes', 1, 'body', 'nodes', 0, 'message', 'node'],
      node_id: 'inner',
      says: /does not run before "inner"/,
    });
  });

  it('lets a nested body node ref a node upstream of the outer map', () => {
    const innerMap = mapOver('m2', [notify('leaf', ref('root', 'message_id'))], 'leaf');
    validOk(planOf([notify('root'), mapOver('m1', [innerMap], 'm2')], [e('root', 'm1')]));
  });

  it('refuses a body node ref to its own map', () => {
    const errors = errorsOf(planOf([mapOver('m', [notify('inner', ref('m', 'results'))], 'inner')]));
    expectError(errors, {
      rule: 'binding/not-upstream',
      path: ['nodes', 0, 'body', 'nodes', 0, 'message', 'node'],
      node_id: 'inner',
      says: /upstream/,
    });
  });
});

// ── the write rule ──────────────────────────────────────────────────────────────────────────────

describe('validatePlan: write/needs-approval', () => {
  it('refuses a write with no approval and says how to fix it', () => {
    const errors = errorsOf(planOf([postMessage('post')]));
    assert.deepEqual(rules(errors), ['write/needs-approval']);
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 0],
      node_id: 'post',
      says: /conversations\.post_message.*add an approval node before it, or draft with write_approval "automatic"/,
    });
  });

  it('accepts a write behind an approval, also several steps behind', () => {
    validOk(planOf([approval('ok'), postMessage('post')], [e('ok', 'post')]));
    validOk(planOf([approval('ok'), notify('n'), postMessage('post')], [e('ok', 'n'), e('n', 'post')]));
  });

  it('refuses a write that an approval is merely beside', () => {
    const errors = errorsOf(planOf([approval('ok'), postMessage('post')]));
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 1],
      node_id: 'post',
      says: /approval/,
    });
  });

  it('refuses a write after a join when only one side of the branch has an approval', () => {
    const nodes = [branchOn('br'), approval('ok'), notify('quiet'), notify('join'), postMessage('post')];
    const edges = [
      e('br', 'ok', true),
      e('br', 'quiet', false),
      e('ok', 'join'),
      e('quiet', 'join'),
      e('join', 'post'),
    ];
    const errors = errorsOf(planOf(nodes, edges));
    assert.deepEqual(rules(errors), ['write/needs-approval']);
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 4],
      node_id: 'post',
      says: /not every path to it passes an approval node/,
    });

    // Both sides approved: fine.
    const both = [branchOn('br'), approval('ok'), approval('ok2'), notify('join'), postMessage('post')];
    validOk(
      planOf(both, [
        e('br', 'ok', true),
        e('br', 'ok2', false),
        e('ok', 'join'),
        e('ok2', 'join'),
        e('join', 'post'),
      ]),
    );
  });

  it('refuses a write reached from a second root that bypasses the approval', () => {
    const errors = errorsOf(
      planOf(
        [notify('a'), approval('ok'), notify('b'), postMessage('post')],
        [e('a', 'ok'), e('ok', 'post'), e('b', 'post')],
      ),
    );
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 3],
      node_id: 'post',
      says: /approval/,
    });
  });

  it('refuses a map whose body writes without an approval before the map', () => {
    const errors = errorsOf(planOf([mapOver('m', [postMessage('post')], 'post')]));
    assert.deepEqual(rules(errors), ['write/needs-approval']);
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 0],
      node_id: 'm',
      says: /conversations\.post_message inside it.*add an approval node before it/,
    });
  });

  it('does not count an approval inside the map body', () => {
    const body = [approval('inner_ok'), postMessage('post')];
    const errors = errorsOf(planOf([mapOver('m', body, 'post', [e('inner_ok', 'post')])]));
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 0],
      node_id: 'm',
      says: /inside it/,
    });
  });

  it('accepts a writing map with an approval before it', () => {
    validOk(planOf([approval('ok'), mapOver('m', [postMessage('post')], 'post')], [e('ok', 'm')]));
  });

  it('refuses a subflow whose target writes, and accepts one whose target does not', () => {
    const errors = errorsOf(planOf([{ kind: 'subflow', id: 'sf', automation_id: 'auto_writer' }]));
    assert.deepEqual(rules(errors), ['write/needs-approval']);
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 0],
      node_id: 'sf',
      says: /automation auto_writer inside it.*add an approval node before it/,
    });
    validOk(planOf([{ kind: 'subflow', id: 'sf', automation_id: 'auto_reader' }]));
    validOk(
      planOf([approval('ok'), { kind: 'subflow', id: 'sf', automation_id: 'auto_writer' }], [e('ok', 'sf')]),
    );
  });

  it('refuses a writing subflow inside a map body without an approval before the map', () => {
    const errors = errorsOf(
      planOf([mapOver('m', [{ kind: 'subflow', id: 'sf', automation_id: 'auto_writer' }], 'sf')]),
    );
    expectError(errors, {
      rule: 'write/needs-approval',
      path: ['nodes', 0],
      node_id: 'm',
      says: /auto_writer/,
    });
  });

  it('does not ask for an approval for reads', () => {
    validOk(
      planOf([
        readDoc('r'),
        { kind: 'capability', id: 'h', capability: 'http.get', input: { url: lit('https://example.com') } },
      ]),
    );
  });

  it('lets write_approval "automatic" run writes unattended', () => {
    validOk(planOf([postMessage('post'), mapOver('m', [postMessage('p2')], 'p2')]), automatic);
  });
});

describe('validatePlan: write/approval-with-automatic', () => {
  it('refuses any approval node under write_approval "automatic", map bodies included', () => {
    const errors = errorsOf(
      planOf(
        [approval('ok'), postMessage('post'), mapOver('m', [approval('inner_ok'), notify('x')], 'x')],
        [e('ok', 'post')],
      ),
      automatic,
    );
    assert.deepEqual(rules(errors), ['write/approval-with-automatic']);
    expectError(errors, {
      rule: 'write/approval-with-automatic',
      path: ['nodes', 0],
      node_id: 'ok',
      says: /remove it, or draft with write_approval "required"/,
    });
    expectError(errors, {
      rule: 'write/approval-with-automatic',
      path: ['nodes', 2, 'body', 'nodes', 0],
      node_id: 'inner_ok',
      says: /remove it/,
    });
  });
});

// ── subflows and maps ───────────────────────────────────────────────────────────────────────────

describe('validatePlan: subflow/unknown', () => {
  it('refuses an automation that cannot be run as a subflow', () => {
    const errors = errorsOf(planOf([{ kind: 'subflow', id: 'sf', automation_id: 'auto_missing' }]));
    assert.deepEqual(rules(errors), ['subflow/unknown']);
    expectError(errors, {
      rule: 'subflow/unknown',
      path: ['nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /auto_missing.*publish it first or use another automation_id/,
    });
  });

  it('checks subflows inside map bodies', () => {
    const errors = errorsOf(
      planOf([mapOver('m', [{ kind: 'subflow', id: 'sf', automation_id: 'auto_missing' }], 'sf')]),
    );
    expectError(errors, {
      rule: 'subflow/unknown',
      path: ['nodes', 0, 'body', 'nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /publish it first/,
    });
  });
});

describe('validatePlan: subflow/forbidden', () => {
  const withTargets = (targets: [string, SubflowTarget][]): ValidationContext => ({
    ...ctx,
    subflows: new Map([...SUBFLOWS, ...targets]),
  });

  it('refuses an automation the acting person may open but not run, naming who may run it', () => {
    const context = withTargets([['auto_admins', { writes: false, onlyRunBy: 'workspace admins' }]]);
    const errors = errorsOf(
      planOf([mapOver('m', [{ kind: 'subflow', id: 'sf', automation_id: 'auto_admins' }], 'sf')]),
      context,
    );
    assert.deepEqual(rules(errors), ['subflow/forbidden']);
    expectError(errors, {
      rule: 'subflow/forbidden',
      path: ['nodes', 0, 'body', 'nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /auto_admins can be run only by workspace admins.*use an automation you can run/,
    });
  });

  it('accepts an automation the acting person may run', () => {
    validOk(planOf([{ kind: 'subflow', id: 'sf', automation_id: 'auto_reader' }]));
  });
});

describe('validatePlan: subflow/cycle', () => {
  const graph = (calls: Record<string, string[]>, complete = true): ValidationContext => ({
    ...ctx,
    subflowGraph: { calls: new Map(Object.entries(calls)), complete },
  });
  const callsReader = planOf([{ kind: 'subflow', id: 'sf', automation_id: 'auto_reader' }]);

  it('refuses an automation running itself, and says what to do instead', () => {
    const errors = errorsOf(planOf([{ kind: 'subflow', id: 'sf', automation_id: 'auto_self' }]));
    assert.deepEqual(rules(errors), ['subflow/cycle']);
    expectError(errors, {
      rule: 'subflow/cycle',
      path: ['nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /cannot run itself.*name another automation/,
    });
  });

  it('refuses a subflow whose live version runs this automation back, naming the chain', () => {
    const errors = errorsOf(callsReader, graph({ auto_reader: ['auto_self'] }));
    assert.deepEqual(rules(errors), ['subflow/cycle']);
    expectError(errors, {
      rule: 'subflow/cycle',
      path: ['nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /auto_reader runs this automation again .*\(auto_reader → this automation\).*remove the subflow node that runs this automation from auto_reader/,
    });
  });

  it('follows the chain through other automations, also from a map body', () => {
    const errors = errorsOf(
      planOf([mapOver('m', [{ kind: 'subflow', id: 'sf', automation_id: 'auto_reader' }], 'sf')]),
      graph({ auto_reader: ['auto_b'], auto_b: ['auto_c', 'auto_reader'], auto_c: ['auto_self'] }),
    );
    expectError(errors, {
      rule: 'subflow/cycle',
      path: ['nodes', 0, 'body', 'nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /\(auto_reader → auto_b → auto_c → this automation\).*from auto_c/,
    });
  });

  it('accepts a chain that ends, or loops among others without coming back', () => {
    validOk(callsReader, graph({ auto_reader: ['auto_b'], auto_b: ['auto_c'], auto_c: ['auto_b'] }));
  });

  it('cannot close a cycle in a new automation, which nothing runs yet', () => {
    validOk(callsReader, { ...graph({ auto_reader: ['auto_self'] }), automationId: undefined });
  });

  it('refuses a chain too long to check to the end', () => {
    const errors = errorsOf(callsReader, graph({ auto_reader: ['auto_b'] }, false));
    expectError(errors, {
      rule: 'subflow/cycle',
      path: ['nodes', 0, 'automation_id'],
      node_id: 'sf',
      says: /more than 200 automations .*name an automation that runs fewer others/,
    });
  });
});

describe('validatePlan: approval/unknown-approver', () => {
  const people: ValidationContext = { ...ctx, people: new Set(['lead@example.com']) };
  const approveBy = (id: string, approvers: unknown) => ({
    kind: 'approval',
    id,
    message: lit('Go ahead?'),
    approvers,
  });

  it('refuses each named approver who is not a person of the workspace, also in a map body', () => {
    const errors = errorsOf(
      planOf([
        approveBy('ok', ['lead@example.com', 'stranger@example.org']),
        mapOver('m', [approveBy('inner', ['ghost@example.com'])], 'inner'),
      ]),
      people,
    );
    assert.deepEqual(rules(errors), ['approval/unknown-approver']);
    expectError(errors, {
      rule: 'approval/unknown-approver',
      path: ['nodes', 0, 'approvers', 1],
      node_id: 'ok',
      says: /stranger@example.org is not a person of this workspace.*"creator" or "admins"/,
    });
    expectError(errors, {
      rule: 'approval/unknown-approver',
      path: ['nodes', 1, 'body', 'nodes', 0, 'approvers', 0],
      node_id: 'inner',
      says: /ghost@example.com/,
    });
  });

  it('accepts people of the workspace whatever the case of their address, creator and admins', () => {
    validOk(
      planOf([approveBy('a', ['Lead@Example.com']), approveBy('b', 'admins'), approveBy('c', 'creator')]),
      people,
    );
  });
});

describe('validatePlan: map/result', () => {
  it('refuses a result that is not a body node, also one that is a top-level node', () => {
    for (const result of ['nope', 'top']) {
      const errors = errorsOf(planOf([notify('top'), mapOver('m', [notify('inner')], result)]));
      assert.deepEqual(rules(errors), ['map/result']);
      expectError(errors, {
        rule: 'map/result',
        path: ['nodes', 1, 'result'],
        node_id: 'm',
        says: new RegExp(`result "${result}" is not a node of this map's body; name the body node`),
      });
    }
  });

  it('refuses a map with an empty body for want of a result', () => {
    const errors = errorsOf(planOf([mapOver('m', [], 'x')]));
    expectError(errors, {
      rule: 'map/result',
      path: ['nodes', 0, 'result'],
      node_id: 'm',
      says: /name the body node/,
    });
  });
});

// ── all at once, and the happy path ─────────────────────────────────────────────────────────────

describe('validatePlan: all errors at once', () => {
  it('reports every broken rule of one plan', () => {
    const nodes = [
      { kind: 'notify', id: 'bad shape', message: lit('x') },
      notify('dup'),
      notify('dup'),
      { kind: 'capability', id: 'unknown_cap', capability: 'jira.create_ticket' },
      {
        kind: 'capability',
        id: 'mail',
        capability: 'email.send',
        input: { to: lit(['a@b.test']), subject: lit('x'), body: lit('x') },
      },
      readDoc('wrong_input', lit(7)),
      notify('dangling', ref('ghost', '')),
      notify('sideways', ref('dangling', '')),
      postMessage('post'),
      branchOn('br'),
      notify('c1'),
      notify('c2'),
      { kind: 'subflow', id: 'sf', automation_id: 'auto_missing' },
      mapOver('m', [notify('inner')], 'missing'),
    ];
    const edges = [e('br', 'c1'), e('c1', 'c2'), e('c2', 'c1'), e('c1', 'ghost'), e('post', 'c2', true)];
    const errors = errorsOf(planOf([...nodes, ...many(190, 'filler')], edges));
    assert.deepEqual(rules(errors), [
      'binding/not-upstream',
      'binding/unknown-node',
      'capability/input',
      'capability/not-connected',
      'capability/unknown',
      'dag/cycle',
      'edge/unknown-node',
      'edge/when',
      'map/result',
      'node/duplicate-id',
      'plan/too-many-nodes',
      'shape',
      'subflow/unknown',
      'write/needs-approval',
    ]);
    for (const x of errors) assert.ok(x.message.length > 20, `a message that explains: ${JSON.stringify(x)}`);
  });
});

describe('validatePlan: valid plans', () => {
  it('accepts a plan with a node of every kind and returns it typed', () => {
    const raw = planOf(
      [
        readDoc('read'),
        {
          kind: 'agent',
          id: 'think',
          title: 'Summarise the document',
          instructions: lit('Summarise it'),
          input: { doc: ref('read', 'markdown') },
          tools: ['documents.list_documents', 'github.get_issue', 'slack.list_channels'],
        },
        {
          kind: 'transform',
          id: 'fill',
          op: 'template',
          input: { text: ref('think', 'text') },
          args: { template: 'Summary: {{text}}' },
        },
        {
          kind: 'branch',
          id: 'long',
          condition: { op: 'gt', left: ref('read', 'size_chars'), right: lit(1000) },
        },
        {
          kind: 'map',
          id: 'each',
          items: trig('items'),
          body: {
            nodes: [
              {
                kind: 'transform',
                id: 'title',
                op: 'get',
                input: { value: trig('item') },
                args: { path: 'title' },
              },
              { kind: 'notify', id: 'tell', message: ref('title', 'value'), to: 'creator' },
            ],
            edges: [e('title', 'tell')],
          },
          result: 'tell',
          concurrency: 3,
        },
        { kind: 'subflow', id: 'child', automation_id: 'auto_reader', input: { text: ref('fill', 'text') } },
        {
          kind: 'approval',
          id: 'ok',
          message: ref('fill', 'text'),
          approvers: ['lead@example.com'],
          timeout_s: 3600,
          on_timeout: 'skip',
        },
        { kind: 'delay', id: 'wait', seconds: 600 },
        postMessage('post', ref('fill', 'text')),
        { kind: 'notify', id: 'done', message: lit('Posted') },
      ],
      [
        e('read', 'think'),
        e('think', 'fill'),
        e('read', 'long'),
        e('long', 'each', true),
        e('fill', 'child'),
        e('fill', 'ok'),
        e('long', 'ok', false),
        e('ok', 'wait'),
        e('wait', 'post'),
        e('post', 'done'),
      ],
    );
    const typed = validOk(raw);
    assert.deepEqual(typed, raw);
    assert.deepEqual(
      new Set(typed.nodes.map((n) => n.kind)),
      new Set([
        'capability',
        'agent',
        'transform',
        'branch',
        'map',
        'subflow',
        'approval',
        'notify',
        'delay',
      ]),
    );
  });

  it('accepts the example plan of the FlowPlan contract', () => {
    const example = {
      planVersion: 1,
      name: 'Weekly roadmap digest',
      description: 'Every Monday, summarise the roadmap and post it after approval.',
      nodes: [
        {
          id: 'read',
          kind: 'capability',
          capability: 'documents.read_document',
          input: { document_id: { kind: 'literal', value: 'doc_123' } },
        },
        {
          id: 'digest',
          kind: 'transform',
          op: 'template',
          input: { text: { kind: 'ref', node: 'read', path: 'markdown' } },
          args: { template: 'This week: {{text}}' },
        },
        { id: 'ok', kind: 'approval', message: { kind: 'literal', value: 'Post the digest?' } },
        {
          id: 'post',
          kind: 'capability',
          capability: 'conversations.post_message',
          input: { text: { kind: 'ref', node: 'digest', path: 'text' } },
        },
      ],
      edges: [
        { from: 'read', to: 'digest' },
        { from: 'digest', to: 'ok' },
        { from: 'ok', to: 'post' },
      ],
    };
    assert.deepEqual(validOk(example), example);
  });
});

// ── summarise ───────────────────────────────────────────────────────────────────────────────────

describe('summarise', () => {
  const raw = planOf(
    [
      // Listed out of order on purpose: steps follow the edges, ties in plan order.
      postMessage('post', ref('fill', 'text')),
      { kind: 'approval', id: 'ok', message: lit('Post it?') },
      {
        kind: 'capability',
        id: 'prs',
        capability: 'github.list_pull_requests',
        input: { repo: lit('acme/web') },
      },
      { kind: 'capability', id: 'chans', capability: 'slack.list_channels', input: {} },
      {
        kind: 'map',
        id: 'each',
        items: ref('prs', 'pull_requests'),
        body: {
          nodes: [
            {
              kind: 'transform',
              id: 'title',
              op: 'get',
              input: { value: trig('item') },
              args: { path: 'title' },
            },
            {
              kind: 'capability',
              id: 'remark',
              capability: 'github.comment_on_issue',
              input: { repo: lit('acme/web'), number: lit(1), body: ref('title', 'value') },
            },
          ],
          edges: [e('title', 'remark')],
        },
        result: 'remark',
        concurrency: 2,
      },
      { kind: 'branch', id: 'any', condition: { op: 'truthy', left: ref('prs', 'pull_requests.0') } },
      {
        kind: 'transform',
        id: 'fill',
        op: 'template',
        input: { n: ref('each', 'results') },
        args: { template: 'Commented on {{n}}' },
      },
      { kind: 'notify', id: 'none', title: 'Say there was nothing to do', message: lit('Nothing') },
    ],
    [
      e('prs', 'any'),
      e('any', 'ok', true),
      e('any', 'none', false),
      e('ok', 'each'),
      e('each', 'fill'),
      e('fill', 'post'),
    ],
  );

  it('is given a plan the validator accepts', () => {
    validOk(raw);
  });

  it('numbers the steps in topological order, body steps under their map, guards spelled out', () => {
    const plan = validOk(raw);
    const summary = summarise(plan, catalogue);
    assert.deepEqual(summary.steps, [
      '1. List pull requests of a repository (github.list_pull_requests)',
      '2. List channels the connection can see (slack.list_channels)',
      '3. Check whether prs.pull_requests.0 truthy',
      '4. Ask the creator to approve: "Post it?" (fails after 7 days) [when any is true]',
      // Of the steps ready to run, the one listed first in the plan comes first.
      '5. For each item of prs.pull_requests (2 at a time), collecting remark:',
      '5.1. Pick a part of a value by path of trigger.item (get)',
      '5.2. Comment on an issue or pull request (github.comment_on_issue)',
      '6. Fill the template "Commented on {{n}}" with each.results',
      '7. Post a message to a conversation (conversations.post_message)',
      '8. Say there was nothing to do [when any is false]',
    ]);
  });

  it('lists the writes, namespaces and connectors, and which connectors are personal', () => {
    const summary = summarise(validOk(raw), catalogue);
    assert.deepEqual(summary.writes.sort(), ['conversations.post_message', 'github.comment_on_issue']);
    assert.deepEqual(summary.namespaces.sort(), ['conversations', 'github', 'slack']);
    assert.deepEqual(summary.connectors.sort(), ['github', 'slack']);
    assert.deepEqual(summary.personal_connectors, ['slack']);
    assert.equal(summary.uses_model, false);
    assert.deepEqual(summary.subflows, []);
  });

  it('counts agent tools and subflows', () => {
    const plan = validOk(
      planOf([
        { kind: 'agent', id: 'ag', instructions: lit('Look around'), tools: ['github.get_issue'] },
        { kind: 'subflow', id: 'sf', automation_id: 'auto_reader' },
      ]),
    );
    const summary = summarise(plan, catalogue);
    assert.equal(summary.uses_model, true);
    assert.deepEqual(summary.namespaces, ['github']);
    assert.deepEqual(summary.connectors, ['github']);
    assert.deepEqual(summary.personal_connectors, []);
    assert.deepEqual(summary.subflows, ['auto_reader']);
    assert.deepEqual(summary.steps, [
      '1. Ask the model: "Look around" (may use github.get_issue)',
      '2. Run automation auto_reader',
    ]);
  });
});
