import { z } from 'zod';
import { jsonSchemaOverride } from '../src/shared/field-meta.ts';
import { builder } from './builder.ts';

/**
 * GraphQL input types derived from the services' zod schemas, so a parameter is declared once: the
 * input type only shapes what GraphQL accepts, with camelCase names; `decode` turns a GraphQL value
 * back into the service's field names, and the service validates it with the same schema (ranges,
 * lengths, patterns, cross-field rules), its errors keeping their codes.
 */

export interface JsonSchema {
  type?: string | string[];
  title?: string;
  description?: string;
  examples?: unknown[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  enum?: unknown[];
  const?: unknown;
  'x-currency'?: 'USD' | 'local';
}

/** A zod schema as JSON schema, with amounts of money marked (`x-currency`). */
export const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output') =>
  z.toJSONSchema(schema, { io, unrepresentable: 'any', override: jsonSchemaOverride }) as JsonSchema;

export const camel = (name: string) => name.replace(/[_-]([a-z0-9])/g, (_, c: string) => c.toUpperCase());
export const pascal = (name: string) => camel(name).replace(/^\w/, (c) => c.toUpperCase());

/** The JSON schema without its `null` alternative, and whether it had one. */
export function unwrapNull(schema: JsonSchema): { schema: JsonSchema; nullable: boolean } {
  const options = schema.anyOf ?? schema.oneOf;
  if (options) {
    const rest = options.filter((o) => o.type !== 'null');
    const [only] = rest;
    if (only && rest.length === 1 && rest.length < options.length)
      return { schema: { ...only, description: schema.description ?? only.description }, nullable: true };
  }
  if (Array.isArray(schema.type) && schema.type.includes('null')) {
    const type = schema.type.filter((t) => t !== 'null');
    return { schema: { ...schema, type: type.length === 1 ? type[0] : type }, nullable: true };
  }
  return { schema, nullable: false };
}

/** The GraphQL scalar of a JSON-schema leaf; money is Money (USD) or Decimal (another currency), never Float. */
export function scalarOf(
  schema: JsonSchema,
  where: string,
): 'String' | 'Int' | 'Float' | 'Boolean' | 'Money' | 'Decimal' {
  if (schema['x-currency']) return schema['x-currency'] === 'USD' ? 'Money' : 'Decimal';
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
  if (type === undefined && schema.enum?.every((v) => typeof v === 'string')) return 'String';
  if (type === undefined && typeof schema.const === 'string') return 'String';
  switch (type) {
    case 'string':
      return 'String';
    case 'integer':
      return 'Int';
    case 'number':
      return 'Float';
    case 'boolean':
      return 'Boolean';
    default:
      throw new Error(`${where}: no GraphQL type for ${JSON.stringify(schema)}; declare it in the zod schema`);
  }
}

/**
 * An input field's description as GraphQL shows it: its label (the zod schema's `title`), what it
 * means, and its example (`examples`), as REST's OpenAPI and MCP carry them in their own keywords.
 */
export function fieldDescription(prop: JsonSchema): string | undefined {
  const { schema } = unwrapNull(prop);
  const text = prop.description ?? schema.description;
  const title = prop.title ?? schema.title;
  const example = (prop.examples ?? schema.examples)?.[0];
  const leaf =
    example !== undefined &&
    (typeof example !== 'object' || (Array.isArray(example) && example.every((e) => typeof e !== 'object')));
  const parts = [
    title ? `${title}.` : undefined,
    text,
    leaf ? `Example: \`${JSON.stringify(example)}\`.` : undefined,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(' ') : undefined;
}

/** Turns a GraphQL value back into the service's shape: field names as the zod schema has them. */
export type Decoder = (value: unknown) => unknown;

interface Built {
  type: unknown;
  decode: Decoder;
}

const keep: Decoder = (v) => v;
const toNumber: Decoder = (v) => (typeof v === 'string' ? Number(v) : v);

function buildType(schema: JsonSchema, name: string): Built {
  const { schema: inner } = unwrapNull(schema);
  if (inner.type === 'object' && inner.properties) return inputObject(inner, name);
  if (inner.type === 'array' && inner.items) {
    const item = buildType(inner.items, name);
    if (Array.isArray(item.type)) throw new Error(`${name}: lists of lists have no GraphQL input type`);
    return { type: [item.type], decode: (v) => (Array.isArray(v) ? v.map(item.decode) : v) };
  }
  const scalar = scalarOf(inner, name);
  // The services take amounts as numbers; Money and Decimal arrive as exact decimal strings.
  return { type: scalar, decode: scalar === 'Money' || scalar === 'Decimal' ? toNumber : keep };
}

function inputObject(
  schema: JsonSchema,
  name: string,
): { type: ReturnType<typeof builder.inputType>; decode: Decoder } {
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([field, prop]) => ({
    field,
    graphql: camel(field),
    prop,
    built: buildType(prop, `${name.replace(/Input$/, '')}${pascal(field)}Input`),
  }));
  const type = builder.inputType(name, {
    description: schema.description,
    fields: (t) =>
      Object.fromEntries(
        fields.map(({ graphql, field, prop, built }) => [
          graphql,
          t.field({
            type: built.type as never,
            required: required.has(field),
            description: fieldDescription(prop),
          }),
        ]),
      ),
  });
  const decode: Decoder = (value) => {
    if (value === null || typeof value !== 'object') return value;
    const input = value as Record<string, unknown>;
    return Object.fromEntries(
      fields.filter((f) => f.graphql in input).map((f) => [f.field, f.built.decode(input[f.graphql])]),
    );
  };
  return { type, decode };
}

/**
 * The input type `name` for the object schema `schema` (its input side: what callers send), without
 * the fields named in `omit`, and its decoder. Nested objects become input types named after their field.
 */
export function inputTypeOf(
  schema: z.ZodType,
  name: string,
  options: { description: string; omit?: readonly string[] },
) {
  const json = jsonSchemaOf(schema, 'input');
  const omit = new Set(options.omit ?? []);
  const properties = Object.fromEntries(Object.entries(json.properties ?? {}).filter(([field]) => !omit.has(field)));
  const built = inputObject(
    { ...json, properties, required: json.required?.filter((f) => !omit.has(f)), description: options.description },
    name,
  );
  return { ref: built.type, decode: (value: unknown) => built.decode(withoutNulls(value)) };
}

/** GraphQL sends explicit nulls for "not given"; the services' schemas read absent fields. */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== null)
        .map(([k, v]) => [k, withoutNulls(v)]),
    );
  }
  return value;
}
