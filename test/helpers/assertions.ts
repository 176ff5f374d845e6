import { expect } from 'vitest';

interface Answer {
  status: number;
  body: any;
}

/** A 400 `validation_failed` whose details include `path` (its message matching, when given). */
export function expectValidationError(res: Answer, path: string, message?: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  const detail = res.body.error.details.find((d: { path: string }) => d.path === path);
  expect(detail, JSON.stringify(res.body.error.details)).toBeDefined();
  if (message) expect(detail.message).toMatch(message);
}

/** A 400 `validation_failed` naming `path` and nothing else. */
export function expectOnlyValidationError(res: Answer, path: string, message: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  expect(res.body.error.details).toEqual([{ path, message: expect.stringMatching(message) }]);
}
