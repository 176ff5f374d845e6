import { z } from 'zod';

/**
 * Which numbers of the zod schemas are amounts of money, and in which currency, so every face can
 * type them as money rather than as plain numbers (GraphQL's Money and Decimal scalars). Kept in a
 * registry of its own: the JSON schemas of REST (OpenAPI) and MCP do not change.
 */
export const amounts = z.registry<{ currency: 'USD' | 'local' }>();

/** Marks an amount of US dollars. */
export const usdAmount = <T extends z.ZodType>(schema: T): T => {
  amounts.add(schema, { currency: 'USD' });
  return schema;
};

/** Marks an amount in a currency named elsewhere (a listing's own currency). */
export const localAmount = <T extends z.ZodType>(schema: T): T => {
  amounts.add(schema, { currency: 'local' });
  return schema;
};

/** The JSON-schema override that writes the currency of marked amounts as `x-currency` (for the faces that read it). */
export function currencyOverride(ctx: { zodSchema: unknown; jsonSchema: Record<string, unknown> }) {
  const meta = amounts.get(ctx.zodSchema as z.ZodType);
  if (meta) ctx.jsonSchema['x-currency'] = meta.currency;
}
