import { assertStorable } from '../shared/params.ts';
import type { Core } from '../core.ts';
import { suppressionCheck } from '../privacy/suppression.ts';
import { takeAllowance } from '../billing/allowances.ts';
import { ValidationError } from '../shared/errors.ts';
import { maskContacts, type ContactFields } from './masking.ts';
import { recordEnrichmentJob, type JobEntry, type JobOptions } from './enrichment-jobs.ts';

/**
 * What the two enrichment endpoints (lead enrichment, enrich-leads.ts; local-business enrichment,
 * enrich-local-businesses.ts) share: reading and checking the request, the caller's rows copied into the answer,
 * and the answer itself with the daily allowance taken.
 */

export const MAX_ENRICH_ROWS = 1000;
/** Matched rows a preview shows. */
export const PREVIEW_SAMPLE_SIZE = 5;
/** What `preview` does, as every face describes it. */
export const PREVIEW_DESCRIPTION =
  'Default false. When true, answers how many rows match (summary) and the first ' +
  `${PREVIEW_SAMPLE_SIZE} matched rows as a sample with their emails, ` +
  'phone numbers and profile URLs masked (j***@acme.com, ' +
  '+1 ***-***-0142), and counts nothing against the daily allowance.';

/** The first of the fields `names` of a caller's row that holds text, trimmed. */
export function textField(row: Record<string, unknown>, ...names: string[]): string | undefined {
  for (const name of names) {
    const v = row[name];
    if (typeof v === 'string') {
      const text = v.trim();
      if (text) return text;
    }
  }
  return undefined;
}

/**
 * Reads `{rows, preview}`: 1 to 1,000 rows (400 otherwise) and each object row's keys (`keysOfRow`);
 * a row that is not an object has no keys. `assertMatchable` then checks every row.
 */
export function readEnrichRequest<K>(body: unknown, keysOfRow: (row: Record<string, unknown>) => K) {
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new ValidationError([{ path: '', message: 'the body must be a JSON object with rows' }]);
  const { rows, preview } = body as { rows?: unknown; preview?: unknown };
  if (!Array.isArray(rows)) throw new ValidationError([{ path: 'rows', message: 'rows must be an array of objects' }]);
  if (rows.length === 0) throw new ValidationError([{ path: 'rows', message: 'rows must not be empty' }]);
  if (rows.length > MAX_ENRICH_ROWS)
    throw new ValidationError([
      { path: 'rows', message: `at most ${MAX_ENRICH_ROWS} rows per request (got ${rows.length}); split the file` },
    ]);
  if (preview !== undefined && typeof preview !== 'boolean')
    throw new ValidationError([{ path: 'preview', message: 'preview must be true or false' }]);
  const keys = rows.map((row) =>
    row === null || typeof row !== 'object' || Array.isArray(row)
      ? undefined
      : keysOfRow(row as Record<string, unknown>),
  );
  return { rows: rows as Record<string, unknown>[], keys, preview: preview === true };
}

/** 400 listing every row that is not an object or has nothing to match on (`isEmpty`). */
export function assertMatchable<K>(
  keys: (K | undefined)[],
  isEmpty: (keys: K) => boolean,
  need: string,
): asserts keys is K[] {
  const errors: { path: string; message: string }[] = [];
  keys.forEach((k, i) => {
    if (k === undefined) errors.push({ path: `rows.${i}`, message: 'must be an object' });
    else if (isEmpty(k)) errors.push({ path: `rows.${i}`, message: `needs at least one of ${need}` });
  });
  if (errors.length > 0)
    throw new ValidationError(
      errors,
      `${errors.length} row${errors.length === 1 ? '' : 's'} cannot be matched: ${errors
        .slice(0, 5)
        .map((e) => e.path)
        .join(', ')}${errors.length > 5 ? ', …' : ''}`,
    );
}

/** A row left out of an enrichment (EnrichOptions.skipUnusable): its place among the rows sent (from 1) and why. */
export interface SkippedRow {
  row: number;
  reasons: string[];
}

/**
 * How the console and GraphQL ask for an enrichment; REST and MCP ask for none of it, as the spec has them.
 * `skipUnusable`: a row with nothing usable to match on is skipped and reported (SkippedRow) rather than
 * refusing the whole request. `matchNames`: lead enrichment also matches a full name at a company.
 * `job`: a file enriched (not a preview) is recorded in the account's history (enrichment-jobs.ts).
 */
export interface EnrichOptions {
  skipUnusable?: boolean;
  matchNames?: boolean;
  job?: JobOptions;
}

/**
 * Splits a request's rows into the matchable and the skipped: `problemsOf` lists why a row's keys are
 * unusable (empty when it can be matched). A row that is not an object is skipped too.
 */
export function skipUnusable<K>(
  keys: (K | undefined)[],
  problemsOf: (keys: K, index: number) => string[],
): { keys: (K | undefined)[]; skipped: SkippedRow[] } {
  const skipped: SkippedRow[] = [];
  const usable = keys.map((k, i) => {
    const reasons = k === undefined ? ['not a row of named fields'] : problemsOf(k, i);
    if (reasons.length === 0) return k;
    skipped.push({ row: i + 1, reasons });
    return undefined;
  });
  return { keys: usable, skipped };
}

/** Validates `{rows, preview}`: 1 to 1,000 objects, each with something to match on; 400 lists the bad rows. */
export function parseEnrichRequest<K>(
  body: unknown,
  keysOfRow: (row: Record<string, unknown>) => K,
  isEmpty: (keys: K) => boolean,
  need: string,
) {
  const request = readEnrichRequest(body, keysOfRow);
  const keys = request.keys;
  assertMatchable(keys, isEmpty, need);
  return { rows: request.rows, keys, preview: request.preview };
}

/**
 * A copy of a caller's row for an enrichment tool to append its fields to, as `{...input}` would make
 * it (a field set later that the input has keeps its place and takes the new value). Object.assign
 * rather than object spread, about 50 µs less per row here; but assignment would set the prototype
 * for an own field named `__proto__` (JSON.parse makes one), so such a row takes the spread.
 */
export function copyRow(input: Record<string, unknown>): Record<string, unknown> {
  return Object.hasOwn(input, '__proto__') ? { ...input } : Object.assign({}, input);
}

export interface EnrichResult<K extends string> {
  rows?: Record<string, unknown>[];
  /** `skipped` only when rows may be skipped (EnrichOptions), never on REST. */
  summary: { total: number; matched: number; not_found: number; skipped?: number; by: Record<K, number> };
  daily_allowance?: { remaining: number };
  preview?: true;
  sample?: Record<string, unknown>[];
  /** The rows skipped (EnrichOptions.skipUnusable), in order. */
  skipped?: SkippedRow[];
  /** The job recorded in the account's history (EnrichOptions.job). */
  job?: { id: string };
}

/**
 * Which found fields hold contact values, masked in a preview, and
 * which holds the ISO country its phone numbers are read in.
 */
export interface PreviewContacts extends ContactFields {
  country?: string;
}

/**
 * An enrichment tool's answer once each row's match (or none) is known. Matches are taken from the
 * account's daily enrichment allowance. Each output row is the caller's row (copyRow), then
 * `match_status` (matched, not_found, skipped for the rows of `options.skipped`, or daily_limit_reached
 * for matches beyond what the allowance granted) and `matched_by`, then, when matched, the fields `fill`
 * writes. Outside a transaction: each statement of the allowance is atomic, and only the recording of a
 * job (`options.job`, enrichment-jobs.ts) follows it; should that fail, the matches stay counted.
 *
 * A match whose found values name a suppressed person (src/privacy) is answered as not found. Skipped
 * rows were never looked up and count nothing.
 *
 * A preview takes nothing from the allowance and hands nothing out: it answers how many rows match
 * (the summary) and a sample of the first matched rows whose found contact values (`contacts`) are
 * masked (masking.ts); the caller's own fields stay as sent.
 */
export async function enrichmentAnswer<K extends string, M extends { kind: K }>(
  core: Pick<Core, 'sql' | 'db' | 'config' | 'clock'>,
  accountId: string,
  request: { rows: Record<string, unknown>[]; preview: boolean },
  found: (M | undefined)[],
  kinds: readonly K[],
  fill: (row: Record<string, unknown>, match: M) => void,
  contacts: PreviewContacts,
  options: { skipped?: SkippedRow[]; job?: JobOptions } = {},
): Promise<EnrichResult<K>> {
  // A job's file name is checked before anything is counted, so its recording cannot fail on it.
  if (options.job) assertStorable(options.job.fileName, 'fileName');
  // A match about a suppressed person is no match: what was found about them never leaves (src/privacy).
  const filled = found.map((m) => {
    const values: Record<string, unknown> = {};
    if (m) fill(values, m);
    return values;
  });
  const suppressed = await suppressionCheck(core.db, accountId)(filled);
  const matches = found.map((m, i) => (suppressed[i] ? undefined : m));
  const matched = matches.filter(Boolean).length;
  const by = Object.fromEntries(kinds.map((k) => [k, 0])) as Record<K, number>;
  // Rows skipped: never looked up, never counted; reported apart and, in `rows`, as `skipped`.
  const skipped = options.skipped;
  const skips = skipped ? { skipped: skipped.length } : {};
  const reasons = new Map(skipped?.map((s) => [s.row - 1, s.reasons]));
  const notFound = request.rows.length - matched - reasons.size;
  if (request.preview) {
    const sample: Record<string, unknown>[] = [];
    request.rows.forEach((input, i) => {
      const m = matches[i];
      if (!m) return;
      by[m.kind] += 1;
      if (sample.length < PREVIEW_SAMPLE_SIZE) sample.push(previewRow(input, m, fill, contacts));
    });
    return {
      preview: true,
      summary: { total: request.rows.length, matched, not_found: notFound, ...skips, by },
      sample,
      ...(skipped ? { skipped } : {}),
    };
  }
  const { granted, remaining } = await takeAllowance(
    core.sql,
    accountId,
    'enrichment',
    matched,
    core.config.dailyEnrichmentMatches,
    core.clock(),
  );
  let used = 0;
  const entries: JobEntry[] = [];
  const rows = request.rows.map((input, i) => {
    const m = matches[i];
    const row = copyRow(input);
    const taken = m && used < granted ? m : undefined;
    row.match_status = reasons.has(i) ? 'skipped' : !m ? 'not_found' : taken ? 'matched' : 'daily_limit_reached';
    row.matched_by = taken ? taken.kind : null;
    if (taken) {
      used += 1;
      by[taken.kind] += 1;
      fill(row, taken);
    }
    if (options.job)
      entries.push({
        input,
        status: row.match_status as JobEntry['status'],
        matchedBy: taken ? taken.kind : null,
        found: taken ? (filled[i] ?? null) : null,
        ...(reasons.has(i) ? { reasons: reasons.get(i) } : {}),
      });
    return row;
  });
  const summary = { total: rows.length, matched: used, not_found: notFound, ...skips, by };
  const job = options.job && (await recordEnrichmentJob(core, accountId, options.job, summary, entries));
  return {
    rows,
    summary,
    daily_allowance: { remaining },
    ...(skipped ? { skipped } : {}),
    ...(job ? { job: { id: job.id } } : {}),
  };
}

/** A matched row as a preview shows it: the caller's row, then what was found with its contact values masked. */
function previewRow<M extends { kind: string }>(
  input: Record<string, unknown>,
  m: M,
  fill: (row: Record<string, unknown>, match: M) => void,
  contacts: PreviewContacts,
) {
  const row = copyRow(input);
  row.match_status = 'matched';
  row.matched_by = m.kind;
  // Found apart, so only found values are masked; assigned like `fill` writes (a field the row has keeps its place).
  const found: Record<string, unknown> = {};
  fill(found, m);
  const country =
    contacts.country !== undefined && typeof found[contacts.country] === 'string'
      ? (found[contacts.country] as string)
      : undefined;
  maskContacts(found, contacts, country);
  return Object.assign(row, found);
}
