import { getOperationAST, GraphQLError, type DocumentNode, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { GRAPHQL_ERROR_CODES } from '../../src/http/errors.ts';

/** A result as graphql-jit hands it out: with the serialiser compiled for its document. */
type Result = ExecutionResult & { stringify?: (result: unknown) => string };

const RESPONSE_TOO_LARGE: keyof typeof GRAPHQL_ERROR_CODES = 'RESPONSE_TOO_LARGE';

const isStream = (value: unknown): value is AsyncIterable<unknown> =>
  typeof value === 'object' && value !== null && Symbol.asyncIterator in value;

/**
 * The answer that replaces a result over the limit: `data` null and one error, `RESPONSE_TOO_LARGE`,
 * naming the size and the limit (`extensions.details`: `{bytes, limit}`) and how to narrow the query.
 * A mutation's result is refused after it ran: the message says so.
 */
function tooLarge(
  bytes: number,
  limit: number,
  document: DocumentNode,
  operationName: string | null | undefined,
): Result {
  const mutation = getOperationAST(document, operationName)?.operation === 'mutation';
  const message =
    `The result is ${bytes} bytes of JSON, more than the limit of ${limit}; ` +
    `ask for fewer fields or page with a smaller \`first\`` +
    (mutation ? ' (the mutation itself was carried out: read its outcome with a narrower query)' : '');
  return {
    data: null,
    errors: [new GraphQLError(message, { extensions: { code: RESPONSE_TOO_LARGE, details: { bytes, limit } } })],
  };
}

/**
 * Results at most `maxBytes` of serialised JSON (GRAPHQL_MAX_RESPONSE_BYTES; 0: no limit): each result
 * of a query or mutation, and each event of a subscription, over HTTP and graphql-ws alike, is
 * serialised once here and replaced by a `RESPONSE_TOO_LARGE` error when it is larger. A result within
 * the limit keeps its JSON: its `stringify` (which yoga's result processors, the direct answer and the
 * shared subscriptions' fan-out call, as graphql-jit's) hands the same text back for the same result,
 * so it is not serialised a second time. graphql-ws serialises its own messages: a result it sends is
 * serialised twice.
 */
export function responseSizeLimitPlugin(maxBytes: number): Plugin {
  if (maxBytes === 0) return {};
  const limit = (
    result: Result,
    setResult: (result: Result) => void,
    document: DocumentNode,
    operationName: string | null | undefined,
  ) => {
    const serialise = result.stringify ?? JSON.stringify;
    const json = serialise(result);
    // A UTF-8 byte is at least one UTF-16 unit and at most three: the byte count is read only in between.
    const bytes = json.length * 3 <= maxBytes ? json.length : Buffer.byteLength(json);
    if (bytes > maxBytes) return setResult(tooLarge(bytes, maxBytes, document, operationName));
    result.stringify = (r) => (r === result ? json : serialise(r));
  };
  return {
    onExecute({ args }) {
      return {
        onExecuteDone({ result, setResult }) {
          const each = ({ result: r, setResult: set }: { result: unknown; setResult: (r: never) => void }) =>
            limit(r as Result, set as (r: Result) => void, args.document, args.operationName);
          if (isStream(result)) return { onNext: each };
          each({ result, setResult });
          return undefined;
        },
      };
    },
    onSubscribe({ args }) {
      return {
        onSubscribeResult({ result }) {
          if (!isStream(result)) return undefined;
          return {
            onNext: ({ result: r, setResult: set }) =>
              limit(r as Result, set as (r: Result) => void, args.document, args.operationName),
          };
        },
      };
    },
  };
}
