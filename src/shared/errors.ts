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
      error: { code: this.code, message: this.message, ...(this.details === undefined ? {} : { details: this.details }) },
      ...this.extraBody,
    };
  }
}

export class ValidationError extends AppError {
  constructor(details: ErrorDetail[], message?: string) {
    super(400, 'validation_failed', message ?? details.map((d) => (d.path ? `${d.path}: ${d.message}` : d.message)).join('; '), details);
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

/** Normalises anything thrown into an Error. */
export function coerceError(err: unknown): Error {
  if (err instanceof Error) return err;
  return new Error(typeof err === 'string' ? err : JSON.stringify(err));
}
