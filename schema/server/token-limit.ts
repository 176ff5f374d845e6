import { GraphQLError, parse as parseDocument } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { tooComplex } from '../builder.ts';

/**
 * Lexical tokens a document may have: ten for each selection of the broadest query the complexity
 * limits allow (breadth 200). Parsing stops at the limit, so a document costs at most this many
 * tokens of work and nests at most a few hundred levels, whatever its size; large inputs belong in
 * variables, which are not tokens.
 */
export const MAX_TOKENS = 2000;

/**
 * graphql-js parses with MAX_TOKENS; past it, or nested past what the stack holds, a document is a 400
 * `query_too_complex` (thrown as an AppError, which maskError answers with its status), never a 500.
 */
export function tokenLimitPlugin(): Plugin {
  return {
    onParse({ setParseFn }) {
      setParseFn((source, options) => {
        try {
          return parseDocument(source, { ...options, maxLexicalTokens: MAX_TOKENS });
        } catch (err) {
          if (err instanceof GraphQLError && /contains more th[ae]t? \d+ tokens/.test(err.message))
            throw tooComplex('tokens', undefined, MAX_TOKENS);
          // The token limit keeps nesting far below this; kept as the last guard.
          if (err instanceof RangeError) throw tooComplex('depth', undefined, MAX_TOKENS);
          throw err;
        }
      });
    },
  };
}
