import { pipeline, Readable } from 'node:stream';
import { stringify } from 'csv-stringify';
import { z } from 'zod';
import type { Sql } from '../../db/client.ts';
import { escapeFormula } from '../../db/csv-cells.ts';
import { TERMINAL_STATUSES, type Run } from '../../db/tables/runs.ts';
import type { Core } from '../core.ts';
import { NotReplayed } from '../catalog/reader.ts';
import type { Column, Row } from '../tools/types.ts';
import { AppError } from '../shared/errors.ts';
import { MAX_INT4, rowOffset } from '../shared/params.ts';
import { isTerminal } from './view.ts';
import { type SheetCell, xlsxStream } from './xlsx.ts';

export const EXPORT_FORMATS = ['csv', 'json', 'ndjson', 'xlsx'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

/** Query of a download: the format, and optionally a range of rows (a page of a large run). */
export const downloadParams = z
  .object({
    format: z
      .preprocess(
        (v) => (typeof v === 'string' ? v.toLowerCase() : v),
        z.enum(EXPORT_FORMATS, { message: `format must be one of ${EXPORT_FORMATS.join(', ')}` }),
      )
      .default('csv')
      .describe('File format; default csv.'),
    // A row's position is a Postgres integer: offsets and limits past 2^31 − 1 are refused, not sent to a query.
    offset: rowOffset(z.coerce.number()).default(0).describe('Rows to skip; default 0.'),
    limit: z.coerce
      .number()
      .int('must be a whole number')
      .min(1, 'must be at least 1')
      .max(MAX_INT4, `must be at most ${MAX_INT4}`)
      .optional()
      .describe('Rows at most; default all.'),
  })
  .loose();
export type DownloadParams = z.output<typeof downloadParams>;

/** Query of a dataset's export: the format. */
export const datasetExportParams = downloadParams.pick({ format: true }).strict();

/** The media type each format is sent as. */
export const CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export { escapeFormula };

/** A value as text: lists joined with "; ", objects as "key: value; …"; null and undefined as "". */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  const part = (v: unknown) => (typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v));
  if (Array.isArray(value)) return value.map(part).join('; ');
  if (typeof value === 'object')
    return Object.entries(value as Record<string, unknown>)
      .map(([k, v]) => `${k}: ${part(v)}`)
      .join('; ');
  return String(value);
}

/** One CSV cell: `cellText`, formula-escaped (numbers and booleans are never formulas). */
export function toCell(value: unknown): string {
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  return escapeFormula(cellText(value));
}

/**
 * One XLSX cell: numbers and booleans as such, the rest as `cellText`. A sheet's text cell is never
 * run as a formula, so it is not escaped.
 */
export function toSheetCell(value: unknown): SheetCell {
  if (typeof value === 'number' || typeof value === 'boolean') return value;
  if (value === null || value === undefined) return null;
  return cellText(value);
}

/** 410 `results_expired` from a run's `expiresAt` on (48 hours after it ended): no face reads its rows after that. */
export function assertNotExpired(run: { id: string; expiresAt: Date | string | null }, now = new Date()) {
  if (run.expiresAt === null) return;
  const expiresAt = new Date(run.expiresAt);
  if (expiresAt <= now) {
    throw new AppError(
      410,
      'results_expired',
      `Results of run ${run.id} expired at ${expiresAt.toISOString()}; results are kept for 48 hours.`,
    );
  }
}

/** Checks a run may be downloaded now: finished, not expired. */
export function assertDownloadable(run: Run, now = new Date()) {
  if (!isTerminal(run.status)) {
    throw new AppError(
      409,
      'run_not_finished',
      `Run ${run.id} is ${run.status}; poll GET /api/v1/scrape/status/${run.id} until it is SUCCEEDED, then download.`,
    );
  }
  assertNotExpired(run, now);
}

/**
 * The run's rows from `range.offset`, read in batches. A finished run's rows are numbered 0 to
 * itemCount − 1 and never change, so the read must yield at least `expected` rows: fewer means it was
 * cut short (a database session ended under it, which a driver may report as a plain end), and that is
 * an error of the file, never a shorter file that looks whole. On the read replica, rows come only from
 * a copy of the run that has ended there too, checked in the same statement (one snapshot): the worker
 * commits a run's end with or after its last rows and a standby replays commits in order, so that copy
 * is whole. A replica that has not replayed the end yields no rows and says so (`NotReplayed`).
 */
/** The rows a range of an ended run holds: its `limit`, or fewer where the run's rows end. */
export const rowsInRange = (itemCount: number, range: { offset: number; limit?: number }) =>
  Math.min(range.limit ?? Infinity, Math.max(0, itemCount - range.offset));

/**
 * A condition true when the run whose id `runId` gives has ended on the server `sql` reads: a replica's
 * copy of a run's rows is whole once it shows the run's end.
 */
export const endedOnServer = (sql: Sql, runId: ReturnType<Sql>) =>
  sql`exists (select 1 from run where id = ${runId} and status in ${sql([...TERMINAL_STATUSES])})`;

async function* itemRows(
  sql: Sql,
  runId: string,
  range: { offset: number; limit?: number },
  expected: number,
  onReplica: boolean,
): AsyncGenerator<Row> {
  const limit = range.limit === undefined ? sql`` : sql`limit ${range.limit}`;
  const ended = onReplica ? sql`and ${endedOnServer(sql, sql`${runId}`)}` : sql``;
  const cursor = sql`select seq, data from run_item where run_id = ${runId} and seq >= ${range.offset} ${ended}
      order by seq ${limit}`.cursor(500);
  let read = 0;
  for await (const batch of cursor) {
    for (const { seq, data } of batch) {
      // The primary goes on from the rows yielded so far: the replica's must have no gap.
      if (onReplica && seq !== range.offset + read)
        throw new NotReplayed(`the replica has row ${seq} of run ${runId} before row ${range.offset + read}`);
      read += 1;
      yield data as Row;
    }
  }
  if (read >= expected) return;
  if (onReplica) throw new NotReplayed(`the replica has ${read} of ${expected} rows of run ${runId}`);
  throw new Error(`the rows of run ${runId} ended after ${read} of ${expected}`);
}

/**
 * Where a run's rows are read: the primary's client, or the core, whose catalog reader reads a finished
 * run's rows on the read replica when the replica has them all (a run in flight is read on the primary).
 */
export type RowSource = Sql | Pick<Core, 'sql' | 'catalogReader'>;

function rowsOf(
  from: RowSource,
  run: Run,
  range: { offset: number; limit?: number },
  expected: number,
): AsyncIterable<Row> {
  if (typeof from === 'function') return itemRows(from, run.id, range, expected, false);
  if (!isTerminal(run.status)) return itemRows(from.sql, run.id, range, expected, false);
  return from.catalogReader.stream((sql, skipped, onReplica) =>
    itemRows(
      sql,
      run.id,
      { offset: range.offset + skipped, limit: range.limit === undefined ? undefined : range.limit - skipped },
      expected - skipped,
      onReplica,
    ),
  );
}

/**
 * Up to `range.limit` of a finished run's rows from `range.offset`, read as its downloads read them (MCP's
 * download_results).
 */
export async function readRunRows(
  core: Pick<Core, 'sql' | 'catalogReader'>,
  run: Run,
  range: { offset: number; limit: number },
): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const row of rowsOf(core, run, range, rowsInRange(run.itemCount, range))) rows.push(row);
  return rows;
}

async function* jsonChunks(rows: AsyncIterable<Row>, format: 'json' | 'ndjson'): AsyncGenerator<string> {
  // The first row is read before the first byte (`[` too), so a query that fails at once fails the request, not the
  // file.
  let first = true;
  for await (const row of rows) {
    yield format === 'json' ? `${first ? '[' : ','}\n${JSON.stringify(row)}` : `${JSON.stringify(row)}\n`;
    first = false;
  }
  if (format === 'json') yield first ? '[]\n' : '\n]\n';
}

/**
 * Streams a run's rows (all, or the range asked for) from Postgres in `format`; CSV has a header row of the tool's
 * columns.
 */
export function exportRun(
  from: RowSource,
  run: Run,
  columns: Column[],
  format: ExportFormat,
  range: { offset: number; limit?: number } = { offset: 0 },
) {
  const rows = rowsOf(from, run, range, rowsInRange(run.itemCount, range));
  return exportRows(rows, columns, format, run.fileName ?? `${run.tool}-${run.id}`);
}

/** Rows as a file in `format` named after `name`; CSV and XLSX have a header row of the columns. */
export function exportRows(rows: AsyncIterable<Row>, columns: Column[], format: ExportFormat, name: string) {
  let body: Readable;
  if (format === 'xlsx') {
    const records = (async function* () {
      for await (const row of rows) yield Object.fromEntries(columns.map((c) => [c.key, toSheetCell(row[c.key])]));
    })();
    body = xlsxStream(records, columns, name);
  } else if (format === 'csv') {
    const csv = stringify({
      header: true,
      columns: columns.map((c) => ({ key: c.key, header: c.header })),
      bom: false,
    });
    const records = Readable.from(
      (async function* () {
        for await (const row of rows) yield Object.fromEntries(columns.map((c) => [c.key, toCell(row[c.key])]));
      })(),
    );
    body = pipeline(records, csv, () => {});
  } else {
    body = Readable.from(jsonChunks(rows, format));
  }
  const base = name.replace(/[^A-Za-z0-9._-]+/g, '_');
  return {
    body,
    contentType: CONTENT_TYPES[format],
    fileName: `${base}.${format}`,
  };
}

/**
 * `exportRun`, once the file's first bytes are ready (or it has ended): a failure before them (the
 * first read of the rows) rejects, so the caller can still answer an error status; a failure after
 * them is an error of the stream, after the status was sent (the caller must then break the transfer).
 */
export async function openExport(...args: Parameters<typeof exportRun>): Promise<ReturnType<typeof exportRun>> {
  return opened(exportRun(...args));
}

/** A file once its first bytes are ready (or it has ended); a failure before them rejects. */
export async function opened<F extends { body: Readable }>(file: F): Promise<F> {
  const { body } = file;
  await new Promise<void>((resolve, reject) => {
    const settle = (err?: Error) => {
      body.off('readable', ready).off('end', ready).off('error', settle);
      if (err) reject(err);
      else resolve();
    };
    const ready = () => settle();
    body.once('readable', ready).once('end', ready).once('error', settle);
  });
  return file;
}
