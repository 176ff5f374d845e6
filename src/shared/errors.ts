import type { z } from 'zod';

export interface ErrorDetail {
  path: string;
  message: string;
}

/** An expected failure with a stable `code`; every face renders it the same way. */
export class AppError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    /** Fields the spec puts beside `error` in the body (e.g. `filters_not_applied_yet`). */
    readonly extraBody?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'AppError';
  }

  toBody() {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details === undefined ? {} : { details: this.details }),
      },
      ...this.extraBody,
    };
  }
}

export class ValidationError extends AppError {
  constructor(details: ErrorDetail[], message?: string) {
    super(
      400,
      'validation_failed',
      message ?? details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; '),
      details,
    );
  }
}

export const notFound = (what = 'Resource') => new AppError(404, 'not_found', `${what} not found`);

export const unauthenticated = (message = 'Send your API key as "Authorization: Bearer <API_KEY>"') =>
  new AppError(401, 'unauthenticated', message);

/** Turns zod issues into `validation_failed` with one `{path, message}` per bad field. */
export function fromZodError(error: z.ZodError): ValidationError {
  const details = error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  return new ValidationError(details);
}

/**
 * Normalises anything thrown into an Error; a lost or restarting database becomes the one `DatabaseUnavailableError`.
 */
export function coerceError(err: unknown): Error {
  if (err instanceof Error && !(err instanceof AppError) && isDatabaseUnavailable(err))
    return new DatabaseUnavailableError(undefined, err);
  if (err instanceof Error) return err;
  return new Error(typeof err === 'string' ? err : JSON.stringify(err));
}

/**
 * How a database that cannot be reached, or that ends or refuses sessions, shows in an error: the
 * socket's codes, postgres.js's connection codes, and SQLSTATE 57P01–57P03 (admin shutdown, crash
 * shutdown, cannot connect now) and class 08 (connection exception).
 */
const DATABASE_UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
  'CONNECTION_CLOSED',
  'CONNECTION_ENDED',
  'CONNECTION_DESTROYED',
  'CONNECT_TIMEOUT',
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08001',
  '08003',
  '08004',
  '08006',
]);

/**
 * Whether `err` (or an error it wraps, as drizzle's query errors do) says the database is unreachable or restarting.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (
    let e = err, depth = 0;
    typeof e === 'object' && e !== null && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    if (typeof code === 'string' && DATABASE_UNAVAILABLE_CODES.has(code)) return true;
    // node-postgres (graphile-worker's pool) says a lost connection in words only.
    if (
      typeof message === 'string' &&
      /^(Connection terminated|Client has encountered a connection error)/.test(message)
    )
      return true;
  }
  return false;
}

/**
 * One attempt of a job that failed for a reason outside the service (a webhook receiver that does not
 * resolve, refuses the connection or answers 500). The job has logged it as one warning line and is
 * tried again later: the worker logs the failure only at debug, without a stack (workers/index.ts).
 */
export class AttemptFailedError extends AppError {
  constructor(code: string, message: string) {
    super(502, code, message);
    this.name = 'AttemptFailedError';
  }
}

/**
 * A 503 the caller retries after `retryAfterSecs` (answered with Retry-After):
 * something the service needs is out of reach for a moment.
 */
export class RetryLaterError extends AppError {
  constructor(
    code: string,
    message: string,
    readonly retryAfterSecs: number,
    cause?: unknown,
  ) {
    super(503, code, message);
    if (cause !== undefined) this.cause = cause;
  }
}

/**
 * 503 `database_unavailable`: the database is restarting or out of reach; the caller retries after `retryAfterSecs`.
 */
export class DatabaseUnavailableError extends RetryLaterError {
  constructor(retryAfterSecs = 5, cause?: unknown) {
    super(
      'database_unavailable',
      `The database is unavailable for a moment (a restart or a failover). Retry in ${retryAfterSecs} s.`,
      retryAfterSecs,
      cause,
    );
  }
}
