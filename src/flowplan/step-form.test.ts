import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { allPlugins, Catalogue, type NamespaceState } from '../capabilities/catalogue.ts';
import { describeCapabilities } from '../domains/automations/describe.ts';
import type { Binding } from './bindings.ts';
import {
  bindingOf,
  errorField,
  formFields,
  shapeFields,
  sourcesFor,
  valueOf,
  type FormField,
  type JsonSchema,
} from './step-form.ts';
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
    assert.equal(errorField(['nodes', 2, 'input', 'document_id', 'value']), 'document_id');
    assert.equal(errorField(['nodes', 0, 'message']), 'message');
    assert.equal(errorField(['nodes', 0]), undefined);
    assert.deepEqual(
      shapeFields('approval').map((f) => f.name),
      ['message'],
    );
  });
});
