import type { CodegenConfig } from '@graphql-codegen/cli';

/**
 * Typed documents for the GraphQL tests: graphql-codegen's client preset reads the committed
 * schema (schema/schema.graphql) and every `graphql(...)` document under test/, and writes
 * test/graphql/gql/. `npm test` runs it and the type check first, so a schema that codegen cannot
 * type, or a test document that no longer fits the schema, fails the build.
 */
const config: CodegenConfig = {
  schema: 'schema/schema.graphql',
  documents: ['test/*.client.test.ts', 'test/helpers/client-documents.ts'],
  ignoreNoDocuments: false,
  generates: {
    'test/graphql/gql/': {
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
