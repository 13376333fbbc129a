import { useId, useMemo, useState } from 'react';
import { call } from '../api.ts';
import { useResource } from '../hooks.ts';
import { listCapabilities } from '../../../src/contract/drafts.ts';
import { listAutomations } from '../../../src/contract/automations.ts';
import type { PlanProblem } from '../../../src/contract/endpoint.ts';
import type { Binding } from '../../../src/flowplan/bindings.ts';
import { formFields, sourcesFor, type JsonSchema, type Source } from '../../../src/flowplan/step-form.ts';
import {
  fieldBinding,
  fieldOfError,
  nodeOutput,
  withField,
  withOp,
} from '../../../src/flowplan/node-edit.ts';
import { nodeForm, type NodeShapes } from '../../../src/flowplan/node-form.ts';
import { FieldControl } from './step-field.tsx';

/*
 * A plan edited step by step: each step a form built from its capability's input schema or its
 * node kind's shape (a branch's condition and arms, a map's items, result and body, a transform's
 * op, inputs and args, a subflow's automation and input), each field a typed value or a binding
 * picked from earlier steps' outputs and the trigger's fields; the validator's errors at the field
 * they name. `Edit as JSON` edits the same text: the forms read it and write it back.
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
interface EdgeLike {
  from: string;
  to: string;
  when?: boolean;
}
interface PlanLike {
  nodes: PlanNodeLike[];
  edges?: EdgeLike[];
  [key: string]: unknown;
}

export type Capabilities = Map<string, { input?: JsonSchema; output?: JsonSchema; describe: string }>;

/** What the forms are built from: the capabilities the person may use and the node kinds' shapes. */
interface Schemas {
  capabilities: Capabilities;
  shapes: NodeShapes;
  automations: { id: string; name: string }[];
}

/** The capabilities the person may use, by key, with their schemas, and the node kinds' shapes. */
function useSchemas(): Schemas | undefined {
  const list = useResource('capabilities', () => call(listCapabilities, {}));
  const automations = useResource('automations', () => call(listAutomations, {}));
  return useMemo((): Schemas | undefined => {
    if (!list.data) return undefined;
    return {
      capabilities: new Map(
        list.data.namespaces.flatMap((n) => n.capabilities.map((c) => [c.key, c] as const)),
      ),
      shapes: { node_shapes: list.data.node_shapes, transform_ops: list.data.transform_ops },
      automations: (automations.data?.automations ?? []).map((a) => ({ id: a.automation_id, name: a.name })),
    };
  }, [list.data, automations.data]);
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

/** `id` and the nodes upstream of it on its level (a branch's arm may not lead back to them). */
function upstreamAndSelf(edges: EdgeLike[], id: string): Set<string> {
  const seen = new Set([id]);
  const stack = [id];
  while (stack.length) {
    const at = stack.pop() as string;
    for (const e of edges) {
      if (e.to !== at || seen.has(e.from)) continue;
      seen.add(e.from);
      stack.push(e.from);
    }
  }
  return seen;
}

/** One list of steps and its edges: the plan's, or a map's body. */
interface Level {
  nodes: PlanNodeLike[];
  edges: EdgeLike[];
}

function StepForm({
  node,
  level,
  outer,
  schemas,
  problems,
  triggerKind,
  onChange,
  onEdges,
}: {
  node: PlanNodeLike;
  level: Level;
  /** Bindings from outside this level (inside a map's body: the steps before the map). */
  outer: Source[];
  schemas: Schemas;
  problems: PlanProblem[];
  triggerKind: string | undefined;
  onChange: (node: PlanNodeLike) => void;
  onEdges: (edges: EdgeLike[]) => void;
}) {
  const { capabilities, shapes } = schemas;
  const [newInput, setNewInput] = useState('');
  const cap = node.kind === 'capability' && node.capability ? capabilities.get(node.capability) : undefined;
  const fromSchema = cap?.input ? formFields(cap.input) : [];
  const shaped = nodeForm(node, shapes, { automations: schemas.automations });
  const fields = [...fromSchema, ...shaped.fields];
  const outputOf = (n: { kind: string; capability?: string; op?: unknown }) =>
    n.kind === 'capability'
      ? n.capability
        ? capabilities.get(n.capability)?.output
        : undefined
      : nodeOutput(n, shapes);
  const sources = [...sourcesFor(level, node.id, outputOf, triggerKind), ...outer];
  const mine = problems.filter((p) => p.node_id === node.id);
  const at = (name: string) =>
    mine.filter((p) => fieldOfError(p.path, fields) === name).map((p) => p.message);
  const elsewhere = mine.filter((p) => fieldOfError(p.path, fields) === undefined);
  const title = node.title ?? node.id;
  const field = (f: (typeof fields)[number]) => (
    <FieldControl
      key={f.name}
      field={f}
      binding={fieldBinding(node, f)}
      sources={f.bindable ? sources : []}
      problems={at(f.name)}
      onChange={(b) => {
        if (node.kind === 'transform' && f.at?.join('.') === 'op' && b?.kind === 'literal') {
          onChange(withOp(node, String(b.value), shapes));
        } else onChange(withField(node, f, b));
      }}
      extra={
        shaped.namedInputs && f.at?.[0] === 'input' ? (
          <button type="button" className="link" onClick={() => onChange(withField(node, f, undefined))}>
            Remove input {f.label}
          </button>
        ) : undefined
      }
    />
  );
  // A branch's arms: the step each side goes to (edges labelled when true / false).
  const arms =
    node.kind === 'branch'
      ? ([true, false] as const).map((when) => {
          const before = upstreamAndSelf(level.edges, node.id);
          const options = level.nodes.map((n) => n.id).filter((id) => !before.has(id));
          const current = level.edges.find((e) => e.from === node.id && e.when === when)?.to ?? '';
          const name = when ? 'If true, go on to' : 'If false, go on to';
          const edgeProblems = problems.filter(
            (p) =>
              p.path[0] === 'edges' &&
              typeof p.path[1] === 'number' &&
              level.edges[p.path[1]]?.from === node.id &&
              level.edges[p.path[1]]?.when === when,
          );
          return (
            <FieldControl
              key={String(when)}
              field={{
                name: `arm.${when}`,
                label: name,
                kind: 'choice',
                required: false,
                bindable: false,
                options,
                optionLabels: Object.fromEntries(level.nodes.map((n) => [n.id, n.title ?? n.id])),
              }}
              binding={current ? { kind: 'literal', value: current } : undefined}
              sources={[]}
              problems={edgeProblems.map((p) => p.message)}
              onChange={(b) => {
                const kept = level.edges.filter((e) => !(e.from === node.id && e.when === when));
                const to = b?.kind === 'literal' ? String(b.value) : '';
                onEdges(to ? [...kept, { from: node.id, to, when }] : kept);
              }}
            />
          );
        })
      : [];
  const body =
    node.kind === 'map'
      ? ((node.body ?? { nodes: [] }) as { nodes: PlanNodeLike[]; edges?: EdgeLike[] })
      : undefined;
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
      {fields.map(field)}
      {arms}
      {shaped.namedInputs && (
        <div className="row add-input">
          <input
            aria-label={`New input of ${title}`}
            placeholder="input name"
            value={newInput}
            onChange={(e) => setNewInput(e.target.value.replace(/[^A-Za-z0-9_]/g, ''))}
          />
          <button
            type="button"
            disabled={newInput === '' || newInput in (node.input ?? {})}
            onClick={() => {
              onChange({
                ...node,
                input: { ...(node.input ?? {}), [newInput]: { kind: 'literal', value: '' } },
              });
              setNewInput('');
            }}
          >
            Add input
          </button>
        </div>
      )}
      {body && (
        <div className="map-body" role="group" aria-label={`Steps for each item of ${title}`}>
          <p className="muted small">For each item (the trigger inside is the item and its index):</p>
          <StepList
            level={{ nodes: body.nodes, edges: body.edges ?? [] }}
            outer={sources.filter((s) => s.value.source === 'ref')}
            schemas={schemas}
            problems={problems}
            triggerKind="map"
            onLevel={(next) =>
              onChange({
                ...node,
                body: {
                  ...body,
                  nodes: next.nodes,
                  ...(next.edges.length || body.edges ? { edges: next.edges } : {}),
                },
              })
            }
          />
        </div>
      )}
    </fieldset>
  );
}

/** Every step of one level (the plan, or a map's body) as a form. */
function StepList({
  level,
  outer,
  schemas,
  problems,
  triggerKind,
  onLevel,
}: {
  level: Level;
  outer: Source[];
  schemas: Schemas;
  problems: PlanProblem[];
  triggerKind: string | undefined;
  onLevel: (level: Level) => void;
}) {
  return (
    <>
      {level.nodes.map((node) => (
        <StepForm
          key={node.id}
          node={node}
          level={level}
          outer={outer}
          schemas={schemas}
          problems={problems}
          triggerKind={triggerKind}
          onChange={(next) =>
            onLevel({ ...level, nodes: level.nodes.map((n) => (n.id === node.id ? next : n)) })
          }
          onEdges={(edges) => onLevel({ ...level, edges })}
        />
      ))}
    </>
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
  const schemas = useSchemas();
  const [json, setJson] = useState(false);
  const plan = useMemo(() => parsePlan(text), [text]);
  const jsonId = useId();
  const update = (level: Level) => {
    if (!plan) return;
    const next: PlanLike = { ...plan, nodes: level.nodes };
    if (level.edges.length || plan.edges) next.edges = level.edges;
    setText(JSON.stringify(next, null, 2));
  };
  const ids = useMemo(() => new Set(plan ? allIds(plan.nodes) : []), [plan]);
  // A branch's arm errors (edges at the top level) are shown at the arm.
  const armError = (p: PlanProblem) =>
    p.path[0] === 'edges' &&
    typeof p.path[1] === 'number' &&
    plan?.nodes.some((n) => n.kind === 'branch' && n.id === plan.edges?.[p.path[1] as number]?.from);
  const unplaced = problems.filter((p) => (!p.node_id || !ids.has(p.node_id)) && !armError(p));
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
      ) : !schemas ? (
        <p className="muted" role="status">
          Loading the steps’ forms…
        </p>
      ) : (
        <StepList
          level={{ nodes: plan.nodes, edges: plan.edges ?? [] }}
          outer={[]}
          schemas={schemas}
          problems={problems}
          triggerKind={triggerKind}
          onLevel={update}
        />
      )}
    </div>
  );
}

/** Every node id of the plan, map bodies included. */
function allIds(nodes: PlanNodeLike[]): string[] {
  return nodes.flatMap((n) => [
    n.id,
    ...(n.kind === 'map' ? allIds((n.body as { nodes?: PlanNodeLike[] } | undefined)?.nodes ?? []) : []),
  ]);
}

export type { Json };
