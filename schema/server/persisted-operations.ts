import { readFileSync } from 'node:fs';
import { type GraphQLError, parse as parseDocument, validate as validateDocument, type GraphQLSchema } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { useAPQ as apqPlugin, type APQStore } from '@graphql-yoga/plugin-apq';
import { usePersistedOperations as persistedOperationsPlugin } from '@graphql-yoga/plugin-persisted-operations';
import { schema } from '../index.ts';
import { boundedCache } from './document-cache.ts';
import { MAX_TOKENS } from './token-limit.ts';

/**
 * The operations of a GRAPHQL_PERSISTED_OPERATIONS file: a JSON object mapping each operation's id (the
 * SHA-256 hex of its document, as Apollo's persisted-query link and GraphQL Code Generator's client
 * preset compute it) to the document. Each must parse within the token limit and validate against the
 * schema: a stale file stops the gateway at start rather than failing its frontend later.
 */
export function loadPersistedOperations(file: string, against: GraphQLSchema = schema): Map<string, string> {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: cannot read ${file} as JSON: ${(err as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: ${file} must hold a JSON object mapping hashes to documents`);
  }
  const operations = new Map<string, string>();
  for (const [id, document] of Object.entries(raw)) {
    if (typeof document !== 'string')
      throw new Error(`GRAPHQL_PERSISTED_OPERATIONS: the operation ${id} is not a string`);
    let errors: readonly GraphQLError[];
    try {
      errors = validateDocument(against, parseDocument(document, { maxLexicalTokens: MAX_TOKENS }));
    } catch (err) {
      errors = [err as GraphQLError];
    }
    if (errors.length > 0)
      throw new Error(
        `GRAPHQL_PERSISTED_OPERATIONS: the operation ${id} is not valid: ${errors.map((e) => e.message).join('; ')}`,
      );
    operations.set(id, document);
  }
  return operations;
}

/**
 * Automatic persisted queries (Apollo's protocol: `extensions.persistedQuery = {version: 1, sha256Hash}`;
 * a hash alone runs the document registered under it or answers `PersistedQueryNotFound`, a document
 * with its hash registers it), over the operations of the file and those registered in this process.
 */
function apqStore(listed: Map<string, string>): APQStore {
  const registered = boundedCache<string>(1000);
  return {
    get: (hash) => listed.get(hash) ?? registered.get(hash),
    set: (hash, document) => (listed.has(hash) ? undefined : registered.set(hash, document)),
  };
}

/** Only the listed operations (GRAPHQL_PERSISTED_ONLY): a document sent by the client is refused. */
function persistedOnly(listed: Map<string, string>): Plugin {
  const idRequired = {
    message: 'This gateway runs only persisted operations: send extensions.persistedQuery.sha256Hash, without a query',
    extensions: { code: 'PERSISTED_QUERY_ID_REQUIRED', http: { status: 400 } },
  };
  return persistedOperationsPlugin({
    getPersistedOperation: (id) => listed.get(id) ?? null,
    allowArbitraryOperations: false,
    customErrors: {
      notFound: {
        message: 'PersistedQueryNotFound',
        extensions: { code: 'PERSISTED_QUERY_NOT_FOUND', http: { status: 200 } },
      },
      persistedQueryOnly: idRequired,
      keyNotFound: idRequired,
    },
  });
}

/**
 * The plugins that turn a request's parameters into the operation to run: automatic persisted queries
 * over the file's operations, or with `only` (GRAPHQL_PERSISTED_ONLY) the file's operations alone.
 */
export function persistedOperationPlugins(file: string | undefined, only: boolean): Plugin[] {
  const listed = file ? loadPersistedOperations(file) : new Map<string, string>();
  return only
    ? [persistedOnly(listed)]
    : [apqPlugin({ store: apqStore(listed), responseConfig: { forceStatusCodeOk: true } })];
}
