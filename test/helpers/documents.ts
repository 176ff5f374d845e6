import { print, type DocumentNode, type GraphQLFormattedError } from 'graphql';

/**
 * How the suites send GraphQL documents. A valid document is typed by graphql-codegen
 * (`graphql(...)` from test/helpers/gql/, `npm run codegen`), so its answer's `data` has the
 * document's shape; a string stays for what codegen cannot or must not type: documents the gateway
 * refuses (parse, validation, size, depth or complexity attacks), texts whose hash matters
 * (persisted queries), and selections built at run time.
 */

/** The text sent for a document. */
export function sourceOf(document: DocumentNode | string): string {
  return typeof document === 'string' ? document : print(document);
}

/** A GraphQL answer (the HTTP body or a graphql-ws result) to a typed document. */
export interface Answer<TData> {
  data?: TData | null;
  errors?: readonly GraphQLFormattedError[];
}
