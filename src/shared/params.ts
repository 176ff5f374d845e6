import { z } from 'zod';
import { fromZodError, ValidationError } from './errors.ts';

/** Splits "a, b" lists; arrays may also be given repeated (GET) or as JSON arrays (POST). */
export function splitList(value: string | string[] | undefined, separators = /,/): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : [value];
  return items.flatMap((v) => String(v).split(separators)).map((v) => v.trim()).filter(Boolean);
}

/** Query strings carry text; JSON bodies carry types. These read both the same way. */
export const param = {
  list: (max = 100, separators?: RegExp) =>
    z.preprocess((v) => (v === undefined || v === null ? undefined : splitList(v as string | string[], separators)), z.array(z.string().min(1).max(300)).max(max).optional()),
  text: z.preprocess((v) => (Array.isArray(v) ? v.join(',') : v), z.string().trim().min(1).max(300).optional()),
  bool: z.preprocess((v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' || v === '' ? false : v), z.boolean().optional()),
  num: (min: number, max: number, int = true) =>
    z.preprocess(
      (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
      (int ? z.number().int('must be a whole number') : z.number()).min(min, `must be at least ${min}`).max(max, `must be at most ${max}`).optional(),
    ),
};

export const pagingParams = {
  page: param.num(1, 100_000),
  limit: param.num(1, 100),
  after: z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string().regex(/^\d+$/, 'must be 0 or a pagination.next_after value').optional()),
};

/** Parses GET query parameters (names may end in "[]") or a POST body with a strict schema; unknown names are refused. */
export function parseParams<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError([{ path: '', message: 'parameters must be a query string or a JSON object' }]);
  }
  const cleaned = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.replace(/\[\]$/, ''), v]));
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw fromZodError(
    new z.ZodError(
      parsed.error.issues.map((issue) =>
        issue.code === 'unrecognized_keys' ? { ...issue, message: `unknown parameter${issue.keys.length > 1 ? 's' : ''} ${issue.keys.join(', ')}` } : issue,
      ),
    ),
  );
}
