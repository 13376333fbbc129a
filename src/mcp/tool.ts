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

const REQUIRED_MARK = 'x-tandem-required';

/**
 * A field whose bad values the domain answers in the spec's own words. The schema accepts any
 * raw value (so no generic validation message replaces that sentence) but advertises the type
 * clients should send.
 */
export function specChecked(json: Record<string, unknown>, options: { required?: boolean } = {}) {
  return z
    .unknown()
    .optional()
    .meta({ ...json, ...(options.required ? { [REQUIRED_MARK]: true } : {}) });
}

type JsonObject = Record<string, unknown> & {
  properties?: Record<string, Record<string, unknown>>;
  required?: string[];
};

function render(schema: z.ZodType, io: 'input' | 'output'): JsonObject {
  const json = z.toJSONSchema(schema, { io, target: 'draft-2020-12' }) as JsonObject;
  delete json.$schema;
  for (const [key, prop] of Object.entries(json.properties ?? {})) {
    if (prop[REQUIRED_MARK]) {
      delete prop[REQUIRED_MARK];
      json.required = [...new Set([...(json.required ?? []), key])];
    }
  }
  return json;
}

/**
 * Wraps a zod schema so the SDK advertises our rendering of it (computed once, with spec-checked
 * fields listed as required). Inputs pass through untouched: `callTool` validates them, so a
 * malformed call is answered in Tandem's words and recorded like any other call.
 */
export function advertised(schema: z.ZodObject, io: 'input' | 'output'): StandardSchemaWithJSON {
  const json = render(schema, io);
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

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'string'
    ? 'a string'
    : typeof value === 'object'
      ? 'an object'
      : `${typeof value} ${String(value)}`;
}

/** One line naming each bad argument and what it must be, e.g. `page_id must be a string (got number 42)`. */
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
        return `${path} must be ${/^[aeiou]/.test(issue.expected) ? 'an' : 'a'} ${issue.expected} (got ${describeValue(value)})`;
      }
      return `${path}: ${issue.message}`;
    })
    .join('; ');
}

export function renderToolSchemas(tool: AnyTool) {
  return { inputSchema: render(tool.input, 'input'), outputSchema: render(tool.output, 'output') };
}
