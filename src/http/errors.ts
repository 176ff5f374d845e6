import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RateLimitedError, rateLimitHeaders } from '../accounts/rate-limit.ts';
import { DailyLimitError } from '../billing/allowances.ts';
import { AppError, coerceError, DatabaseUnavailableError, RetryLaterError, ValidationError } from '../shared/errors.ts';
import { ENDPOINTS } from '../endpoints/index.ts';
import { TOOLS } from '../tools/index.ts';
import { countRefusal, faceOf } from './metrics.ts';
import { setAnswerHeaders } from './headers.ts';

/**
 * Error mapping of every face: an AppError keeps its status, code, message and details (the REST
 * error body, an MCP tool error; GraphQL's `extensions.code` is the code in SCREAMING_SNAKE_CASE); anything else is an
 * internal error, logged and never shown.
 */

export const INTERNAL_ERROR_BODY = {
  error: { code: 'internal_error', message: 'Something went wrong on our side; the error was logged.' },
} as const;

/** Headers that go with a refusal: Retry-After of a daily limit, the RateLimit headers of a 429. */
export function errorHeaders(err: AppError): Record<string, string> {
  if (err instanceof DailyLimitError) return { 'Retry-After': String(err.retryAfterSecs) };
  if (err instanceof RateLimitedError) return rateLimitHeaders(err.state, true);
  if (err instanceof RetryLaterError) return { 'Retry-After': String(err.retryAfterSecs) };
  return {};
}

/** The REST error body of anything thrown (also the body of an MCP tool error). */
export function errorBody(err: unknown): Record<string, unknown> {
  const known = coerceError(err);
  return known instanceof AppError ? known.toBody() : INTERNAL_ERROR_BODY;
}

/**
 * A REST error code as GraphQL spells it (`extensions.code`, the
 * `ErrorCode` enum): `validation_failed` → `VALIDATION_FAILED`.
 */
export const graphQLCode = (code: string) => code.replace(/[^A-Za-z0-9]+/g, '_').toUpperCase();

/**
 * Codes of the GraphQL errors that are not AppErrors: documents that do not parse
 * or validate, variables that do not coerce, results too large to send.
 */
export const GRAPHQL_ERROR_CODES = {
  GRAPHQL_PARSE_FAILED: 'The document is not valid GraphQL syntax.',
  GRAPHQL_VALIDATION_FAILED:
    'The document does not validate against the schema (unknown field, wrong argument type, …).',
  BAD_USER_INPUT:
    'A variable does not fit its declared type (missing, ' +
    'null for a non-null type, or a value the type cannot represent).',
  RESPONSE_TOO_LARGE:
    'The result, or a subscription event, is larger than the server’s response size limit, ' +
    'so `data` is null; ask for fewer fields or page with a smaller `first`.',
} as const;

/**
 * The REST routes (endpoint declarations and tool starts) by method and path, as the GraphQL fields that do the same.
 */
const GRAPHQL_FIELD_OF_ROUTE = new Map<string, string>([
  ...ENDPOINTS.flatMap(({ rest, graphql }) =>
    graphql
      ? rest.methods.map(
          (m) =>
            [`${m.toUpperCase()} ${rest.path}`, `the ${graphql.field} ${m === 'get' ? 'query' : 'mutation'}`] as const,
        )
      : [],
  ),
  ...TOOLS.filter((t) => !t.linkedOnly).map(
    (t) => [`POST ${t.rest.path}`, `the ${t.graphql.mutation} mutation`] as const,
  ),
]);

/** REST answer fields a message may name, as GraphQL names them. */
const camel = (name: string) => name.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

/**
 * The GraphQL wording of a REST message, derived here only: a REST route becomes the GraphQL field
 * that does the same ("Buy credits with the buyCredits mutation."), a REST answer field its GraphQL
 * name (`search_translation` → `searchTranslation`). REST keeps its own wording.
 */
export function graphQLMessage(message: string): string {
  return message
    .replace(
      /\b(GET|POST|DELETE) (\/api\/[\w\-/{}:.]+[\w}])/g,
      (route: string) => GRAPHQL_FIELD_OF_ROUTE.get(route) ?? route,
    )
    .replace(/\b(search|url)_translation\b/g, camel);
}

/** A path of a REST error detail (`contacts.0.first_name`) as GraphQL input names it (`contacts`, `0`, `firstName`). */
export const graphQLPath = (path: string): string[] => (path === '' ? [] : path.split('.').map(camel));

interface GraphQLErrorLike {
  message: string;
  path?: readonly (string | number)[];
  locations?: readonly unknown[];
  extensions?: Record<string, unknown>;
  originalError?: unknown;
}

/** Duck-typed: graphql's CJS and ESM builds can both be loaded, so instanceof GraphQLError is unreliable. */
const isGraphQLError = (err: unknown): err is GraphQLErrorLike =>
  typeof err === 'object' &&
  err !== null &&
  (err as Error).name === 'GraphQLError' &&
  typeof (err as Error).message === 'string';

/**
 * What GraphQL shows of an error: `extensions.code` always, in SCREAMING_SNAKE_CASE. An AppError keeps
 * its REST code (`VALIDATION_FAILED`), `details` and the 401's HTTP status, with its message in
 * GraphQL's words; a document that does not parse or validate is `GRAPHQL_PARSE_FAILED` or
 * `GRAPHQL_VALIDATION_FAILED`, a variable that does not coerce `BAD_USER_INPUT`; anything else is
 * `INTERNAL_ERROR` with the REST body's message, never its own.
 */
export function graphQLErrorOf(err: unknown): { message: string; extensions: Record<string, unknown> } {
  const raised = isGraphQLError(err) && err.originalError !== undefined ? err.originalError : err;
  const cause = isGraphQLError(raised) ? raised : coerceError(raised);
  if (cause instanceof AppError) {
    return {
      message: graphQLMessage(cause.message),
      extensions: {
        code: graphQLCode(cause.code),
        ...(cause.details === undefined ? {} : { details: cause.details }),
        ...(cause.status === 401 ? { http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } } } : {}),
        ...(cause instanceof DatabaseUnavailableError ? { http: { status: 503, headers: errorHeaders(cause) } } : {}),
      },
    };
  }
  if (isGraphQLError(cause)) {
    const extensions = cause.extensions ?? {};
    if (typeof extensions.code === 'string') return { message: cause.message, extensions };
    if (cause.originalError === undefined && cause.path === undefined) {
      // A variable's coercion error wraps the scalar's own error ("Int cannot represent …"): read the outer message.
      const text = isGraphQLError(err) ? err.message : cause.message;
      const code = /^Variable "\$/.test(text)
        ? 'BAD_USER_INPUT'
        : /^Syntax Error/.test(text)
          ? 'GRAPHQL_PARSE_FAILED'
          : 'GRAPHQL_VALIDATION_FAILED';
      return { message: text, extensions: { ...extensions, code } };
    }
  }
  return {
    message: INTERNAL_ERROR_BODY.error.message,
    extensions: { code: graphQLCode(INTERNAL_ERROR_BODY.error.code) },
  };
}

/** Fastify's own refusals, mapped to the service's error codes. */
function fromFastify(err: FastifyError): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(413, 'payload_too_large', 'The request body is larger than 1 MB');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError(415, 'unsupported_media_type', 'Send JSON with "Content-Type: application/json"');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError(400, 'invalid_json', 'The body is empty but Content-Type says JSON; send a JSON object');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError(400, 'invalid_request', 'Content-Length does not match the body');
    default:
      if (err instanceof SyntaxError || err.code === 'FST_ERR_CTP_INVALID_JSON_BODY') {
        return new AppError(400, 'invalid_json', `The body is not valid JSON: ${err.message}`);
      }
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) {
        return new AppError(err.statusCode, 'invalid_request', err.message);
      }
      return undefined;
  }
}

/**
 * Fastify's refusals before a route is found (its `frameworkErrors` option), as the error body: a path
 * whose percent-escapes do not decode to UTF-8 (`/api/downloads/%ED%A0%80`), or a path parameter over
 * Fastify's length limit, is a bad parameter: 400 `validation_failed`.
 */
export function frameworkError(err: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  // No hook has run: the headers of every answer are set here.
  setAnswerHeaders(request, reply);
  if (err.code === 'FST_ERR_BAD_URL' || err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    const message =
      err.code === 'FST_ERR_BAD_URL'
        ? 'the path does not decode: a percent-escape is not UTF-8 text'
        : 'a path parameter is too long';
    return reply.status(400).send(new ValidationError([{ path: '', message }]).toBody());
  }
  request.log.error({ url: request.url.split('?')[0], err }, 'unhandled error');
  return reply.status(500).send(INTERNAL_ERROR_BODY);
}

/**
 * What Node's HTTP parser refuses (Fastify's `clientErrorHandler` option), answered with the error
 * body: request line and headers over the 64 KB limit (431), a request that took too long (408),
 * anything that is not HTTP (400). The connection is closed after it.
 */
export function clientError(err: NodeJS.ErrnoException, socket: Duplex) {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError(
          431,
          'invalid_request',
          'The request line and headers are over 64 KB. Send long parameters as a JSON body with POST.',
        )
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError(408, 'invalid_request', 'The request took too long to arrive.')
        : new AppError(400, 'invalid_request', 'The request is not valid HTTP.');
  const body = JSON.stringify(refusal.toBody());
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status]}\r\nConnection: close\r\nContent-Type: ` +
        `application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}

/** Every 4xx/5xx answers {"error": {"code", "message", "details"?}}; unexpected errors are logged, not shown. */
export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    // A lost database is the one 503 database_unavailable (coerceError), whatever query met it.
    const coerced = coerceError(err);
    const known = coerced instanceof AppError ? coerced : fromFastify(err);
    if (known) {
      countRefusal(faceOf(request), known.status, known.code);
      // The request's logger carries its id (reqId); an error is
      // logged without the query values it carries (src/logger.ts).
      if (known.status === 429 || known.status === 503) request.log.warn({ code: known.code }, known.message);
      reply.headers(errorHeaders(known));
      // The GraphQL face answers its own error body, also for what Fastify refuses before yoga sees
      // the request (a body that is not JSON or is too large, another media type).
      if (faceOf(request) === 'graphql')
        return reply
          .status(known.status)
          .type('application/json; charset=utf-8')
          .send({ errors: [graphQLErrorOf(known)] });
      return reply.status(known.status).send(known.toBody());
    }
    request.log.error({ method: request.method, url: request.url.split('?')[0], err }, 'unhandled error');
    return reply.status(500).send(INTERNAL_ERROR_BODY);
  });
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(new AppError(404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`).toBody()),
  );
}
