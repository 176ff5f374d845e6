import { expect } from 'vitest';
import { AppError } from '../../src/shared/errors.ts';
import type { ErrorBody } from './app.ts';

interface Answer {
  status: number;
  body: ErrorBody;
}

/** A 400 `validation_failed` whose details include `path` (its message matching, when given). */
export function expectValidationError(res: Answer, path: string, message?: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  const detail = res.body.error.details?.find((d) => d.path === path);
  expect(detail, JSON.stringify(res.body.error.details)).toBeDefined();
  if (message) expect(detail?.message).toMatch(message);
}

/** A 400 `validation_failed` naming `path` and nothing else. */
export function expectOnlyValidationError(res: Answer, path: string, message: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(res.body.error.details).toEqual([{ path, message: expect.stringMatching(message) }]);
}

/** The AppError a promise is refused with; fails the test if it resolves or throws anything else. */
export async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}
