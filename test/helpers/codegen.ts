import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the GraphQL tests: graphql-codegen's client preset reads the committed
 * schema (schema/schema.graphql) and every `graphql(...)` document of the suites and their helpers,
 * and writes test/helpers/gql/. `npm test` runs it and the type check first, so a schema that codegen
 * cannot type, or a test document that no longer fits the schema, fails the build. Documents sent as
 * plain strings (those the gateway must refuse) are not read.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['test/**/*.test.ts', 'test/helpers/*.ts'],
  ignoreNoDocuments: false,
  // Only `graphql(...)` calls are documents: a suite's own `gql(...)` helper taking a template is not read.
  pluckConfig: { globalGqlIdentifierName: 'graphql' },
  generates: {
    'test/helpers/gql/': {
      preset: 'client',
      config: {
        scalars: { DateTime: 'string', Money: 'string', JSON: 'unknown' },
        enumsAsTypes: true,
        useTypeImports: true,
      },
      presetConfig: { fragmentMasking: false },
    },
  },
  emitLegacyCommonJSImports: false,
  silent: true,
};

export default config;
