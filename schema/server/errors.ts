import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { maskError as defaultMaskError, type Plugin } from 'graphql-yoga';
import { AppError, coerceError } from '../../src/shared/errors.ts';
import { errorHeaders, graphQLErrorOf } from '../../src/http/errors.ts';

/**
 * How the GraphQL transport shows errors: expected ones (AppError) keep their code and message, the
 * rest are masked, and every error of a result names its code in `extensions.code`.
 */

interface LocatedError {
  originalError?: unknown;
  nodes?: GraphQLError['nodes'];
  path?: GraphQLError['path'];
}

/** The extensions of an AppError: its code and details, plus `retryAfter` (seconds) when it comes with Retry-After. */
function extensionsOf(err: AppError): { message: string; extensions: Record<string, unknown> } {
  const { message, extensions } = graphQLErrorOf(err);
  const retryAfter = errorHeaders(err)['Retry-After'];
  return { message, extensions: retryAfter ? { ...extensions, retryAfter: Number(retryAfter) } : extensions };
}

/**
 * An AppError outside execution (the request pipeline's 401 unauthenticated and 429 rate_limited, a
 * document over the limits) as a GraphQL error: the REST code in `extensions.code`, `retryAfter` for a
 * 429, without yoga's internal `http` extension.
 */
export function graphQLRefusal(err: AppError): { message: string; extensions: Record<string, unknown> } {
  const { message, extensions } = extensionsOf(err);
  const { http: _http, ...shown } = extensions;
  return { message, extensions: shown };
}

/**
 * Expected errors keep their code and message; anything else is masked (and logged by yoga). An
 * AppError raised before execution (no path: parsing, the context) answers its own HTTP status.
 */
/**
 * A GraphQL error of graphql-js itself, with no failure behind it (syntax, validation, a variable that
 * does not coerce): the request's mistake, answered to the caller and no failure of the server.
 */
export function isCallerError(error: unknown): boolean {
  const e = error as { name?: string; originalError?: unknown } | undefined;
  // A variable's refusal wraps the refusal of its field, a GraphQL error too.
  return e?.name === 'GraphQLError' && (e.originalError == null || isCallerError(e.originalError));
}

export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  // Duck-typed: graphql's CJS and ESM builds can both be loaded, so instanceof GraphQLError is unreliable.
  const located = (typeof error === 'object' && error !== null ? error : {}) as LocatedError;
  // A lost database is the one 503 DATABASE_UNAVAILABLE, whatever query met it.
  const original = coerceError(located.originalError ?? error);
  if (original instanceof AppError) {
    const { message, extensions } = extensionsOf(original);
    const status =
      located.path === undefined && extensions.http === undefined ? { http: { status: original.status } } : {};
    return new GraphQLError(message, {
      nodes: located.nodes,
      path: located.path,
      extensions: { ...extensions, ...status },
    });
  }
  // Unexpected failures: yoga's masked message, with the service's code for them.
  const masked = defaultMaskError(error, message, isDev) as GraphQLError;
  // Errors raised as GraphQL errors with their own code (persisted operations, for one) keep it.
  if (typeof masked.extensions?.code === 'string' && masked.extensions.code !== 'INTERNAL_SERVER_ERROR') return masked;
  // GraphQL's own errors pass unmasked (a variable that does not coerce: BAD_USER_INPUT); the rest are internal.
  const code = masked === error ? graphQLErrorOf(error).extensions.code : graphQLErrorOf(undefined).extensions.code;
  return new GraphQLError(masked.message, {
    nodes: masked.nodes,
    source: masked.source,
    positions: masked.positions,
    path: masked.path,
    extensions: { ...masked.extensions, code },
  });
}

/**
 * Errors GraphQL itself raises (a variable that does not coerce, a document that does not validate) get their code too.
 */
function withCode(error: GraphQLFormattedError | GraphQLError): GraphQLFormattedError | GraphQLError {
  if (typeof error.extensions?.code === 'string') return error;
  const { extensions } = graphQLErrorOf(error);
  return error instanceof GraphQLError
    ? new GraphQLError(error.message, {
        nodes: error.nodes,
        source: error.source,
        positions: error.positions,
        path: error.path,
        originalError: error.originalError,
        extensions: { ...error.extensions, ...extensions },
      })
    : { ...error, extensions: { ...error.extensions, ...extensions } };
}

/** Every error of a result names its code in `extensions.code`, whatever raised it. */
/**
 * The result with a code on every error, and its errors first (as
 * graphql-js writes them; graphql-jit puts `data` first).
 */
export function coded<R extends { errors?: readonly (GraphQLFormattedError | GraphQLError)[] }>(result: R): R {
  if (!result.errors?.length) return result;
  const { errors, ...rest } = result;
  return {
    errors: errors.some((e) => typeof e.extensions?.code !== 'string') ? errors.map(withCode) : errors,
    ...rest,
  } as unknown as R;
}

/** Every result yoga answers, through `coded`. */
export function errorCodesPlugin(): Plugin {
  return {
    onResultProcess({ result, setResult }) {
      if (Array.isArray(result)) setResult(result.map(coded));
      else if (result && typeof result === 'object' && !(Symbol.asyncIterator in result))
        setResult(coded(result as { errors?: GraphQLError[] }) as never);
    },
  };
}
