import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import { AppError } from '../src/shared/errors.ts';
import type { GraphQLContext } from './context.ts';

/**
 * What a document limit measures: its tokens; the depth, breadth and complexity of the operation; the
 * same of its introspection (`__schema`, `__type` and what they select); its `__schema` selections.
 */
export type Measure =
  | 'tokens'
  | 'depth'
  | 'breadth'
  | 'complexity'
  | 'introspectionDepth'
  | 'introspectionBreadth'
  | 'introspectionComplexity'
  | 'schemaSelections';

function limitMessage(measure: Measure, value: number, limit: number): string {
  switch (measure) {
    case 'schemaSelections':
      return `The operation selects __schema ${value} times; the limit is once per operation: ask for the schema once`;
    case 'introspectionDepth':
    case 'introspectionBreadth':
    case 'introspectionComplexity':
      return (
        `Introspection ${measure.slice('introspection'.length).toLowerCase()} ${value} exceeds the ` +
        `limit of ${limit}, the standard introspection query's; ask for fewer introspection fields`
      );
    default:
      return `Query ${measure} ${value} exceeds the limit of ${limit}; ask for fewer fields or smaller pages`;
  }
}

/**
 * 400 `query_too_complex`, naming the measure, its value (unknown for tokens: parsing stops at the
 * limit) and the limit.
 */
export function tooComplex(measure: Measure, value: number | undefined, limit: number): AppError {
  const message =
    value === undefined
      ? `Query has more than ${limit} ${measure === 'tokens' ? 'tokens' : 'levels'}, the limit; ` +
        'send large inputs as variables and ask for fewer fields'
      : limitMessage(measure, value, limit);
  return new AppError(400, 'query_too_complex', message, { measure, ...(value === undefined ? {} : { value }), limit });
}

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    /** USD as a decimal string; read as a string, written from micro-dollars, decimal strings or dollar numbers. */
    Money: { Input: string; Output: bigint | string | number };
    /** A decimal string in a currency named beside it. */
    Decimal: { Input: string; Output: string | number };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [ComplexityPlugin],
  defaultFieldNullability: false,
  complexity: {
    // The limits below are checked once per operation before it runs, on every transport
    // (complexityAtStartPlugin, schema/complexity.ts); the plugin's own check, which measured the
    // operation again at its first root field on every request, is off. Fields keep their complexity.
    disabled: true,
    defaultComplexity: 1,
    // Every list in the schema takes an explicit page size that sets its own multiplier.
    defaultListMultiplier: 1,
    limit: { complexity: 5000, depth: 10, breadth: 200 },
    complexityError: (kind, result) => {
      // The plugin names the measure capitalised ("Depth"); its result holds `depth` and `maxDepth`, set when exceeded.
      const measure = kind.toLowerCase() as Lowercase<typeof kind>;
      return tooComplex(measure, result[measure], result[`max${kind}`] ?? 0);
    },
  },
});

builder.queryType({
  description:
    'Reads: the caller’s account, runs, money and webhooks, and the lead, local-business and store databases.',
});
builder.mutationType({
  description:
    'Writes: run starts and cancels, credit purchases, enrichment and webhooks. ' +
    'Each answers a payload whose `userErrors` lists the caller’s mistakes.',
});
builder.subscriptionType({
  description: 'Live run tracking over graphql-ws: a run’s progress and rows, and every run of the account.',
});
