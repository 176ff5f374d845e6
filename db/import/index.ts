import { createReadStream } from 'node:fs';
import { rm, stat, writeFile } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import type postgres from 'postgres';
import type { Sql } from '../client.ts';
import { DATASET_NAMES, findDataset, type Dataset } from './datasets.ts';
import { CsvToCopy, FileError, NdjsonToCopy, RowEncoder, type DirectRows, type RowError } from './encode.ts';
import { finishFirstLoad, prepareFirstLoad, type FirstLoad } from './first-load.ts';
import { dropIndexes, restoreIndexes, type Dropped, type Run } from './indexes.ts';
import { show } from './kinds.ts';
import { escapeFormula } from '../csv-cells.ts';
import { quoteIdentifier as quote } from '../identifiers.ts';
import { oneRow } from '../rows.ts';

export { DATASET_NAMES, DATASETS, findDataset, type Dataset } from './datasets.ts';
export type { RowError } from './encode.ts';

export type ImportFormat = 'csv' | 'ndjson';

export interface ImportSummary {
  dataset: string;
  /** Data rows in the file (header and blank lines not counted). */
  rows: number;
  inserted: number;
  updated: number;
  /** Rows whose target row already held exactly these values. */
  unchanged: number;
  /** Bad rows (reported, never loaded). */
  invalid: number;
  /** Rows replaced by a later row with the same natural key in the same file. */
  duplicatesInFile: number;
  /** Rows about people on the deployment's suppression list, left out (ImportOptions.suppressed). */
  suppressed: number;
}

/**
 * The application's suppression rule (src/privacy/imports.ts), as an import calls it: no catalog import
 * may bring back a person on the deployment's suppression list. Read through the import's transaction.
 */
export interface SuppressedRows {
  /** Whether the list holds anything at all (when not, no row is read back). */
  any(tx: postgres.TransactionSql): Promise<boolean>;
  /** Which of `rows` (column name to value) are about suppressed people. */
  check(tx: postgres.TransactionSql, rows: Record<string, unknown>[]): Promise<boolean[]>;
}

export interface ImportResult {
  summary: ImportSummary;
  /** Bad rows skipped with `skipInvalid`, by line. */
  errors: RowError[];
  /** Where the bad rows were written, when there were any. */
  errorsFile?: string;
}

export type ImportPhase = 'reading' | 'checking references' | 'removing duplicates' | 'applying' | 'rebuilding indexes';

export interface ImportProgress {
  phase: ImportPhase;
  /** Data rows read so far. */
  rows: number;
}

export interface ImportOptions {
  /** CLI name of the dataset, e.g. `people`. */
  dataset: string;
  file: string;
  /** Defaults from the file name: `.csv`, else `.ndjson`/`.jsonl`. */
  format?: ImportFormat;
  /** Load the good rows even when some are bad (bad rows are still reported). */
  skipInvalid?: boolean;
  /** Where to write bad rows as CSV (line,reason); default `<file>.errors.csv`. */
  errorsFile?: string;
  signal?: AbortSignal;
  onProgress?: (progress: ImportProgress) => void;
  /**
   * Whether the table's indexes may be dropped while loading and built again after, in the same
   * transaction (readers of the table then wait for the import to commit). With `auto` (default)
   * or `true`, an empty table is loaded that way straight from the file (a first load, see
   * first-load.ts). Into a table holding rows, `auto` drops its secondary indexes when the file
   * brings at least 10,000 rows and the table holds at most a tenth of that, `true` always.
   * `false`: never; every import goes through the staging table and the upsert.
   */
  rebuildIndexes?: 'auto' | boolean;
  /**
   * How long the import transaction may sit idle (the reader or a hook stalled) before the database
   * ends it and lets go of the table's locks; default 30 s. The import then fails, nothing loaded.
   */
  idleLimitMs?: number;
  /** The suppression rule: rows about suppressed people are left out and counted. */
  suppressed: SuppressedRows;
  /** Runs inside the import transaction once the rows are applied, just before commit. */
  beforeCommit?: (tx: postgres.TransactionSql) => Promise<void> | void;
}

export class ImportError extends Error {}

/** The file was refused: bad rows (without `skipInvalid`) or a bad header; nothing was loaded. */
export class ImportRejected extends ImportError {
  constructor(
    message: string,
    readonly summary: ImportSummary,
    readonly errors: RowError[],
    readonly errorsFile: string,
  ) {
    super(message);
  }
}

export class ImportAborted extends ImportError {
  constructor() {
    super('import interrupted; nothing was loaded');
  }
}

/** The import transaction's session ended: the connection was lost, or it sat idle past `idleLimitMs`. */
export class ImportConnectionLost extends ImportError {
  constructor(limitMs: number) {
    super(
      `the database ended the import's session (connection lost, or idle for more than ${limitMs / 1000} s); ` +
        'nothing was loaded',
    );
  }
}

const STAGING = 'leadgate_import_staging';
const IDLE_LIMIT_MS = 30_000;
const REBUILD_MIN_ROWS = 10_000;
/** Indexes are rebuilt when the table holds at most 1/REBUILD_RATIO of the rows the file brings. */
const REBUILD_RATIO = 10;

export function formatOf(file: string): ImportFormat {
  const lower = file.toLowerCase();
  if (lower.endsWith('.csv')) return 'csv';
  if (lower.endsWith('.ndjson') || lower.endsWith('.jsonl')) return 'ndjson';
  throw new ImportError(`cannot tell the format of ${file}: name it .csv or .ndjson (or pass the format)`);
}

function emptySummary(dataset: string): ImportSummary {
  return { dataset, rows: 0, inserted: 0, updated: 0, unchanged: 0, invalid: 0, duplicatesInFile: 0, suppressed: 0 };
}

/** Bad rows in line order, one entry per line. */
function byLine(errors: RowError[]): RowError[] {
  const merged = new Map<number, string>();
  for (const error of [...errors].sort((a, b) => a.line - b.line)) {
    const before = merged.get(error.line);
    merged.set(error.line, before === undefined ? error.reason : `${before}; ${error.reason}`);
  }
  return [...merged].map(([line, reason]) => ({ line, reason }));
}

async function writeErrors(path: string, errors: RowError[]): Promise<void> {
  // Reasons quote the file's values: escaped like every CSV the house writes.
  await writeFile(
    path,
    stringify(
      errors.map((e) => ({ line: e.line, reason: escapeFormula(e.reason) })),
      { header: true, columns: ['line', 'reason'] },
    ),
  );
}

/** SQL of one dataset's import, built once from its descriptor. */
function statements(dataset: Dataset) {
  const table = quote(dataset.table);
  const inputs = dataset.columns;
  const staging = [
    'line integer not null',
    ...inputs.map((c) => `${quote(c.name)} ${c.codec.sqlType}`),
    ...dataset.computed.map((c) => `${quote(c.name)} text`),
  ];
  const targets = [
    ...inputs.map((c) => c.target),
    ...dataset.computed.map((c) => c.name),
    ...dataset.copied.map((c) => c.name),
  ];
  const joins: string[] = [];
  const values = [
    ...inputs.map((c, i) => {
      if (c.reference) {
        joins.push(
          `${c.required ? 'join' : 'left join'} ${quote(c.reference.table)} r${i}
            on r${i}.${quote(c.reference.column)} = s.${quote(c.name)}`,
        );
        return `r${i}.${quote(c.reference.id)}`;
      }
      return c.defaultSql ? `coalesce(s.${quote(c.name)}, ${c.defaultSql})` : `s.${quote(c.name)}`;
    }),
    ...dataset.computed.map((c) => `s.${quote(c.name)}`),
    // Copied from the row the reference joined above names.
    ...dataset.copied.map((c) => c.sql.replaceAll('ref.', `r${inputs.findIndex((input) => input.target === c.via)}.`)),
  ];
  const updated = targets.filter((name) => name !== dataset.naturalKey.column).map(quote);
  const onConflict =
    updated.length === 0
      ? 'do nothing'
      : `do update set ${updated.map((c) => `${c} = excluded.${c}`).join(', ')}
         where (${updated.map((c) => `t.${c}`).join(', ')}) is distinct
           from (${updated.map((c) => `excluded.${c}`).join(', ')})`;
  const key = dataset.naturalKey.sql;
  // Staged rows whose target row already holds exactly their values: left out of the upsert, which
  // would otherwise lock (and WAL-log) every such row only to find it unchanged.
  // `targets` and `values` are in the same order.
  const compared = targets.flatMap((name, i) => {
    const value = values[i];
    return name === dataset.naturalKey.column || value === undefined ? [] : [{ name, value }];
  });
  const unchanged =
    compared.length === 0
      ? `exists (select 1 from ${table} u where u.${quote(dataset.naturalKey.column)} = ${key})`
      : `exists (select 1 from ${table} u where u.${quote(dataset.naturalKey.column)} = ${key}
           and (${compared.map((c) => `u.${quote(c.name)}`).join(', ')}) is not distinct
             from (${compared.map((c) => c.value).join(', ')}))`;
  return {
    createStaging: `create temporary table ${STAGING} (${staging.join(', ')}) on commit drop`,
    copy:
      `copy ${STAGING} ` +
      `(${['line', ...inputs.map((c) => c.name), ...dataset.computed.map((c) => c.name)].map(quote).join(', ')}) ` +
      'from stdin',
    /** Rows whose reference is unknown, found (or, when skipping, deleted) in staging. */
    missingReferences: inputs.flatMap((c) =>
      c.reference
        ? [
            {
              column: c,
              reference: c.reference,
              where: `s.${quote(c.name)} is not null and not exists (select 1 from ${quote(c.reference.table)} r
                where r.${quote(c.reference.column)} = s.${quote(c.name)})`,
            },
          ]
        : [],
    ),
    dedupe: `delete from ${STAGING} s using (
        select key, max(line) as keep from (select ${key} as key, s.line from ${STAGING} s) k group by key
          having count(*) > 1
      ) d where ${key} = d.key and s.line <> d.keep`,
    /** The first-load path: the table is empty and nobody else can write it, so nothing can conflict. */
    // In line order, so new rows get their ids in file order (a join may return them in another).
    insert: `insert into ${table} (${targets.map(quote).join(', ')})
        select ${values.join(', ')} from ${STAGING} s ${joins.join(' ')} order by s.line`,
    apply: `with applied as (
        insert into ${table} as t (${targets.map(quote).join(', ')})
        select ${values.join(', ')} from ${STAGING} s ${joins.join(' ')}
        where not ${unchanged}
        order by s.line
        on conflict (${quote(dataset.naturalKey.column)}) ${onConflict}
        returning (t.xmax = 0) as inserted
      ) select count(*) filter (where inserted)::int as inserted, count(*) filter (where not inserted)::int as updated
        from applied`,
    isEmpty: `select not exists (select 1 from ${table}) as empty`,
    sampleCount: `select count(*)::int as n from (select 1 from ${table} limit $1) t`,
  };
}

/** Bad rows found before anything was applied (the transaction is rolled back). */
class Refused extends Error {
  constructor(
    readonly summary: ImportSummary,
    readonly errors: RowError[],
  ) {
    super('refused');
  }
}

/**
 * `COPY … FROM STDIN` as a Writable that always settles. postgres.js 3.4 never finishes its COPY
 * writable when the server refuses the data after the last chunk (porsager/postgres#1173), so the
 * outcome is read from a query queued right behind the COPY: it fails when the COPY failed.
 */
export async function copyIn(
  tx: postgres.TransactionSql,
  statement: string,
  into = 'the staging table',
): Promise<Writable> {
  const copy = await tx.unsafe(statement).writable();
  const wrapper = new Writable({
    highWaterMark: 1 << 20,
    write(chunk: Buffer, _encoding, callback) {
      copy.write(chunk, callback);
    },
    final(callback) {
      copy.end();
      tx`select 1`.then(
        () => callback(),
        (err: unknown) => callback(new Error(`the database refused the rows copied into ${into}`, { cause: err })),
      );
    },
    destroy(err, callback) {
      if (!copy.destroyed) copy.destroy(err ?? undefined);
      callback(err);
    },
  });
  // A refusal that arrives while rows are still being written reads the same as one after the last.
  copy.on('error', (err) =>
    wrapper.destroy(new Error(`the database refused the rows copied into ${into}`, { cause: err })),
  );
  return wrapper;
}

interface Loaded {
  summary: ImportSummary;
  errors: RowError[];
}

/** Rows read back and checked at a time when leaving out suppressed people. */
const SUPPRESSION_CHUNK = 5_000;

/**
 * Deletes from `relation` (the staging table, keyed by `line`, or the table a first load filled, by
 * `id`) the rows the suppression rule names, a chunk at a time in key order; answers how many.
 */
async function leaveOutSuppressed(
  tx: postgres.TransactionSql,
  run: Run,
  relation: string,
  key: 'line' | 'id',
  rule: SuppressedRows,
): Promise<number> {
  if (!(await rule.any(tx))) return 0;
  let left = 0;
  let after = '-1';
  for (;;) {
    const rows = await run(
      tx.unsafe<{ key: string; row: Record<string, unknown> }[]>(
        `select ${key}::text as key, to_jsonb(s) - '${key}' as row from ${relation} s
         where ${key} > $1 order by ${key} limit ${SUPPRESSION_CHUNK}`,
        [after],
      ),
    );
    const last = rows.at(-1);
    if (!last) return left;
    const suppressed = await rule.check(
      tx,
      rows.map((r) => r.row),
    );
    const keys = rows.filter((_, i) => suppressed[i]).map((r) => r.key);
    if (keys.length > 0) {
      await run(tx.unsafe(`delete from ${relation} where ${key}::text = any($1::text[])`, [keys]));
      left += keys.length;
    }
    after = last.key;
  }
}

async function load(sql: Sql, dataset: Dataset, format: ImportFormat, options: ImportOptions): Promise<Loaded> {
  const q = statements(dataset);
  const signal = options.signal;
  const idleLimit = options.idleLimitMs ?? IDLE_LIMIT_MS;
  let encoder: RowEncoder | undefined;
  const progress = (phase: ImportPhase) => options.onProgress?.({ phase, rows: encoder?.rows ?? 0 });
  let running: { cancel(): unknown } | undefined;
  const cancel = () => void running?.cancel();
  signal?.addEventListener('abort', cancel);
  const run: Run = async (query) => {
    signal?.throwIfAborted();
    running = query;
    try {
      return await query;
    } finally {
      running = undefined;
    }
  };

  /**
   * Streams the file into `statement`'s COPY, every row validated and encoded on the way (overlapping with the COPY).
   */
  const read = async (tx: postgres.TransactionSql, statement: string, direct?: DirectRows): Promise<RowEncoder> => {
    const rows = new RowEncoder(dataset, direct);
    encoder = rows;
    const copy = await copyIn(tx, statement, direct ? `the ${dataset.table} table` : undefined);
    const reader =
      format === 'csv'
        ? new CsvToCopy(rows, () => progress('reading'))
        : new NdjsonToCopy(rows, () => progress('reading'));
    await pipeline(createReadStream(options.file, { highWaterMark: 1 << 20 }), reader, copy, { signal });
    if (format === 'csv' && !rows.headerRead) throw new FileError(1, 'the file is empty: a header row is required');
    return rows;
  };

  /** Into an empty table: straight into it, then its indexes (see first-load.ts). */
  const loadFirst = async (tx: postgres.TransactionSql, first: FirstLoad): Promise<Loaded> => {
    const rows = await read(tx, first.copy, first.rows);
    const errors = byLine(rows.errors);
    const summary: ImportSummary = { ...emptySummary(dataset.name), rows: rows.rows, invalid: errors.length };
    if (errors.length > 0 && !options.skipInvalid) throw new Refused(summary, errors);
    progress('rebuilding indexes');
    summary.duplicatesInFile = await finishFirstLoad(tx, run, dataset, first, (removing) =>
      progress(removing ? 'removing duplicates' : 'rebuilding indexes'),
    );
    summary.suppressed = await leaveOutSuppressed(tx, run, quote(dataset.table), 'id', options.suppressed);
    summary.inserted = rows.staged - summary.duplicatesInFile - summary.suppressed;
    return { summary, errors };
  };

  /** Through the staging table: references resolved, duplicates removed, then one upsert. */
  const loadStaged = async (tx: postgres.TransactionSql): Promise<Loaded> => {
    await tx.unsafe(q.createStaging);
    const rows = await read(tx, q.copy);

    progress('checking references');
    const badReferences: RowError[] = [];
    for (const check of q.missingReferences) {
      const name = quote(check.column.name);
      const found = await run(
        tx.unsafe<{ line: number; value: string }[]>(
          options.skipInvalid
            ? `delete from ${STAGING} s where ${check.where} returning s.line, s.${name} as value`
            : `select s.line, s.${name} as value from ${STAGING} s where ${check.where}`,
        ),
      );
      const ref = check.reference;
      for (const row of found) {
        badReferences.push({
          line: row.line,
          reason: `${check.column.name}: no ${ref.table} has ${ref.column} ${show(row.value)}`,
        });
      }
    }
    const errors = byLine([...rows.errors, ...badReferences]);
    const summary: ImportSummary = { ...emptySummary(dataset.name), rows: rows.rows, invalid: errors.length };
    if (errors.length > 0 && !options.skipInvalid) throw new Refused(summary, errors);

    progress('removing duplicates');
    summary.duplicatesInFile = (await run(tx.unsafe(q.dedupe))).count;
    summary.suppressed = await leaveOutSuppressed(tx, run, STAGING, 'line', options.suppressed);
    const distinct =
      rows.staged - new Set(badReferences.map((e) => e.line)).size - summary.duplicatesInFile - summary.suppressed;

    let rebuilding = false;
    const mode = options.rebuildIndexes ?? 'auto';
    if (mode === true || (mode === 'auto' && distinct >= REBUILD_MIN_ROWS)) {
      const held = await run(tx.unsafe<{ n: number }[]>(q.sampleCount, [Math.floor(distinct / REBUILD_RATIO) + 1]));
      rebuilding = mode === true || oneRow(held, 'a count of the rows held').n * REBUILD_RATIO <= distinct;
    }
    progress('applying');
    let dropped: Dropped = { indexes: [], foreignKeys: [] };
    let empty = false;
    if (rebuilding) {
      // From here until commit, nobody else reads or writes the table.
      await run(tx.unsafe(`lock table ${quote(dataset.table)} in access exclusive mode`));
      empty = oneRow(await run(tx.unsafe<{ empty: boolean }[]>(q.isEmpty)), 'whether the table is empty').empty;
      dropped = await dropIndexes(tx, run, dataset, empty);
    }
    if (empty) {
      // The table emptied after the first-load check: the staged rows are distinct on the natural
      // key, so a plain INSERT (no arbiter index, no per-row conflict check) inserts every one.
      summary.inserted = (await run(tx.unsafe(q.insert))).count;
    } else {
      const applied = oneRow(await run(tx.unsafe<{ inserted: number; updated: number }[]>(q.apply)), 'the upsert');
      summary.inserted = applied.inserted;
      summary.updated = applied.updated;
    }
    if (dropped.indexes.length > 0 || dropped.foreignKeys.length > 0) {
      progress('rebuilding indexes');
      await restoreIndexes(tx, run, dataset, dropped);
    }
    summary.unchanged = distinct - summary.inserted - summary.updated;
    return { summary, errors };
  };

  try {
    return await sql.begin(async (tx) => {
      await tx.unsafe(`set local work_mem = '64MB'`);
      await tx.unsafe(`set local maintenance_work_mem = '256MB'`);
      // A stalled client must not keep the dataset's tables locked: the database ends the session.
      await tx.unsafe(`set local idle_in_transaction_session_timeout = ${Math.max(1, Math.round(idleLimit))}`);
      const first = options.rebuildIndexes === false ? undefined : await prepareFirstLoad(tx, run, dataset);
      const loaded = first ? await loadFirst(tx, first) : await loadStaged(tx);
      await options.beforeCommit?.(tx);
      signal?.throwIfAborted();
      return loaded;
    });
  } catch (err) {
    if (signal?.aborted) throw new ImportAborted();
    if (connectionLost(err)) throw new ImportConnectionLost(idleLimit);
    throw err;
  } finally {
    signal?.removeEventListener('abort', cancel);
  }
}

/**
 * Imports a CSV or NDJSON file into a catalog dataset, all or nothing: every row is validated and
 * streamed with COPY into a temporary staging table, references are resolved there, in-file
 * duplicates are reduced to their last row, and one upsert on the natural key applies the rest, in
 * a single transaction. Into an empty table the rows are copied straight into it instead, with its
 * indexes built after (first-load.ts), still in that one transaction. The dataset is marked not ready (committed at
 * once, so readers see it) for the duration, and ready again afterwards with its row count, whatever the outcome. `sql`
 * needs room for two connections: one holds the dataset's import lock and readiness, one the transaction.
 */
export async function importFile(sql: Sql, options: ImportOptions): Promise<ImportResult> {
  const dataset = findDataset(options.dataset);
  if (!dataset)
    throw new ImportError(`unknown dataset "${options.dataset}"; expected one of ${DATASET_NAMES.join(', ')}`);
  const format = options.format ?? formatOf(options.file);
  const errorsFile = options.errorsFile ?? `${options.file}.errors.csv`;
  const info = await stat(options.file).catch((err: NodeJS.ErrnoException) => {
    throw new ImportError(`cannot read ${options.file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`);
  });
  if (!info.isFile()) throw new ImportError(`cannot read ${options.file}: not a file`);
  if ((sql.options.max ?? 1) < 2) throw new ImportError('importFile needs a connection pool of at least 2 connections');
  options.signal?.throwIfAborted();

  const control = await sql.reserve();
  try {
    const lock = oneRow(
      await control`select pg_try_advisory_lock(hashtext('leadgate.import'), hashtext(${dataset.name})) as locked`,
      'the import lock',
    );
    if (!lock.locked) throw new ImportError(`another import of ${dataset.name} is running`);
    try {
      await control`insert into dataset_state (dataset, ready) values (${dataset.name}, false)
        on conflict (dataset) do update set ready = false`;
      let loaded: Loaded;
      try {
        loaded = await load(sql, dataset, format, options);
      } catch (err) {
        await markReady(control, dataset).catch(() => {});
        if (err instanceof Refused) {
          await writeErrors(errorsFile, err.errors);
          const message =
            `${err.errors.length} invalid row${err.errors.length === 1 ? '' : 's'}; ` +
            `nothing was loaded (see ${errorsFile})`;
          throw new ImportRejected(message, err.summary, err.errors, errorsFile);
        }
        if (err instanceof FileError) {
          const errors = [{ line: err.line, reason: err.message }];
          await writeErrors(errorsFile, errors);
          throw new ImportRejected(
            `the file was refused (line ${err.line}); nothing was loaded (see ${errorsFile})`,
            emptySummary(dataset.name),
            errors,
            errorsFile,
          );
        }
        throw err;
      }
      await markReady(control, dataset);
      if (loaded.errors.length > 0) await writeErrors(errorsFile, loaded.errors);
      else await rm(errorsFile, { force: true });
      return {
        summary: loaded.summary,
        errors: loaded.errors,
        errorsFile: loaded.errors.length > 0 ? errorsFile : undefined,
      };
    } finally {
      await control`select pg_advisory_unlock(hashtext('leadgate.import'), hashtext(${dataset.name}))`.catch(() => {});
    }
  } finally {
    control.release();
  }
}

async function markReady(sql: postgres.ReservedSql, dataset: Dataset): Promise<void> {
  await sql.unsafe(
    `insert into dataset_state (dataset, ready, row_count, refreshed_at)
     values ($1, true, (select count(*) from ${quote(dataset.table)}), now())
     on conflict (dataset) do update set ready = true, row_count = excluded.row_count,
       refreshed_at = excluded.refreshed_at`,
    [dataset.name],
  );
}

/** Whether `err` is the import transaction's connection closing under it (postgres.js's code). */
function connectionLost(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === 'CONNECTION_CLOSED';
}
