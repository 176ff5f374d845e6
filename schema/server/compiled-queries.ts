import { getOperationAST } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { useGraphQlJit as graphqlJitPlugin } from '@envelop/graphql-jit';
import { hasUncoercedVariables } from '../complexity.ts';

/**
 * Queries and mutations run compiled (graphql-jit, through @envelop/graphql-jit): each document is
 * compiled once, on its first run, and kept with the parsed document (the compiled form goes when the
 * parse cache drops the document). Subscriptions keep graphql-js, whose executions are shared anyway
 * (schema/server/shared-subscriptions.ts).
 */
export function compiledQueriesPlugin(): Plugin {
  return graphqlJitPlugin(
    {},
    {
      // Variables that do not coerce are refused by graphql-js, in its words (graphql-jit words them otherwise).
      enableIf: (args) =>
        !hasUncoercedVariables(args.contextValue as object) &&
        getOperationAST(args.document, args.operationName)?.operation !== 'subscription',
    },
  ) as Plugin;
}
