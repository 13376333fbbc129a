import { z } from 'zod';
import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Actor, Scope } from '../domains/workspace/actor.ts';
import type { Services } from '../services.ts';

export interface ToolContext {
  actor: Actor;
  services: Services;
}

export interface ToolResult<O> {
  structured: O;
  text: string;
}

export interface ToolAnnotations {
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: false;
}

export interface ToolDefinition<I extends z.ZodObject = z.ZodObject, O extends z.ZodObject = z.ZodObject> {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  annotations: ToolAnnotations;
  input: I;
  output: O;
  run(ctx: ToolContext, args: z.output<I>): Promise<ToolResult<z.input<O>>>;
  /**
   * Work the call started that goes on after it answers (edit_automation's runs): its id, which a
   * client that declares the MCP Tasks extension follows as a task (`tasks.ts`).
   */
  startsTask?(result: z.input<O>): string | undefined;
}

export type AnyTool = ToolDefinition<z.ZodObject, z.ZodObject>;

export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(
  tool: ToolDefinition<I, O>,
): AnyTool {
  return tool as unknown as AnyTool;
}

/** Only resolve_comment claims idempotence; reads leave idempotentHint unclaimed (false), as the spec lists. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
export const WRITE: ToolAnnotations = {
  readOnlyHint: false,
  destructiveHint: false,
  idempotentHint: false,
  openWorldHint: false,
};
export const DESTRUCTIVE_WRITE: ToolAnnotations = { ...WRITE, destructiveHint: true };
export const IDEMPOTENT_WRITE: ToolAnnotations = { ...WRITE, idempotentHint: true };

const MARK = {
  required: 'x-tandem-required',
  expects: 'x-tandem-expects',
  clamped: 'x-tandem-clamped',
  anyValue: 'x-tandem-any-value',
} as const;

export interface FieldOptions {
  /** Listed as required; what a missing value gets is the domain's sentence. */
  required?: boolean;
  /**
   * What every bad value of the field is told it must be, where the domain words that more
   * exactly than the advertised type says (`cooldown_s must be a whole number of seconds …`).
   */
  expects?: string;
  /** A number out of range is brought into it (the spec's "clamped"); only a non-number is refused. */
  clamped?: boolean;
  /** The domain answers every value, whatever its type (draft_automation's plan_json: an invalid plan). */
  anyValue?: boolean;
}

/**
 * A field whose bad values are answered in the spec's own words. The schema accepts any raw
 * value, so zod's generic message never replaces that sentence: `callTool` checks the value
 * against the advertised JSON Schema first (one sentence per field, `<field> must be …`), then
 * the domain checks what the type cannot say.
 */
export function specChecked(json: Record<string, unknown>, options: FieldOptions = {}) {
  return z
    .unknown()
    .optional()
    .meta({
      ...json,
      ...(options.required ? { [MARK.required]: true } : {}),
      ...(options.expects ? { [MARK.expects]: options.expects } : {}),
      ...(options.clamped ? { [MARK.clamped]: true } : {}),
      ...(options.anyValue ? { [MARK.anyValue]: true } : {}),
    });
}

type JsonObject = Record<string, unknown> & {
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
};

/** How `callTool` checks one top-level argument before the tool runs. */
export interface FieldRule {
  /** The field as advertised. */
  schema: Record<string, unknown>;
  expects?: string;
  clamped: boolean;
  anyValue: boolean;
}

/**
 * What a JSON Schema says without the words that tell a model nothing, since every client loads
 * tools/list into each conversation: an integer's safe-integer bounds, a record's "keys are
 * strings, values anything", and in results the descriptions and "no other properties" (Tandem
 * writes its own results and the text beside them explains them). Validation is zod's, unchanged.
 */
function lean(node: unknown, io: 'input' | 'output'): void {
  if (Array.isArray(node)) return node.forEach((item) => lean(item, io));
  if (!node || typeof node !== 'object') return;
  const o = node as Record<string, unknown>;
  // A result's fields are read by the model after the call, with the text that explains them.
  if (io === 'output' && typeof o.description === 'string') delete o.description;
  if (o.minimum === Number.MIN_SAFE_INTEGER) delete o.minimum;
  if (o.maximum === Number.MAX_SAFE_INTEGER) delete o.maximum;
  const names = o.propertyNames as Record<string, unknown> | undefined;
  if (names && Object.keys(names).length === 1 && names.type === 'string') delete o.propertyNames;
  const extra = o.additionalProperties;
  if (extra === false || (extra && typeof extra === 'object' && Object.keys(extra).length === 0))
    delete o.additionalProperties;
  for (const value of Object.values(o)) lean(value, io);
}

/**
 * A result advertised by its top-level fields and their types, nested objects as objects: the
 * values a field takes, and what a run, a row or a thread holds, are in the text beside it.
 * (The server still checks every result against the whole schema.)
 */
function shallow(node: Record<string, unknown>, depth: number): Record<string, unknown> {
  if (depth > 0 && node.type === 'object') return { type: 'object' };
  const out: Record<string, unknown> = { ...node };
  delete out.required;
  if (depth > 0) {
    delete out.enum;
    delete out.const;
  }
  if (out.properties && typeof out.properties === 'object') {
    out.properties = Object.fromEntries(
      Object.entries(out.properties as Record<string, Record<string, unknown>>).map(([k, v]) => [
        k,
        shallow(v, depth + 1),
      ]),
    );
  }
  if (out.items && typeof out.items === 'object')
    out.items = shallow(out.items as Record<string, unknown>, depth);
  if (Array.isArray(out.anyOf)) {
    const kinds = (out.anyOf as Record<string, unknown>[]).map((v) => shallow(v, depth));
    const types = kinds.map((k) => (Object.keys(k).length === 1 ? k.type : undefined));
    if (types.every((t) => typeof t === 'string')) {
      delete out.anyOf;
      out.type = types;
    } else out.anyOf = kinds;
  }
  return out;
}

function render(schema: z.ZodType, io: 'input' | 'output') {
  const full = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonObject;
  delete full.$schema;
  lean(full, io);
  const json = (io === 'output' ? shallow(full, 0) : full) as JsonObject;
  const fields: Record<string, FieldRule> = {};
  for (const [key, prop] of Object.entries(json.properties ?? {})) {
    if (prop[MARK.required]) json.required = [...new Set([...(json.required ?? []), key])];
    const expects = prop[MARK.expects];
    fields[key] = {
      schema: prop,
      ...(typeof expects === 'string' ? { expects } : {}),
      clamped: prop[MARK.clamped] === true,
      anyValue: prop[MARK.anyValue] === true,
    };
    for (const mark of Object.values(MARK)) delete prop[mark];
  }
  return { json, fields };
}

/**
 * Wraps a zod schema so the SDK advertises our rendering of it (computed once, with spec-checked
 * fields listed as required). Inputs pass through untouched: `callTool` validates them, so a
 * malformed call is answered in Tandem's words and recorded like any other call.
 */
export function advertised(schema: z.ZodObject, io: 'input' | 'output'): StandardSchemaWithJSON {
  const { json } = render(schema, io);
  const validate = io === 'input' ? (value: unknown) => ({ value }) : schema['~standard'].validate;
  return {
    '~standard': {
      version: 1,
      vendor: 'tandem',
      validate,
      jsonSchema: { input: () => json, output: () => json },
    },
  } as unknown as StandardSchemaWithJSON;
}

/**
 * One line naming each argument zod refused: `document_id is required`, or what it must be. The
 * checks before zod (`arguments.ts`) answer wrong types in the same form, so this is rarely reached.
 */
export function describeArgumentErrors(error: z.ZodError, args: Record<string, unknown>): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.join('.') || 'arguments';
      const value = issue.path.reduce<unknown>(
        (v, k) => (v && typeof v === 'object' ? (v as Record<PropertyKey, unknown>)[k] : undefined),
        args,
      );
      if (issue.code === 'invalid_type') {
        if (value === undefined) return `${path} is required`;
        return `${path} must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected}`;
      }
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

export function renderToolSchemas(tool: AnyTool) {
  return { inputSchema: render(tool.input, 'input').json, outputSchema: render(tool.output, 'output').json };
}

/** Each top-level argument of a tool with the rule `callTool` checks it by. */
export function inputFields(tool: AnyTool): Record<string, FieldRule> {
  return render(tool.input, 'input').fields;
}
