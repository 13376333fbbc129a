import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DomainError, invalid } from '../../errors.ts';

/*
 * Automation templates: data files in ./templates, each a FlowPlan with its trigger and ask, and
 * the few fields a person fills in before it is drafted (a document, a repository, a channel).
 * A field appears in the plan, trigger and ask as `[[name]]`; `[[timezone]]` is the person's zone.
 */

export type TemplateFieldKind = 'document' | 'page' | 'repo' | 'channel' | 'email' | 'text';

export interface TemplateField {
  name: string;
  label: string;
  kind: TemplateFieldKind;
}

export interface Template {
  id: string;
  name: string;
  description: string;
  ask: string;
  write_approval: 'required' | 'automatic';
  trigger: Record<string, unknown>;
  fields: TemplateField[];
  plan: Record<string, unknown>;
}

const DIR = join(import.meta.dirname, 'templates');

function load(): Template[] {
  return readdirSync(DIR)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(DIR, f), 'utf8')) as Template);
}

let loaded: Template[] | undefined;

/** Every template, in a stable order (the weekly digest first). */
export function templates(): Template[] {
  loaded ??= load().sort((a, b) =>
    a.id === 'weekly-document-digest' ? -1 : b.id === 'weekly-document-digest' ? 1 : 0,
  );
  return loaded;
}

/** A template as the app lists it: what it does and what it asks for. */
export function templateSummary(t: Template) {
  return { id: t.id, name: t.name, description: t.description, fields: t.fields, trigger: t.trigger };
}

const MAX_VALUE = 500;
const PLACEHOLDER = /\[\[([a-z_]+)\]\]/g;

function fill(value: unknown, values: Record<string, string>): unknown {
  if (typeof value === 'string') {
    return value.replace(PLACEHOLDER, (whole, name: string) => values[name] ?? whole);
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, values));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, values)]));
  }
  return value;
}

/**
 * A template with its fields filled in: the plan, trigger and ask to draft. `words` may give a
 * field's value as the ask should say it (a document's title rather than its id).
 */
export function fillTemplate(id: unknown, input: { values?: unknown; words?: unknown; timezone?: unknown }) {
  const template = templates().find((t) => t.id === id);
  if (!template)
    throw new DomainError(
      'not_found',
      `Template not found: use one of ${templates()
        .map((t) => t.id)
        .join(', ')}`,
    );
  const given = (input.values ?? {}) as Record<string, unknown>;
  const words = (input.words ?? {}) as Record<string, unknown>;
  if (typeof given !== 'object' || Array.isArray(given))
    throw invalid('values must be an object of field names to values');
  const values: Record<string, string> = {};
  for (const field of template.fields) {
    const v = given[field.name];
    if (typeof v !== 'string' || v.trim() === '')
      throw invalid(`${field.label} is required: fill it in to draft this template`);
    if (v.length > MAX_VALUE) throw invalid(`${field.label} must be at most ${MAX_VALUE} characters`);
    values[field.name] = v.trim();
  }
  const zone = typeof input.timezone === 'string' && input.timezone !== '' ? input.timezone : 'UTC';
  values.timezone = zone;
  const said: Record<string, string> = { ...values };
  for (const field of template.fields) {
    const w = words[field.name];
    if (typeof w === 'string' && w.trim() !== '') said[field.name] = w.trim().slice(0, MAX_VALUE);
  }
  return {
    template,
    plan_json: fill(template.plan, values) as Record<string, unknown>,
    trigger: fill(template.trigger, values) as Record<string, unknown>,
    ask: (fill(template.ask, said) as string).slice(0, 1000),
    write_approval: template.write_approval,
  };
}
