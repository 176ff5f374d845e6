import { z } from 'zod';
import { currencyOverride } from './amounts.ts';

/**
 * Labels and examples of input fields, declared once on the zod schema as `.meta({ title, examples })`
 * (the label people read, one value that works). Every face's JSON schema carries them as `title` and
 * `examples`: OpenAPI and MCP as they are, GraphQL in its descriptions, the console as label and placeholder.
 */
export interface FieldMeta {
  title?: string;
  description?: string;
  examples?: unknown[];
}

/** A field's label, help and examples as declared. */
export const fieldMeta = (schema: z.ZodType): FieldMeta => (z.globalRegistry.get(schema) ?? {}) as FieldMeta;

/**
 * Keeps a field's declared examples in an input JSON schema: zod leaves them out of a field that
 * transforms its value (its examples would be of the output), but ours are inputs a caller sends.
 */
export function examplesOverride(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }) {
  const { examples } = fieldMeta(ctx.zodSchema as z.ZodType);
  if (examples && ctx.jsonSchema.examples === undefined) ctx.jsonSchema.examples = examples;
}

/** The overrides every face's JSON schema applies: declared examples kept, amounts of money marked (`x-currency`). */
export function jsonSchemaOverride(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }) {
  examplesOverride(ctx);
  currencyOverride(ctx);
}
