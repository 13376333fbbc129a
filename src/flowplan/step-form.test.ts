import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allPlugins, Catalogue, type NamespaceState } from '../capabilities/catalogue.ts';
import { describeCapabilities } from '../domains/automations/describe.ts';
import type { Binding } from './bindings.ts';
import { fieldBinding, fieldOfError, withField, withOp } from './node-edit.ts';
import { nodeForm, type NodeLike } from './node-form.ts';
import { NODE_KINDS } from './plan.ts';
import { bindingOf, formFields, sourcesFor, valueOf, type FormField, type JsonSchema } from './step-form.ts';
import { validatePlan } from './validate.ts';

// Every capability Tandem ships, every connector connected: the catalogue the forms are built from.
const namespaces = new Map<string, NamespaceState>();
for (const p of allPlugins()) {
  namespaces.set(p.namespace, { plugin: p, connected: true, personalOnly: false, providers: p.providers });
}
const catalogue = new Catalogue(namespaces, []);
const described = describeCapabilities(catalogue, {});

/** Values a person would type for the patterns the catalogue's inputs carry. */
const BY_PATTERN: Record<string, string> = {
  '^[A-Za-z0-9_.-]+\\/[A-Za-z0-9_.-]+$': 'acme/roadmap',
  '^\\d+\\.\\d+$': '1700000000.000100',
  '^$|^[^.]+(\\.[^.]+)*$': 'items.0.title',
};

/** What a person types into a field to fill it with a valid value. */
function typed(field: FormField): string {
  if (field.kind === 'choice') return field.options?.[0] ?? '';
  if (field.kind === 'integer' || field.kind === 'number') return String(field.min ?? 1);
  if (field.kind === 'boolean') return 'true';
  if (field.format === 'email')
    return field.kind === 'list' ? 'ada@acme.test\nbo@acme.test' : 'ada@acme.test';
  if (field.format === 'uri') return 'https://example.com/feed';
  if (field.pattern) {
    const value = BY_PATTERN[field.pattern];
    assert.ok(value, `no value known for the pattern ${field.pattern} of ${field.name}`);
    return value;
  }
  if (field.kind === 'json') return '{"a": 1}';
  if (field.kind === 'list') return 'one\ntwo';
  return `Some ${field.label.toLowerCase()}`;
}

const capabilities = described.namespaces.flatMap((n) => n.capabilities);

describe('step forms built from capability schemas', () => {
  it('covers every capability of the catalogue', () => {
    const shipped = allPlugins().flatMap((p) => p.capabilities.map((c) => c.key));
    assert.deepEqual(capabilities.map((c) => c.key).sort(), [...shipped].sort());
    assert.ok(capabilities.length >= 19);
  });

  for (const cap of capabilities) {
    it(`${cap.key}: a form whose required fields, filled in, make a step the validator accepts`, () => {
      const fields = formFields(cap.input as JsonSchema);
      const required = fields.filter((f) => f.required);
      const schemaRequired = ((cap.input as JsonSchema).required ?? []) as string[];
      assert.deepEqual(required.map((f) => f.name).sort(), [...schemaRequired].sort());
      const input: Record<string, Binding> = {};
      for (const field of required) {
        const text = typed(field);
        const made = bindingOf(field, { source: 'value', text });
        assert.equal(made.error, undefined, `${cap.key}.${field.name}: ${made.error}`);
        assert.ok(made.binding);
        input[field.name] = made.binding;
        // The form shows again what was typed.
        assert.deepEqual(valueOf(field, made.binding), { source: 'value', text });
      }
      const step = { kind: 'capability', id: 'step', capability: cap.key, input };
      const nodes =
        cap.kind === 'write'
          ? [{ kind: 'approval', id: 'ok', message: { kind: 'literal', value: 'Go on?' } }, step]
          : [step];
      const edges = cap.kind === 'write' ? [{ from: 'ok', to: 'step' }] : [];
      const result = validatePlan(
        { planVersion: 1, name: cap.key, description: '', nodes, edges },
        { catalogue, writeApproval: 'required', subflows: new Map() },
      );
      assert.deepEqual(result.ok ? [] : result.errors, []);
    });
  }

  it('makes numbers, choices, lists and yes/no of the schema’s types, and says when a value is not one', () => {
    const fields = formFields({
      type: 'object',
      properties: {
        limit: { type: 'integer', minimum: 1, maximum: 50 },
        state: { type: 'string', enum: ['open', 'closed'] },
        labels: { type: 'array', items: { type: 'string' } },
        broadcast: { type: 'boolean' },
        body: { type: 'string' },
      },
      required: ['state'],
    });
    assert.deepEqual(
      fields.map((f) => [f.name, f.kind, f.required]),
      [
        ['state', 'choice', true],
        ['limit', 'integer', false],
        ['labels', 'list', false],
        ['broadcast', 'boolean', false],
        ['body', 'long_text', false],
      ],
    );
    const [state, limit, labels] = fields as [FormField, FormField, FormField];
    assert.deepEqual(state.options, ['open', 'closed']);
    assert.equal(limit.max, 50);
    assert.deepEqual(bindingOf(limit, { source: 'value', text: '2.5' }), {
      error: 'Limit must be a whole number',
    });
    assert.deepEqual(bindingOf(limit, { source: 'value', text: 'many' }), {
      error: 'Limit must be a number',
    });
    assert.deepEqual(bindingOf(limit, { source: 'value', text: '' }), {});
    assert.deepEqual(bindingOf(state, { source: 'value', text: '' }), { error: 'State is required' });
    assert.deepEqual(bindingOf(labels, { source: 'value', text: 'bug\n\n ui \n' }), {
      binding: { kind: 'literal', value: ['bug', 'ui'] },
    });
  });

  it('offers earlier steps’ outputs and the trigger’s fields as bindings, never a later step’s', () => {
    const plan = {
      nodes: [
        { id: 'read', kind: 'capability', capability: 'documents.read_document', title: 'Read the roadmap' },
        { id: 'ok', kind: 'approval' },
        { id: 'post', kind: 'capability', capability: 'conversations.post_message' },
      ],
      edges: [
        { from: 'read', to: 'ok' },
        { from: 'ok', to: 'post' },
      ],
    };
    const outputs = new Map(capabilities.map((c) => [c.key, c.output as JsonSchema]));
    const sources = sourcesFor(
      plan,
      'post',
      (n) => (n.capability ? outputs.get(n.capability) : undefined),
      'schedule',
    );
    const labels = sources.map((s) => s.label);
    assert.ok(labels.includes('Read the roadmap: markdown'), labels.join(', '));
    assert.ok(labels.includes('Trigger: scheduled for'));
    assert.ok(!labels.some((l) => l.startsWith('post')));
    assert.deepEqual(
      sourcesFor(plan, 'read', () => undefined, 'schedule').map((s) => s.value.source),
      ['trigger', 'trigger', 'trigger'],
    );
  });

  it('places a validator error at the field it names', () => {
    const capField = formFields({ type: 'object', properties: { document_id: { type: 'string' } } });
    assert.equal(fieldOfError(['nodes', 2, 'input', 'document_id', 'value'], capField), 'document_id');
    const branch = nodeForm(
      { id: 'b', kind: 'branch', condition: { op: 'eq', left: lit(1), right: lit(2) } },
      shapes,
    ).fields;
    assert.equal(fieldOfError(['nodes', 0, 'condition', 'right'], branch), 'condition.right');
    assert.equal(fieldOfError(['nodes', 0], branch), undefined);
    const map = nodeForm(mapNode(), shapes).fields;
    assert.equal(fieldOfError(['nodes', 1, 'items'], map), 'items');
    // A body node's error is placed by the path inside that node.
    const template = nodeForm(
      { id: 't', kind: 'transform', op: 'template', input: {}, args: { template: 'x' } },
      shapes,
    ).fields;
    assert.equal(
      fieldOfError(['nodes', 1, 'body', 'nodes', 0, 'args', 'template'], template),
      'args.template',
    );
  });
});

const lit = (value: unknown): Binding => ({ kind: 'literal', value });
const shapes = { node_shapes: described.node_shapes, transform_ops: described.transform_ops };
const mapNode = (): NodeLike => ({
  id: 'each',
  kind: 'map',
  items: lit([]),
  body: { nodes: [{ id: 'say', kind: 'transform', op: 'template', input: {}, args: { template: 'x' } }] },
  result: 'say',
});

/** A bare node of each kind (and each transform op): what the form starts from. */
function bare(kind: string, op?: string): NodeLike {
  switch (kind) {
    case 'capability':
      return { id: 'step', kind, capability: 'documents.read_document', input: {} };
    case 'transform':
      return withOp({ id: 'step', kind, op: 'get' }, op ?? 'get', shapes);
    case 'branch':
      return { id: 'step', kind, condition: { op: 'eq' } };
    case 'map':
      return { ...mapNode(), id: 'step', items: undefined } as unknown as NodeLike;
    case 'delay':
      return { id: 'step', kind };
    default:
      return { id: 'step', kind };
  }
}

describe('step forms built from node kinds’ shapes', () => {
  const ops = Object.keys(described.transform_ops);
  const cases = NODE_KINDS.flatMap((kind): { kind: string; op: string | undefined }[] =>
    kind === 'transform' ? ops.map((op) => ({ kind, op })) : [{ kind, op: undefined }],
  );

  it('covers every node kind and every transform op', () => {
    assert.deepEqual(Object.keys(described.node_shapes).sort(), [...NODE_KINDS].sort());
    assert.ok(ops.length >= 14);
  });

  for (const { kind, op } of cases) {
    it(`${kind}${op ? ` ${op}` : ''}: its form, filled in, makes a step the validator accepts`, () => {
      let node = bare(kind, op);
      const form = nodeForm(node, shapes, { automations: [{ id: 'aut_child', name: 'Child' }] });
      if (kind !== 'capability') assert.ok(form.fields.length > 0, `${kind} has no fields`);
      else node = { ...node, input: { document_id: lit('doc_1') } };
      if (form.namedInputs) {
        const named: FormField = {
          name: 'input.name',
          label: 'Name',
          kind: 'text',
          required: true,
          bindable: true,
          at: ['input', 'name'],
        };
        node = withField(node, named, lit('Ada'));
      }
      // A transform's op is chosen first (withOp above); every other required field is filled in.
      for (const field of form.fields.filter((f) => f.name !== 'op' && f.required)) {
        const text =
          field.name === 'args.template'
            ? 'Hello {{name}}'
            : field.name === 'items'
              ? '["a","b"]'
              : typed(field);
        const made = bindingOf(field, { source: 'value', text });
        assert.equal(made.error, undefined, `${kind}.${field.name}: ${made.error}`);
        node = withField(node, field, made.binding);
        // The form shows again what was typed.
        assert.deepEqual(valueOf(field, fieldBinding(node, field)), { source: 'value', text });
      }
      const nodes: unknown[] = [node];
      const edges: unknown[] = [];
      if (kind === 'branch') {
        nodes.push({ id: 'yes', kind: 'transform', op: 'now' }, { id: 'no', kind: 'transform', op: 'now' });
        edges.push({ from: 'step', to: 'yes', when: true }, { from: 'step', to: 'no', when: false });
      }
      const result = validatePlan(
        { planVersion: 1, name: kind, description: '', nodes, edges },
        {
          catalogue,
          writeApproval: 'required',
          subflows: new Map([['aut_child', { writes: false }]]),
        },
      );
      assert.deepEqual(result.ok ? [] : result.errors, [], JSON.stringify(node));
    });
  }

  it('gives a branch a right side only for ops that compare two values', () => {
    let node: NodeLike = { id: 'b', kind: 'branch', condition: { op: 'eq', left: lit(1), right: lit(2) } };
    const op = nodeForm(node, shapes).fields.find((f) => f.name === 'condition.op')!;
    assert.deepEqual(op.options, ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'exists', 'truthy']);
    node = withField(node, op, lit('truthy'));
    assert.deepEqual(node.condition, { op: 'truthy', left: lit(1) });
    assert.deepEqual(
      nodeForm(node, shapes).fields.map((f) => f.name),
      ['condition.op', 'condition.left'],
    );
    node = withField(node, op, lit('gt'));
    assert.deepEqual(node.condition, { op: 'gt', left: lit(1), right: lit('') });
  });

  it('offers a subflow the automations by name and a map its body’s steps as result', () => {
    const sub = nodeForm({ id: 's', kind: 'subflow', automation_id: 'aut_1' }, shapes, {
      automations: [{ id: 'aut_1', name: 'Weekly digest' }],
    });
    const automation = sub.fields.find((f) => f.name === 'automation_id')!;
    assert.equal(automation.kind, 'choice');
    assert.deepEqual(automation.optionLabels, { aut_1: 'Weekly digest' });
    assert.ok(sub.namedInputs);
    const map = nodeForm(mapNode(), shapes).fields;
    assert.deepEqual(
      map.map((f) => [f.name, f.kind]),
      [
        ['items', 'value'],
        ['result', 'choice'],
        ['concurrency', 'integer'],
      ],
    );
    assert.deepEqual(map[1]!.options, ['say']);
    // An any-value field reads what is typed as JSON when it is, else as text.
    assert.deepEqual(bindingOf(map[0]!, { source: 'value', text: '["a","b"]' }), {
      binding: lit(['a', 'b']),
    });
    assert.deepEqual(bindingOf(map[0]!, { source: 'value', text: 'a, b' }), { binding: lit('a, b') });
  });
});
