import { useEffect, useId, useRef, useState, type ReactNode } from 'react';
import type { Binding } from '../../../src/flowplan/bindings.ts';
import {
  bindingOf,
  sourceKey,
  valueOf,
  type FieldValue,
  type FormField,
  type Source,
} from '../../../src/flowplan/step-form.ts';

/*
 * One field of a step's form: a value typed in (text, number, choice, yes/no, list) or a binding
 * picked from earlier steps' outputs and the trigger's fields, with the errors placed at it.
 */

export function FieldControl({
  field,
  binding,
  sources,
  problems,
  onChange,
  extra,
}: {
  extra?: ReactNode;
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
            {field.optionLabels?.[o] ?? o}
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
      {extra}
    </div>
  );
}
