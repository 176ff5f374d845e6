import { z } from 'zod';
import { fromZodError, ValidationError, type ErrorDetail } from './errors.ts';
import { assertKnownFields } from './fields.ts';

/*
 * Bad input is refused here, at the boundary, before any of it reaches a query: Postgres `text` and
 * `jsonb` cannot hold a NUL character, and an unpaired UTF-16 surrogate has no UTF-8 form (JSON
 * allows both, `\u0000` and `\ud800`). Every face's parameters pass one of these helpers: the REST
 * query and body readers (`parseParams`), a tool's input and a declared endpoint's input (their
 * service boundaries call `assertStorable`), the ids and cursors the services decode.
 */

/** An unpaired UTF-16 surrogate: a high one not followed by a low one, or a low one without a high one before it. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why Postgres could not store `text`, or undefined when it can. */
export function unstorable(text: string): string | undefined {
  if (text.includes('\u0000')) return 'must not contain NUL characters (\\u0000)';
  if (LONE_SURROGATE.test(text))
    return 'must not contain unpaired surrogates (\\ud800–\\udfff alone are not Unicode text)';
  return undefined;
}

/** At most this many details name unstorable strings of one request. */
const MAX_DETAILS = 20;

/**
 * Every string of `value` (and every key of its objects) that Postgres could not store, with its path
 * (`contacts.0.first_name`). Walks without recursion, so a deeply nested body cannot overflow the stack.
 */
export function unstorableDetails(value: unknown, path = ''): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  // Values to visit, in document order from the end; a field whose name cannot be stored carries that reason instead.
  const stack: { value: unknown; path: string; badName?: string }[] = [{ value, path }];
  const join = (base: string, key: string | number) => (base === '' ? String(key) : `${base}.${key}`);
  while (details.length < MAX_DETAILS) {
    const next = stack.pop();
    if (!next) break;
    const v = next.value;
    if (next.badName) {
      details.push({ path: next.path, message: `the name of this field ${next.badName}` });
    } else if (typeof v === 'string') {
      const reason = unstorable(v);
      if (reason) details.push({ path: next.path, message: reason });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ value: v[i], path: join(next.path, i) });
    } else if (v !== null && typeof v === 'object') {
      for (const [k, item] of Object.entries(v).reverse()) {
        const badName = unstorable(k);
        // A name that cannot be stored is shown escaped (`x\u0000y`).
        stack.push(
          badName
            ? { value: item, path: join(next.path, JSON.stringify(k).slice(1, -1)), badName }
            : { value: item, path: join(next.path, k) },
        );
      }
    }
  }
  return details;
}

/** 400 `validation_failed` naming each string of `value` Postgres could not store (see `unstorableDetails`). */
export function assertStorable(value: unknown, path = ''): void {
  const details = unstorableDetails(value, path);
  if (details.length > 0) throw new ValidationError(details);
}

/** A string Postgres can store: every string parameter and input field is one. */
export const storableText = () =>
  z.string().superRefine((s, ctx) => {
    const reason = unstorable(s);
    if (reason) ctx.addIssue({ code: 'custom', message: reason });
  });

/** The largest value of a Postgres `integer` (row positions, counts). */
export const MAX_INT4 = 2_147_483_647;
/** The largest value of a Postgres `bigint` (catalog and ledger ids). */
export const MAX_INT8 = 9_223_372_036_854_775_807n;

/** A decimal id or cursor that fits a Postgres `bigint`: digits only, at most 2^63 − 1. */
export const isBigintText = (v: string) => /^\d{1,19}$/.test(v) && BigInt(v) <= MAX_INT8;

/**
 * A time as this API writes it into cursors (`Date.prototype.toISOString()`, years 0000 to 9999), or
 * undefined for anything else: a cursor never carries a date Postgres cannot hold (JavaScript's reach
 * years −271821 to 275760, `timestamptz` 4713 BC to 294276).
 */
export function cursorTime(text: unknown): Date | undefined {
  if (typeof text !== 'string' || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(text)) return undefined;
  const date = new Date(text);
  return !Number.isNaN(date.getTime()) && date.toISOString() === text ? date : undefined;
}

/**
 * The position of a run's row (download `offset`, MCP `download_results`):
 * 0 to 2^31 − 1, the range of a stored row's `seq`.
 */
export const rowOffset = <N extends z.ZodNumber | z.ZodCoercedNumber>(number: N = z.number() as N): N =>
  number.int('must be a whole number').min(0, 'must be at least 0').max(MAX_INT4, `must be at most ${MAX_INT4}`) as N;

/** Splits "a, b" lists; arrays may also be given repeated (GET) or as JSON arrays (POST). */
export function splitList(value: string | string[] | undefined, separators = /,/): string[] {
  if (value === undefined) return [];
  const items = Array.isArray(value) ? value : [value];
  return items
    .flatMap((v) => String(v).split(separators))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** Query strings carry text; JSON bodies carry types. These read both the same way. */
export const param = {
  list: (max = 100, separators?: RegExp) =>
    z.preprocess(
      (v) => (v === undefined || v === null ? undefined : splitList(v as string | string[], separators)),
      z.array(storableText().min(1).max(300)).max(max).optional(),
    ),
  /**
   * A list from a closed vocabulary, listed as an enum: each value is first read by `read` (case,
   * aliases), and one that is none of `values` is refused with `unknown(value)`, which names them.
   */
  oneOfList: (
    values: readonly [string, ...string[]],
    unknown: (value: unknown) => string,
    read: (value: string) => string | undefined = (v) => v.toLowerCase(),
  ) =>
    z.preprocess(
      (v) => (v === undefined || v === null ? undefined : splitList(v as string | string[]).map((s) => read(s) ?? s)),
      z
        .array(z.enum(values, { error: (issue) => unknown(issue.input) }))
        .max(100)
        .optional(),
    ),
  text: z.preprocess((v) => (Array.isArray(v) ? v.join(',') : v), storableText().trim().min(1).max(300).optional()),
  bool: z.preprocess(
    (v) => (v === 'true' || v === '1' ? true : v === 'false' || v === '0' || v === '' ? false : v),
    z.boolean().optional(),
  ),
  /**
   * A number from `min` to `max`; a fractional one is read to 6 decimals (a rating of 4e-323 is 0):
   * the columns it is compared with (`real`, `numeric`) cannot all hold what a double can.
   */
  num: (min: number, max: number, int = true) =>
    z.preprocess(
      (v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v),
      (int
        ? z
            .number()
            .int('must be a whole number')
            .min(min, `must be at least ${min}`)
            .max(max, `must be at most ${max}`)
        : z
            .number()
            .min(min, `must be at least ${min}`)
            .max(max, `must be at most ${max}`)
            .transform((n) => Math.round(n * 1e6) / 1e6)
      ).optional(),
    ),
};

export const pagingParams = {
  page: param.num(1, 100_000).describe('Page number from 1 (default 1); send page or after, not both.'),
  limit: param.num(1, 100).describe('Records per page, 1 to 100; default 50.'),
  after: z
    .preprocess(
      (v) => (typeof v === 'number' ? String(v) : v),
      z
        .string()
        .regex(/^\d{1,19}$/, { message: 'must be 0 or a pagination.next_after value', abort: true })
        .refine(isBigintText, 'must be 0 or a pagination.next_after value')
        .optional(),
    )
    .describe('Cursor paging: 0 for the first page, then pagination.next_after of each answer until it is null.'),
};

/**
 * Parses GET query parameters (names may end in "[]") or a POST body;
 * names the schema does not declare are refused first (fields.ts).
 */
export function parseParams<S extends z.ZodType>(schema: S, raw: unknown): z.output<S> {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new ValidationError([{ path: '', message: 'parameters must be a query string or a JSON object' }]);
  }
  assertStorable(raw);
  const cleaned = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k.replace(/\[\]$/, ''), v]));
  assertKnownFields(schema, cleaned);
  const parsed = schema.safeParse(cleaned);
  if (parsed.success) return parsed.data;
  throw fromZodError(parsed.error);
}
