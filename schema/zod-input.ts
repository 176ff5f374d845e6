import { z } from 'zod';
import { builder } from './builder.ts';

/**
 * GraphQL input types derived from the services' zod schemas, so a parameter is declared once: the
 * input type only shapes what GraphQL accepts; the service validates it with the same schema (ranges,
 * lengths, patterns, cross-field rules), and its errors keep their codes.
 */

interface JsonSchema {
  type?: string | string[];
  description?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  items?: JsonSchema;
  anyOf?: JsonSchema[];
}

type InputFieldType = string | [string] | object | [object];

const pascal = (s: string) => s.replace(/(^|[_-])(\w)/g, (_, __, c: string) => c.toUpperCase());

function scalarFor(schema: JsonSchema): string {
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== 'null') : schema.type;
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
      return 'JSON';
  }
}

function typeFor(schema: JsonSchema, name: string): InputFieldType {
  if (schema.type === 'object' && schema.properties) return inputObject(schema, name);
  if (schema.type === 'array' && schema.items) {
    const inner = typeFor(schema.items, name);
    return Array.isArray(inner) ? 'JSON' : [inner as string];
  }
  return scalarFor(schema);
}

function inputObject(schema: JsonSchema, name: string) {
  const required = new Set(schema.required ?? []);
  return builder.inputType(name, {
    description: schema.description,
    fields: (t) =>
      Object.fromEntries(
        Object.entries(schema.properties ?? {}).map(([field, prop]) => [
          field,
          t.field({
            type: typeFor(prop, `${name.replace(/Input$/, '')}${pascal(field)}Input`) as never,
            required: required.has(field),
            description: prop.description,
          }),
        ]),
      ),
  });
}

/**
 * The input type `name` for the object schema `schema` (its input side: what callers send), without
 * the fields named in `omit`. Nested objects become input types named after their field.
 */
export function inputTypeOf(schema: z.ZodType, name: string, options: { description: string; omit?: readonly string[] }) {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
  const omit = new Set(options.omit ?? []);
  const properties = Object.fromEntries(Object.entries(json.properties ?? {}).filter(([field]) => !omit.has(field)));
  return inputObject({ ...json, properties, required: json.required?.filter((f) => !omit.has(f)), description: options.description }, name);
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
