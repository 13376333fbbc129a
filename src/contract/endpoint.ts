import { z } from 'zod';

/** One query parameter: its schema over the raw string, and what it must be, in words. */
export interface QueryParam<T> {
  schema: z.ZodType<T, string>;
  rule: string;
}

type QuerySpec = Record<string, QueryParam<unknown>>;

/**
 * One JSON API route as both sides see it: the server declares it with its scopes and handler
 * (`src/http/api-*.ts`) and the web app calls it (`web/src/api.ts`), so a request or an answer
 * that changes shape fails to type-check on both sides. Only zod (and types) are imported here:
 * the browser bundle includes this folder.
 */
export interface Endpoint<
  Path extends string = string,
  Query extends QuerySpec = QuerySpec,
  Body = unknown,
  Output extends z.ZodType = z.ZodType,
> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** Below `/api`, in Hono's form: `/automations/:id`. */
  path: Path;
  query?: Query;
  body?: z.ZodType<Body>;
  output: Output;
}

export function endpoint<
  Path extends string,
  Output extends z.ZodType,
  Query extends QuerySpec = Record<never, never>,
  Body = undefined,
>(e: Endpoint<Path, Query, Body, Output>): Endpoint<Path, Query, Body, Output> {
  return e;
}

/** `{id: string, run_id: string}` for `/automations/:id/runs/:run_id`. */
export type PathParams<Path extends string> = Path extends `${string}:${infer Name}/${infer Rest}`
  ? { [K in Name]: string } & PathParams<`/${Rest}`>
  : Path extends `${string}:${infer Name}`
    ? { [K in Name]: string }
    : Record<never, never>;

/** What a caller passes as the query: each parameter written as the URL will carry it. */
export type QueryArgs<E> =
  E extends Endpoint<string, infer Q, unknown, z.ZodType>
    ? { [K in keyof Q]?: string | number | boolean | undefined }
    : never;
export type BodyOf<E> = E extends Endpoint<string, QuerySpec, infer B, z.ZodType> ? B : never;
export type OutputOf<E> = E extends Endpoint<string, QuerySpec, unknown, infer O> ? z.output<O> : never;

/** The path with its parameters filled in, each encoded. */
export function fillPath(path: string, params: Record<string, string>): string {
  return path.replace(/:([A-Za-z_]+)/g, (_, name: string) => {
    const value = params[name];
    if (value === undefined) throw new Error(`missing path parameter ${name}`);
    return encodeURIComponent(value);
  });
}

/** Every refusal the API sends: a stable code and one sentence for a person, with the detail it has. */
export const apiError = z.looseObject({
  error: z.string(),
  message: z.string(),
  /** A plan the validator refused: every problem, to show beside the plan. */
  errors: z
    .array(
      z.object({
        rule: z.string(),
        path: z.array(z.union([z.string(), z.number()])),
        node_id: z.string().optional(),
        message: z.string(),
      }),
    )
    .optional(),
});
export type ApiError = z.infer<typeof apiError>;
export type PlanProblem = NonNullable<ApiError['errors']>[number];

/** A whole number written in digits only (no sign, exponent, hex or spaces), from min to max. */
export function integerParam(min: number, max: number): QueryParam<number> {
  return {
    schema: z
      .string()
      .regex(/^[0-9]+$/)
      .transform(Number)
      .pipe(z.number().int().min(min).max(max)),
    rule: `an integer from ${min} to ${max}`,
  };
}

/** A query parameter that is `true` or `false`. */
export const flagParam = (): QueryParam<boolean> => ({
  schema: z.enum(['true', 'false']).transform((v) => v === 'true'),
  rule: 'true or false',
});

/** A query parameter of free text, at most `max` characters. */
export const textParam = (max: number): QueryParam<string> => ({
  schema: z.string().max(max),
  rule: `text of at most ${max} characters`,
});

/** A query parameter that is one of a few words. */
export const choiceParam = <T extends string>(...values: [T, ...T[]]): QueryParam<T> => ({
  schema: z.enum(values) as unknown as z.ZodType<T, string>,
  rule: values.length === 2 ? `${values[0]} or ${values[1]}` : `one of ${values.join(', ')}`,
});
