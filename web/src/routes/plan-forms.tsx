import { useEffect, useId, useMemo, useRef, useState } from 'react';
import { call } from '../api.ts';
import { useResource } from '../hooks.ts';
import { listCapabilities } from '../../../src/contract/drafts.ts';
import type { PlanProblem } from '../../../src/contract/endpoint.ts';
import type { Binding } from '../../../src/flowplan/bindings.ts';
import {
  bindingOf,
  errorField,
  formFields,
  shapeFields,
  sourceKey,
  sourcesFor,
  valueOf,
  type FieldValue,
  type FormField,
  type JsonSchema,
  type Source,
} from '../../../src/flowplan/step-form.ts';

/*
 * A plan edited step by step: each step a form built from its capability's input schema (or its
 * node kind's shape), each field a typed value or a binding picked from earlier steps' outputs and
 * the trigger's fields; the validator's errors at the field they name. `Edit as JSON` edits the
 * same text: the forms read it and write it back, so the two stay in step.
 */

type Json = Record<string, unknown>;
interface PlanNodeLike {
  id: string;
  kind: string;
  title?: string;
  capability?: string;
  input?: Record<string, Binding>;
  [key: string]: unknown;
}
interface PlanLike {
  nodes: PlanNodeLike[];
  edges?: { from: string; to: string }[];
  [key: string]: unknown;
}

export type Capabilities = Map<string, { input?: JsonSchema; output?: JsonSchema; describe: string }>;

/** The capabilities the person may use, by key, with their schemas. */
export function useCapabilities() {
  const list = useResource('capabilities', () => call(listCapabilities, {}));
  return useMemo((): Capabilities | undefined => {
    if (!list.data) return undefined;
    return new Map(list.data.namespaces.flatMap((n) => n.capabilities.map((c) => [c.key, c] as const)));
  }, [list.data]);
}

function parsePlan(text: string): PlanLike | undefined {
  try {
    const plan = JSON.parse(text) as unknown;
    if (plan && typeof plan === 'object' && Array.isArray((plan as PlanLike).nodes)) return plan as PlanLike;
  } catch {
    // the JSON is being edited; the forms wait for it to parse
  }
  return undefined;
}

/** A node's field's binding as the plan holds it (a capability's input, or the node's own field). */
function bindingAt(node: PlanNodeLike, field: FormField, own: boolean): Binding | undefined {
  if (own) {
    const v = node[field.name];
    if (field.kind === 'integer' && typeof v === 'number') return { kind: 'literal', value: v };
    return v as Binding | undefined;
  }
  return node.input?.[field.name];
}

function withBinding(
  node: PlanNodeLike,
  field: FormField,
  own: boolean,
  b: Binding | undefined,
): PlanNodeLike {
  if (own) {
    const next = { ...node };
    if (b === undefined) delete next[field.name];
    // A delay's seconds is a number of the node itself, not a binding.
    else next[field.name] = field.kind === 'integer' && b.kind === 'literal' ? b.value : b;
    return next;
  }
  const input = { ...(node.input ?? {}) };
  if (b === undefined) delete input[field.name];
  else input[field.name] = b;
  return { ...node, input };
}

function FieldControl({
  field,
  binding,
  sources,
  problems,
  onChange,
}: {
  field: FormField;
  binding: Binding | undefined;
  sources: Source[];
  problems: string[];
  onChange: (b: Binding | undefined) => void;
}) {
  const id = useId();
  const initial = valueOf(field, binding);
  const [text, setText] = useState(initial.source === 'value' ? initial.text : '');
  const [local, setLocal] = useState<string | undefined>();
  // The plan changed elsewhere (Edit as JSON): show its value, unless it is what is typed here.
  const bindingJson = JSON.stringify(binding ?? null);
  const seen = useRef({ bindingJson, text, field });
  useEffect(() => {
    seen.current.text = text;
    seen.current.field = field;
  });
  useEffect(() => {
    if (seen.current.bindingJson === bindingJson) return;
    seen.current.bindingJson = bindingJson;
    const { field: f, text: typedText } = seen.current;
    const external = valueOf(f, (JSON.parse(bindingJson) as Binding | null) ?? undefined);
    if (external.source !== 'value') return;
    const mine = bindingOf(f, { source: 'value', text: typedText });
    if (JSON.stringify(mine.binding ?? null) !== bindingJson) {
      setText(external.text);
      setLocal(undefined);
    }
  }, [bindingJson]);
  const source = initial.source === 'value' ? 'value' : sourceKey(initial);
  const errors = [...(local ? [local] : []), ...problems];
  const errorId = `${id}-error`;
  const describedBy = errors.length ? errorId : field.description ? `${id}-hint` : undefined;

  const setValue = (value: FieldValue, shown?: string) => {
    if (shown !== undefined) setText(shown);
    const made = bindingOf(field, value);
    setLocal(made.error);
    if (!made.error) onChange(made.binding);
  };
  const common = {
    id,
    'aria-invalid': errors.length > 0 ? ('true' as const) : undefined,
    'aria-describedby': describedBy,
  };
  let control;
  if (field.kind === 'boolean') {
    control = (
      <input
        {...common}
        type="checkbox"
        checked={text === 'true'}
        onChange={(e) =>
          setValue({ source: 'value', text: String(e.target.checked) }, String(e.target.checked))
        }
      />
    );
  } else if (field.kind === 'choice') {
    control = (
      <select
        {...common}
        value={text}
        onChange={(e) => setValue({ source: 'value', text: e.target.value }, e.target.value)}
      >
        {!field.required && <option value="">(not set)</option>}
        {field.required && text === '' && <option value="">Choose…</option>}
        {(field.options ?? []).map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  } else if (field.kind === 'long_text' || field.kind === 'list' || field.kind === 'json') {
    control = (
      <textarea
        {...common}
        rows={field.kind === 'long_text' ? 3 : 2}
        spellCheck={field.kind === 'long_text'}
        className={field.kind === 'json' ? 'code' : undefined}
        value={text}
        onChange={(e) => setValue({ source: 'value', text: e.target.value }, e.target.value)}
      />
    );
  } else {
    control = (
      <input
        {...common}
        type="text"
        inputMode={field.kind === 'integer' || field.kind === 'number' ? 'numeric' : undefined}
        value={text}
        onChange={(e) => setValue({ source: 'value', text: e.target.value }, e.target.value)}
      />
    );
  }
  const bySource = new Map(sources.map((s) => [sourceKey(s.value), s]));
  // A binding the list does not offer (a part of a step's output deeper down) is kept and shown.
  if (initial.source !== 'value' && !bySource.has(source)) {
    const label =
      initial.source === 'ref'
        ? `${initial.node}${initial.path ? `.${initial.path}` : ''}`
        : `Trigger: ${initial.path || 'whole payload'}`;
    bySource.set(source, { label, value: initial });
  }
  return (
    <div className="step-field">
      <label htmlFor={id}>
        {field.label}
        {field.required ? '' : ' (optional)'}
      </label>
      <div className="row">
        {source === 'value' ? (
          control
        ) : (
          <output id={id} className="muted" aria-describedby={describedBy}>
            {bySource.get(source)?.label ?? source}
          </output>
        )}
        {field.bindable && bySource.size > 0 && (
          <select
            className="source"
            aria-label={`${field.label}: value from`}
            value={source}
            onChange={(e) => {
              const picked = bySource.get(e.target.value);
              if (picked) setValue(picked.value);
              else setValue({ source: 'value', text });
            }}
          >
            <option value="value">Typed here</option>
            {[...bySource.entries()].map(([key, s]) => (
              <option key={key} value={key}>
                {s.label}
              </option>
            ))}
          </select>
        )}
      </div>
      {field.description && (
        <p className="hint" id={`${id}-hint`}>
          {field.description}
        </p>
      )}
      {errors.length > 0 && (
        <p className="field-error" id={errorId}>
          {errors.join(' ')}
        </p>
      )}
    </div>
  );
}

function StepForm({
  node,
  plan,
  capabilities,
  problems,
  triggerKind,
  onChange,
}: {
  node: PlanNodeLike;
  plan: PlanLike;
  capabilities: Capabilities;
  problems: PlanProblem[];
  triggerKind: string | undefined;
  onChange: (node: PlanNodeLike) => void;
}) {
  const cap = node.kind === 'capability' && node.capability ? capabilities.get(node.capability) : undefined;
  const fromSchema = cap?.input ? formFields(cap.input) : [];
  const own = shapeFields(node.kind);
  const sources = sourcesFor(
    plan,
    node.id,
    (n) => (n.capability ? capabilities.get(n.capability)?.output : undefined),
    triggerKind,
  );
  const at = (name: string) => problems.filter((p) => errorField(p.path) === name).map((p) => p.message);
  const placed = new Set([...fromSchema, ...own].map((f) => f.name));
  const elsewhere = problems.filter((p) => {
    const f = errorField(p.path);
    return f === undefined || !placed.has(f);
  });
  const title = node.title ?? node.id;
  const field = (f: FormField, isOwn: boolean) => (
    <FieldControl
      key={f.name}
      field={f}
      binding={bindingAt(node, f, isOwn)}
      sources={f.kind === 'integer' && isOwn ? [] : sources}
      problems={at(f.name)}
      onChange={(b) => onChange(withBinding(node, f, isOwn, b))}
    />
  );
  return (
    <fieldset className="step-form" id={`step-${node.id}`} aria-label={`Step ${title}`} tabIndex={-1}>
      <legend>
        {title}{' '}
        <span className="muted small">· {node.kind === 'capability' ? node.capability : node.kind}</span>
      </legend>
      {cap?.describe && <p className="muted small">{cap.describe}</p>}
      {elsewhere.length > 0 && (
        <ul className="error" aria-label={`Problems in step ${title}`}>
          {elsewhere.map((p, i) => (
            <li key={i}>{p.message}</li>
          ))}
        </ul>
      )}
      {node.kind === 'capability' && !cap && (
        <p className="muted">This capability is not one you can use here; edit it as JSON.</p>
      )}
      {fromSchema.map((f) => field(f, false))}
      {own.map((f) => field(f, true))}
      {fromSchema.length === 0 && own.length === 0 && node.kind !== 'capability' && (
        <p className="muted small">A {node.kind} step is edited as JSON.</p>
      )}
    </fieldset>
  );
}

/** Every step of the plan as a form, and `Edit as JSON` for the same text. */
export function PlanForms({
  text,
  setText,
  problems,
  triggerKind,
}: {
  text: string;
  setText: (text: string) => void;
  problems: PlanProblem[];
  triggerKind?: string | undefined;
}) {
  const capabilities = useCapabilities();
  const [json, setJson] = useState(false);
  const plan = useMemo(() => parsePlan(text), [text]);
  const jsonId = useId();
  const update = (node: PlanNodeLike) => {
    if (!plan) return;
    const next = { ...plan, nodes: plan.nodes.map((n) => (n.id === node.id ? node : n)) };
    setText(JSON.stringify(next, null, 2));
  };
  const unplaced = problems.filter((p) => !p.node_id || !plan?.nodes.some((n) => n.id === p.node_id));
  return (
    <div className="plan-forms">
      <div className="page-head">
        <h3>Steps</h3>
        <button type="button" aria-expanded={json} aria-controls={jsonId} onClick={() => setJson(!json)}>
          Edit as JSON
        </button>
      </div>
      {unplaced.length > 0 && (
        <ul className="error" aria-label="Problems outside the steps">
          {unplaced.map((p, i) => (
            <li key={i}>
              {p.path.length > 0 && <span className="muted">{p.path.join('.')}: </span>}
              {p.message}
            </li>
          ))}
        </ul>
      )}
      {json && (
        <div className="field wide" id={jsonId}>
          <label htmlFor={`${jsonId}-text`}>Plan (JSON)</label>
          <textarea
            id={`${jsonId}-text`}
            className="code"
            rows={16}
            spellCheck={false}
            value={text}
            onChange={(e) => setText(e.target.value)}
          />
        </div>
      )}
      {!plan ? (
        <p className="error">The plan is not valid JSON with a list of nodes; fix it in Edit as JSON.</p>
      ) : !capabilities ? (
        <p className="muted" role="status">
          Loading the steps’ forms…
        </p>
      ) : (
        plan.nodes.map((node) => (
          <StepForm
            key={node.id}
            node={node}
            plan={plan}
            capabilities={capabilities}
            problems={problems.filter((p) => p.node_id === node.id)}
            triggerKind={triggerKind}
            onChange={update}
          />
        ))
      )}
    </div>
  );
}

export type { Json };
