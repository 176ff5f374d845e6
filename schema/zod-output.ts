import type { z } from 'zod';
import { builder } from './builder.ts';
import { camel, jsonSchemaOf, pascal, scalarOf, unwrapNull, type JsonSchema } from './zod-input.ts';

/**
 * GraphQL object types derived from zod schemas of what the services answer (a tool's result
 * columns, a search's translation, an enrichment's rows), so an answer's shape is declared once.
 * Fields are camelCase and read the service's own field names; an object nested in a field becomes a
 * type named after the field. A field is non-null only when the schema neither allows null nor
 * leaves it out.
 */

export interface OutputField {
  /** The service's field name (`first_name`). */
  key: string;
  schema: z.ZodType;
  description?: string;
}

type TypeRef = string | object;

const built = new Map<string, object>();

function outputType(schema: JsonSchema, name: string): TypeRef | [TypeRef] {
  const { schema: inner } = unwrapNull(schema);
  if (inner.type === 'object' && inner.properties) return objectOf(inner, name);
  if (inner.type === 'array' && inner.items) {
    const item = outputType(inner.items, name);
    if (Array.isArray(item)) throw new Error(`${name}: lists of lists have no GraphQL type`);
    return [item];
  }
  return scalarOf(inner, name);
}

const nullableOf = (schema: JsonSchema, required: boolean) => !required || unwrapNull(schema).nullable;

function objectOf(schema: JsonSchema, name: string): object {
  const existing = built.get(name);
  if (existing) return existing;
  const required = new Set(schema.required ?? []);
  const fields = Object.entries(schema.properties ?? {}).map(([key, prop]) => ({
    key,
    prop,
    type: outputType(prop, `${name}${pascal(key)}`),
  }));
  const ref = builder.objectRef<Record<string, unknown>>(name).implement({
    description: schema.description ?? `${name.replace(/([a-z])([A-Z])/g, '$1 $2')}.`,
    fields: (t) =>
      Object.fromEntries(
        fields.map(({ key, prop, type }) => [
          camel(key),
          t.field({
            type: type as never,
            nullable: nullableOf(prop, required.has(key)) as never,
            description: prop.description ?? unwrapNull(prop).schema.description ?? `The ${key.replace(/_/g, ' ')}.`,
            resolve: (row) => (row[key] ?? null) as never,
          }),
        ]),
      ),
  });
  built.set(name, ref);
  return ref;
}

/** The object type `name` of an object schema (its output side). */
export function outputTypeOf(schema: z.ZodType, name: string, description?: string) {
  const json = jsonSchemaOf(schema, 'output');
  return objectOf({ ...json, description: description ?? json.description }, name) as ReturnType<
    typeof builder.objectRef<Record<string, unknown>>
  >;
}

/** The object type `name` with one field per declared field (a tool's result columns). */
export function outputTypeOfFields(name: string, description: string, fields: readonly OutputField[]) {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const field of fields) {
    const json = jsonSchemaOf(field.schema, 'output');
    properties[field.key] = { ...json, description: field.description ?? json.description };
    if (!unwrapNull(json).nullable) required.push(field.key);
  }
  return objectOf({ type: 'object', properties, required, description }, name) as ReturnType<
    typeof builder.objectRef<Record<string, unknown>>
  >;
}

/** The GraphQL type of one value schema (a start's detail field): nested objects become types named from `name`. */
export function outputFieldOf(schema: z.ZodType, name: string): { type: TypeRef | [TypeRef]; description?: string } {
  const json = jsonSchemaOf(schema, 'output');
  return { type: outputType(json, name), description: json.description ?? unwrapNull(json).schema.description };
}
