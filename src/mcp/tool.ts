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

function render(schema: z.ZodType, io: 'input' | 'output') {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonObject;
  delete json.$schema;
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
