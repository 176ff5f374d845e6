import type { FastifyError, FastifyInstance } from 'fastify';
import { RateLimitedError, rateLimitHeaders } from '../accounts/rate-limit.ts';
import { DailyLimitError } from '../billing/allowances.ts';
import { AppError } from '../shared/errors.ts';

/**
 * Error mapping of every face: an AppError keeps its status, code, message and details (the REST
 * error body, GraphQL's `extensions.code`, an MCP tool error); anything else is an internal error,
 * logged and never shown.
 */

export const INTERNAL_ERROR_BODY = { error: { code: 'internal_error', message: 'Something went wrong on our side; the error was logged.' } } as const;

/** Headers that go with a refusal: Retry-After of a daily limit, the RateLimit headers of a 429. */
export function errorHeaders(err: AppError): Record<string, string> {
  if (err instanceof DailyLimitError) return { 'Retry-After': String(err.retryAfterSecs) };
  if (err instanceof RateLimitedError) return rateLimitHeaders(err.state, true);
  return {};
}

/** The REST error body of anything thrown (also the body of an MCP tool error). */
export function errorBody(err: unknown): Record<string, unknown> {
  return err instanceof AppError ? err.toBody() : INTERNAL_ERROR_BODY;
}

/** What GraphQL shows of an AppError: its message and `extensions` (code, details, the 401's HTTP status). */
export function graphQLErrorOf(err: AppError): { message: string; extensions: Record<string, unknown> } {
  return {
    message: err.message,
    extensions: {
      code: err.code,
      ...(err.details === undefined ? {} : { details: err.details }),
      ...(err.status === 401 ? { http: { status: 401, headers: { 'WWW-Authenticate': 'Bearer' } } } : {}),
    },
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

/** Every 4xx/5xx answers {"error": {"code", "message", "details"?}}; unexpected errors are logged, not shown. */
export function installErrorHandling(app: FastifyInstance) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const known = err instanceof AppError ? err : fromFastify(err);
    if (known) {
      if (known.status === 429 || known.status === 503) request.log.warn({ reqId: request.id, code: known.code }, known.message);
      reply.headers(errorHeaders(known));
      return reply.status(known.status).send(known.toBody());
    }
    request.log.error({ reqId: request.id, method: request.method, url: request.url.split('?')[0], err }, 'unhandled error');
    return reply.status(500).send(INTERNAL_ERROR_BODY);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.status(404).send(new AppError(404, 'not_found', `No route ${request.method} ${request.url.split('?')[0]}`).toBody()),
  );
}
