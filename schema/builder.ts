import SchemaBuilder from '@pothos/core';
import ComplexityPlugin from '@pothos/plugin-complexity';
import RelayPlugin from '@pothos/plugin-relay';
import ValidationPlugin from '@pothos/plugin-validation';
import { AppError, ValidationError } from '../src/shared/errors.ts';
import type { GraphQLContext } from './context.ts';

export const builder = new SchemaBuilder<{
  Context: GraphQLContext;
  DefaultFieldNullability: false;
  Scalars: {
    DateTime: { Input: Date; Output: Date | string };
    JSON: { Input: unknown; Output: unknown };
  };
}>({
  plugins: [ComplexityPlugin, RelayPlugin, ValidationPlugin],
  defaultFieldNullability: false,
  relay: { clientMutationId: 'omit', cursorType: 'String' },
  complexity: {
    defaultComplexity: 1,
    // Every list in the schema takes an explicit page size that sets its own multiplier.
    defaultListMultiplier: 1,
    limit: { complexity: 5000, depth: 10, breadth: 200 },
    complexityError: (kind, result) => {
      const values = result as unknown as Record<string, number>;
      const max = values[`max${kind[0]!.toUpperCase()}${kind.slice(1)}`];
      return new AppError(400, 'query_too_complex', `Query ${kind} ${values[kind]} exceeds the limit of ${max}; ask for fewer fields or smaller pages`);
    },
  },
  validation: {
    validationError: (result) =>
      new ValidationError(result.issues.map((i) => ({ path: (i.path ?? []).map((p) => String(typeof p === 'object' ? p.key : p)).join('.'), message: i.message }))),
  },
});

builder.queryType({});
builder.mutationType({});
builder.subscriptionType({});
