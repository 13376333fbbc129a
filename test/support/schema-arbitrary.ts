import fc from 'fast-check';

/** The part of JSON Schema the tools advertise for their inputs. */
export interface JsonSchema {
  type?: string;
  enum?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
}

/** Values for a tool's field that its schema cannot tell: real ids, plans, triggers. Undefined: none. */
export type Hints = (field: string) => fc.Arbitrary<unknown> | undefined;

/** A value `levels` deep, arrays and objects in turn. */
export function nested(levels: number): unknown {
  let value: unknown = 'core';
  for (let i = 0; i < levels; i++) value = i % 2 ? [value] : { v: value };
  return value;
}

const text = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.constantFrom(
    '# Heading\n\npara\n',
    '- a\n- b\n',
    '<p>x</p>',
    '<script>x()</script>',
    '@Assistant hi',
    ' ',
  ),
);

/** Text no schema invites at this size or shape. */
const hugeText = fc
  .tuple(
    fc.constantFrom(60_001, 250_000, 999_999, 1_000_001),
    fc.constantFrom('x', '*', '> ', '|', '1. ', 'a\n', '<b>', '<br>'),
  )
  .map(([length, unit]) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length));

/** Values a careless or hostile client sends: wrong types, null, odd numbers and strings, huge and deep values. */
export const hostile: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(-1, 1.5, -0, 1e308, 2 ** 53 + 2, '', '\u0000', '\uD800', 'zz', true, {}, []),
  hugeText,
  fc.constantFrom(63, 64, 65, 300, 4000).map(nested),
  fc.array(fc.constant('x'.repeat(1000)), { minLength: 100, maxLength: 300 }),
);

/** Values that fit a field's advertised type, enum and bounds. */
export function fitting(field: string, schema: JsonSchema, hints: Hints): fc.Arbitrary<unknown> {
  const hinted = hints(field);
  if (hinted) return hinted;
  if (schema.enum) return fc.constantFrom(...schema.enum);
  switch (schema.type) {
    case 'string':
      return schema.minLength ? text.filter((s) => s.length >= schema.minLength!) : text;
    case 'integer':
    case 'number':
      return fc.integer({
        min: schema.minimum ?? -5,
        max: Math.min(schema.maximum ?? 50, (schema.minimum ?? 0) + 1000),
      });
    case 'boolean':
      return fc.boolean();
    case 'array':
      return fc.array(schema.items ? fitting(field, schema.items, hints) : fc.jsonValue(), { maxLength: 4 });
    case 'object':
      return schema.properties ? argumentsFor(schema, hints) : fc.dictionary(fc.string(), fc.jsonValue());
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

/**
 * Arguments for a tool: required properties nearly always and optional ones now and then (the
 * `often` ones, which some calls need, half the time), each
 * fitting its schema; in about a third of the calls one of them (or a field the tool does not
 * know) is hostile instead, so refusals and the writes behind valid calls both get exercised.
 */
export function argumentsFor(
  schema: JsonSchema,
  hints: Hints,
  often: ReadonlySet<string> = new Set(),
): fc.Arbitrary<Record<string, unknown>> {
  const required = new Set(schema.required ?? []);
  const properties = Object.entries(schema.properties ?? {});
  // Weighted choices, not a random number below a bound: fast-check draws numbers near their bounds.
  const fields = properties.map(([name, prop]) =>
    fc
      .tuple(
        required.has(name)
          ? fc.oneof({ weight: 19, arbitrary: fc.constant(true) }, fc.constant(false))
          : fc.oneof({ weight: often.has(name) ? 1 : 4, arbitrary: fc.constant(false) }, fc.constant(true)),
        fitting(name, prop, hints),
      )
      .map(([present, v]) => (present ? [[name, v] as const] : [])),
  );
  const names = properties.map(([name]) => name);
  const spoiled: fc.Arbitrary<readonly [string, unknown] | undefined> = fc.oneof(
    { weight: 6, arbitrary: fc.constant(undefined) },
    ...(names.length ? [{ weight: 3, arbitrary: fc.tuple(fc.constantFrom(...names), hostile) }] : []),
    { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 12 }), hostile) },
  );
  return fc.tuple(fc.tuple(...fields), spoiled).map(([known, bad]) => {
    const args: Record<string, unknown> = Object.fromEntries(known.flat());
    if (bad) Object.defineProperty(args, bad[0], { value: bad[1], enumerable: true, writable: true });
    return args;
  });
}
