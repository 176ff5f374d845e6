/**
 * Catalog loading: seed a scale into a fresh database, then import a people CSV with the real
 * importer and load the same file with a plain `psql \copy` into an equivalent table, side by side
 * on one Postgres server.
 *
 *   1. Seed `large` (default) into a fresh database, timed per table.
 *   2. Export people from it as an import CSV (`company_domain` instead of `company_id`), and as many
 *      criminal records (a table with two secondary indexes instead of nine: the seeded ones written
 *      again and again with the key suffixed `~2`, `~3`, …).
 *   3. Two fresh targets holding only the companies (copied from the seeded database):
 *      - COPY: a table made `like <table> including all` (same columns, generated key, identity,
 *        primary key, unique key and every secondary index), with a reference column (`company_id`)
 *        turned into the file's text column (`company_domain`), since COPY cannot resolve
 *        references; `psql \copy` loads the file into it with every index in place (the plain-COPY
 *        baseline of the goal). Then, for reference, the same into a copy of that table without its
 *        secondary indexes, followed by their CREATE INDEX (what the importer does on a first load).
 *      - import: `importFile` (the code behind `leadgate import`) into the real table.
 *   4. The same file imported again into the import target: every row unchanged.
 *
 * Into the catalog (`benchCatalogImport`, the default at xlarge): the seeded catalog, kept with
 * --reuse, receives people it does not hold: the first people of the catalog exported with new emails
 * and profile URLs (`….new@domain`, `…-new`), imported with `importFile` through the staging table
 * and upsert (every index in place: the table holds ten times the file), then again (every row
 * unchanged); the disk before and after; then the new people are deleted and the table vacuumed, so
 * the kept catalog holds the seeded rows again (its files keep the space, which later imports reuse).
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import postgres from 'postgres';
import { findDataset, importFile, type Dataset, type ImportPhase, type ImportSummary } from '../../db/import/index.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog, type Scale } from '../../db/seed/index.ts';
import {
  catalogHeading,
  footprint,
  footprintLines,
  n,
  openBenchServer,
  pad,
  peopleAndCompanies,
  progress,
  round,
  seededCatalog,
  serverCpuSecondsOf,
  verdict,
  type BenchServer,
  type CatalogRunHeader,
  type CatalogOptions as KeptCatalogOptions,
  type DatabaseKind,
  type Footprint,
  type Suite,
} from './harness.ts';
import { quoteIdentifier as quote } from '../../db/identifiers.ts';
import { importSuppression } from '../../src/privacy/imports.ts';

export interface CatalogOptions {
  /** Seed scale of the source database. Default `large`. */
  scale?: Scale;
  /** Data rows of the people file (at most the seeded people). Default 1,000,000. */
  people?: number;
  /** Also compare on criminal records (two secondary indexes), as many rows as people (the seeded records repeated with new keys). Default true. */
  fewerIndexes?: boolean;
  /** Seed only companies and people, and skip the comparison on criminal records (for quicker runs). Default false. */
  peopleOnly?: boolean;
  /** Goals: import/COPY ratio and import rows/s. */
  goalRatio?: number;
  goalRowsPerSec?: number;
  /** Progress lines (stderr by default). */
  log?: (line: string) => void;
}

export interface TableTiming {
  dataset: string;
  table: string;
  rows: number;
  seconds: number;
  rowsPerSec: number;
}

export interface SeedFigures {
  scale: Scale;
  rows: number;
  /** seedCatalog wall-clock, its final ANALYZE included. */
  seconds: number;
  rowsPerSec: number;
  tables: TableTiming[];
}

export interface LoadFigures {
  rows: number;
  seconds: number;
  rowsPerSec: number;
}

export interface ImportFigures extends LoadFigures {
  summary: ImportSummary;
  /** Wall-clock seconds per importer phase, in order. */
  phases: { phase: ImportPhase; seconds: number }[];
  /**
   * CPU seconds the load used: the benchmark's Node process, and every process of the embedded
   * Postgres server (read from /proc; absent elsewhere).
   */
  cpu: { node: number; postgres?: number };
}

export type CopyFigures =
  | (LoadFigures & {
      available: true;
      psql: string;
      indexes: number;
      rebuild: LoadFigures & { copySeconds: number; indexSeconds: number };
    })
  | { available: false; reason: string };

/** One file loaded both ways. */
export interface LoadComparison {
  dataset: string;
  table: string;
  file: { rows: number; megabytes: number; exportSeconds: number };
  /** psql \copy of the file into an equivalent table. */
  copy: CopyFigures;
  import: ImportFigures;
  reimport: ImportFigures;
  /** import rows/s ÷ psql COPY (indexes in place) rows/s. */
  ratio: number | null;
  /** import rows/s ÷ psql COPY-then-CREATE-INDEX rows/s. */
  ratioToRebuild: number | null;
}

export interface CatalogResult extends LoadComparison {
  date: string;
  database: DatabaseKind;
  node: string;
  cpus: number;
  seed: SeedFigures;
  /** Companies in the targets (people reference them). */
  companies: number;
  /** The same comparison on a table with fewer indexes (criminal records: two secondary indexes; the seeded ones repeated with new keys). */
  fewerIndexes?: LoadComparison;
  goals: {
    ratio: number;
    rowsPerSec: number;
    ratioMet: boolean | null;
    rowsPerSecMet: boolean;
    copyRowsPerSecMet: boolean | null;
  };
}

const seconds = (start: number) => (performance.now() - start) / 1000;
const rate = (rows: number, secs: number) => Math.round(rows / secs);

const connect = (url: string, max = 4) =>
  postgres(url, { max, onnotice: () => {}, connection: { application_name: 'leadgate-bench' } });

/**
 * Before each timed load: autovacuum workers still busy with an earlier load's table (the seeded
 * tables, the COPY targets) are waited for, up to two minutes, so that none competes for the CPUs;
 * then a checkpoint, so no load pays for the previous one's dirty pages (needs superuser; skipped
 * otherwise).
 */
async function settle(sql: postgres.Sql): Promise<void> {
  const deadline = performance.now() + 120_000;
  while (performance.now() < deadline) {
    const [busy] = await sql<
      { n: number }[]
    >`select count(*)::int as n from pg_stat_activity where backend_type = 'autovacuum worker'`;
    if (busy!.n === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await sql`checkpoint`.catch(() => {});
}

async function columnsOf(sql: postgres.Sql, table: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select column_name as name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table} and is_generated = 'NEVER'
    order by ordinal_position`;
  return rows.map((r) => r.name);
}

/**
 * `COPY … TO STDOUT` into `into`, on a connection of its own: postgres.js 3.4 can leave a
 * connection that served a COPY-out stream unusable for the next query, so it is closed after.
 */
async function copyOut(url: string, statement: string, into: NodeJS.WritableStream): Promise<void> {
  const sql = connect(url, 1);
  try {
    await pipeline(await sql.unsafe(statement).readable(), into);
  } finally {
    await sql.end({ timeout: 1 }).catch(() => {});
  }
}

/** Copies a table's rows between databases with COPY (binary), keeping ids; then its identity, statistics and readiness. */
async function copyTable(
  fromUrl: string,
  from: postgres.Sql,
  to: postgres.Sql,
  table: string,
  dataset: string,
): Promise<number> {
  const columns = (await columnsOf(from, table)).map(quote).join(', ');
  const into = await to.unsafe(`copy ${quote(table)} (${columns}) from stdin with (format binary)`).writable();
  await copyOut(fromUrl, `copy ${quote(table)} (${columns}) to stdout with (format binary)`, into);
  const [row] = await to.unsafe<{ n: number }[]>(`select count(*)::int as n from ${quote(table)}`);
  await to.unsafe(
    `select setval(pg_get_serial_sequence('${table}', 'id'), greatest((select max(id) from ${quote(table)}), 1))`,
  );
  await to.unsafe(`analyze ${quote(table)}`);
  await to`insert into dataset_state (dataset, ready, row_count, refreshed_at) values (${dataset}, true, ${row!.n}, now())
    on conflict (dataset) do update set ready = true, row_count = excluded.row_count, refreshed_at = excluded.refreshed_at`;
  return row!.n;
}

/**
 * A dataset's import file: every import column (a reference as the referenced natural key), `rows`
 * rows in id order. With `repeat`, the table's rows are written again and again until there are
 * `rows`, the natural key suffixed `~2`, `~3`, … so that every row is a new one.
 */
async function exportDataset(
  url: string,
  sql: postgres.Sql,
  name: string,
  file: string,
  rows: number,
  repeat = false,
  /** SQL written instead of a column (alias `t`), by column name. */
  replace: Record<string, string> = {},
): Promise<{ columns: string[]; rows: number }> {
  const dataset = findDataset(name)!;
  const [held] = await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${quote(dataset.table)}`);
  const copies = repeat ? Math.max(1, Math.ceil(rows / Math.max(1, held!.n))) : 1;
  const joins: string[] = [];
  const select = dataset.columns.map((c, i) => {
    if (c.reference) {
      joins.push(
        `left join ${quote(c.reference.table)} r${i} on r${i}.${quote(c.reference.id)} = t.${quote(c.target)}`,
      );
      return `r${i}.${quote(c.reference.column)} as ${quote(c.name)}`;
    }
    if (replace[c.name]) return `${replace[c.name]} as ${quote(c.name)}`;
    if (copies > 1 && c.target === dataset.naturalKey.column)
      return `t.${quote(c.target)} || case when g.n > 1 then '~' || g.n else '' end as ${quote(c.name)}`;
    return `t.${quote(c.target)}`;
  });
  const query = `select ${select.join(', ')} from ${quote(dataset.table)} t ${joins.join(' ')}
    cross join generate_series(1, ${copies}) g(n) order by g.n, t.id limit ${Math.floor(rows)}`;
  await copyOut(url, `copy (${query}) to stdout with (format csv, header true)`, createWriteStream(file));
  return { columns: dataset.columns.map((c) => c.name), rows: Math.min(Math.floor(rows), held!.n * copies) };
}

function run(command: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

async function psqlVersion(): Promise<string | undefined> {
  try {
    const out = await run('psql', ['--version']);
    return out.code === 0 ? out.stdout.trim() : undefined;
  } catch {
    return undefined;
  }
}

/** Runs psql commands in one session; throws with psql's stderr when one fails. */
async function psql(url: string, commands: string[]): Promise<void> {
  const out = await run('psql', [url, '-X', '-q', '-v', 'ON_ERROR_STOP=1', ...commands.flatMap((c) => ['-c', c])]);
  if (out.code !== 0) throw new Error(`psql failed (exit ${out.code}): ${out.stderr.trim()}`);
}

/**
 * `like <table> including all` (columns, generated key, identity, defaults, primary key, every
 * index), with each reference column turned into the file's text column. Returns the secondary
 * indexes' definitions.
 */
async function copyTarget(sql: postgres.Sql, dataset: Dataset, name: string): Promise<string[]> {
  // Scratch tables: autovacuum would only compete with the loads timed after them.
  await sql.unsafe(
    `create table ${quote(name)} (like ${quote(dataset.table)} including all) with (autovacuum_enabled = false)`,
  );
  for (const c of dataset.columns.filter((column) => column.reference)) {
    await sql.unsafe(`alter table ${quote(name)} alter column ${quote(c.target)} type text`);
    await sql.unsafe(`alter table ${quote(name)} rename column ${quote(c.target)} to ${quote(c.name)}`);
  }
  const indexes = await sql<{ definition: string }[]>`
    select pg_get_indexdef(i.indexrelid) as definition from pg_index i join pg_class c on c.oid = i.indexrelid
    where i.indrelid = ${name}::regclass and not i.indisunique and not i.indisprimary order by c.relname`;
  return indexes.map((i) => i.definition);
}

async function benchCopy(
  url: string,
  dataset: Dataset,
  file: string,
  columns: string[],
  rows: number,
): Promise<CopyFigures> {
  const version = await psqlVersion();
  if (!version) return { available: false, reason: 'psql not found on PATH: the plain-COPY baseline was skipped' };
  const sql = connect(url, 1);
  try {
    const copy = (table: string) =>
      `\\copy ${quote(table)} (${columns.map(quote).join(', ')}) from '${file.replaceAll("'", "''")}' with (format csv, header true)`;

    // Every index in place, as the real table has them.
    const plain = `${dataset.table}_csv`;
    const indexes = await copyTarget(sql, dataset, plain);
    await settle(sql);
    let start = performance.now();
    await psql(url, [copy(plain)]);
    const secs = seconds(start);
    const [loaded] = await sql.unsafe<{ n: number }[]>(`select count(*)::int as n from ${quote(plain)}`);
    if (loaded!.n !== rows) throw new Error(`psql \\copy loaded ${loaded!.n} rows, expected ${rows}`);

    // Secondary indexes dropped, then created after the COPY (the importer's first-load strategy),
    // with the importer's maintenance_work_mem.
    const rebuilt = `${dataset.table}_csv_rebuilt`;
    const definitions = await copyTarget(sql, dataset, rebuilt);
    const names = await sql<{ name: string }[]>`
      select c.relname as name from pg_index i join pg_class c on c.oid = i.indexrelid
      where i.indrelid = ${rebuilt}::regclass and not i.indisunique and not i.indisprimary`;
    for (const { name } of names) await sql.unsafe(`drop index ${quote(name)}`);
    await settle(sql);
    start = performance.now();
    await psql(url, [copy(rebuilt)]);
    const copySeconds = seconds(start);
    const indexStart = performance.now();
    await psql(url, [`set maintenance_work_mem = '${IMPORTER_MAINTENANCE_WORK_MEM}'`, ...definitions]);
    const indexSeconds = seconds(indexStart);
    const total = copySeconds + indexSeconds;
    return {
      available: true,
      psql: version,
      rows,
      seconds: round(secs, 2),
      rowsPerSec: rate(rows, secs),
      indexes: indexes.length,
      rebuild: {
        rows,
        seconds: round(total, 2),
        rowsPerSec: rate(rows, total),
        copySeconds: round(copySeconds, 2),
        indexSeconds: round(indexSeconds, 2),
      },
    };
  } finally {
    await sql.end();
  }
}

/** What the importer sets for its index rebuild (kept in step with db/import by hand). */
const IMPORTER_MAINTENANCE_WORK_MEM = '256MB';

async function benchImport(
  sql: postgres.Sql,
  server: Pick<BenchServer, 'cpuSeconds'>,
  dataset: string,
  file: string,
): Promise<ImportFigures> {
  const phases: { phase: ImportPhase; seconds: number }[] = [];
  let current: { phase: ImportPhase; at: number } | undefined;
  const mark = (phase: ImportPhase | undefined) => {
    const now = performance.now();
    if (current && current.phase !== phase)
      phases.push({ phase: current.phase, seconds: round((now - current.at) / 1000, 2) });
    if (phase && current?.phase !== phase) current = { phase, at: now };
  };
  await settle(sql);
  const serverBefore = await server.cpuSeconds();
  const nodeBefore = process.cpuUsage();
  const start = performance.now();
  current = { phase: 'reading', at: start };
  const result = await importFile(sql, {
    dataset,
    file,
    suppressed: importSuppression,
    onProgress: (p) => mark(p.phase),
  });
  const secs = seconds(start);
  const node = process.cpuUsage(nodeBefore);
  const serverAfter = await server.cpuSeconds();
  mark(undefined);
  const rows = result.summary.rows;
  return {
    rows,
    seconds: round(secs, 2),
    rowsPerSec: rate(rows, secs),
    summary: result.summary,
    phases,
    cpu: {
      node: round((node.user + node.system) / 1e6, 1),
      postgres:
        serverBefore === undefined || serverAfter === undefined ? undefined : round(serverAfter - serverBefore, 1),
    },
  };
}

/** Exports `name` from the seeded database, then loads the file with psql \copy and with the importer (twice). */
async function compare(
  name: string,
  rows: number,
  repeat: boolean,
  source: { url: string; sql: postgres.Sql },
  targets: { copyUrl: string; importSql: postgres.Sql; server: BenchServer },
  dir: string,
  log: (line: string) => void,
): Promise<LoadComparison> {
  const dataset = findDataset(name)!;
  const file = path.join(dir, `${name}.csv`);
  log(`exporting ${rows.toLocaleString('en-US')} ${name} to ${file}…`);
  const start = performance.now();
  const exported = await exportDataset(source.url, source.sql, name, file, rows, repeat);
  const exportSeconds = seconds(start);
  const megabytes = round((await stat(file)).size / 1e6, 1);

  log(`${name}: psql \\copy into an equivalent table…`);
  const copy = await benchCopy(targets.copyUrl, dataset, file, exported.columns, exported.rows);
  if (copy.available)
    log(
      `  ${copy.rowsPerSec.toLocaleString('en-US')} rows/s (indexes in place), ${copy.rebuild.rowsPerSec.toLocaleString('en-US')} rows/s (then CREATE INDEX)`,
    );
  else log(`  ${copy.reason}`);
  log(`${name}: importing with importFile…`);
  const imported = await benchImport(targets.importSql, targets.server, name, file);
  log(`  ${imported.rowsPerSec.toLocaleString('en-US')} rows/s`);
  log(`${name}: importing the same file again…`);
  const reimported = await benchImport(targets.importSql, targets.server, name, file);
  log(`  ${reimported.rowsPerSec.toLocaleString('en-US')} rows/s`);
  await rm(file, { force: true });
  return {
    dataset: name,
    table: dataset.table,
    file: { rows: exported.rows, megabytes, exportSeconds: round(exportSeconds, 1) },
    copy,
    import: imported,
    reimport: reimported,
    ratio: copy.available ? round(imported.rowsPerSec / copy.rowsPerSec, 2) : null,
    ratioToRebuild: copy.available ? round(imported.rowsPerSec / copy.rebuild.rowsPerSec, 2) : null,
  };
}

export async function benchCatalog(options: CatalogOptions = {}): Promise<CatalogResult> {
  const scale = options.scale ?? 'large';
  const people = options.people ?? 1_000_000;
  const goalRatio = options.goalRatio ?? 0.5;
  const goalRowsPerSec = options.goalRowsPerSec ?? 50_000;
  const log = options.log ?? progress;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-catalog-'));
  const server = await openBenchServer();
  const pools: postgres.Sql[] = [];
  const open = (url: string, max?: number) => {
    const sql = connect(url, max);
    pools.push(sql);
    return sql;
  };
  try {
    // 1. Seed.
    log(`seeding ${scale} into a fresh ${server.kind} database…`);
    const sourceUrl = await server.createDatabase();
    await migrateDatabase(sourceUrl);
    const source = open(sourceUrl);
    const tables: TableTiming[] = [];
    const start = performance.now();
    const report = await seedCatalog(source, {
      scale,
      tables: options.peopleOnly ? ['person'] : undefined,
      onTable: (t) => {
        tables.push({
          dataset: t.dataset,
          table: t.table,
          rows: t.rows,
          seconds: round(t.ms / 1000, 2),
          rowsPerSec: rate(t.rows, t.ms / 1000),
        });
        log(`  ${t.dataset}: ${t.rows.toLocaleString('en-US')} rows in ${(t.ms / 1000).toFixed(1)} s`);
      },
    });
    const seedSeconds = seconds(start);
    const seedRows = Object.values(report.inserted).reduce((a, b) => a + b, 0);
    // Untimed: what autovacuum would otherwise do to the seeded tables during the loads timed next.
    await source`vacuum`;

    // 2. Two targets holding only the companies.
    log('preparing two targets with the companies only…');
    const copyUrl = await server.createDatabase();
    const importUrl = await server.createDatabase();
    let companies = 0;
    for (const url of [copyUrl, importUrl]) {
      await migrateDatabase(url);
      companies = await copyTable(sourceUrl, source, open(url, 1), 'company', 'companies');
    }
    const targets = { copyUrl, importSql: open(importUrl, 4), server };

    // 3. The files, loaded both ways.
    const main = await compare('people', people, false, { url: sourceUrl, sql: source }, targets, dir, log);
    const fewerIndexes =
      options.fewerIndexes === false || options.peopleOnly
        ? undefined
        : await compare('criminal_records', people, true, { url: sourceUrl, sql: source }, targets, dir, log);

    const ratio = main.ratio;
    const copy = main.copy;
    return {
      ...main,
      date: new Date().toISOString(),
      database: server.kind,
      node: process.version,
      cpus: os.cpus().length,
      seed: { scale, rows: seedRows, seconds: round(seedSeconds, 1), rowsPerSec: rate(seedRows, seedSeconds), tables },
      companies,
      fewerIndexes,
      goals: {
        ratio: goalRatio,
        rowsPerSec: goalRowsPerSec,
        ratioMet: ratio === null ? null : ratio >= goalRatio,
        rowsPerSecMet: main.import.rowsPerSec >= goalRowsPerSec,
        copyRowsPerSecMet: copy.available ? copy.rowsPerSec >= goalRowsPerSec : null,
      },
    };
  } finally {
    await Promise.all(pools.map((sql) => sql.end().catch(() => {})));
    await server.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

export interface CatalogImportOptions extends KeptCatalogOptions {
  /** New people in the file. Default 1,000,000. */
  people?: number;
  log?: (line: string) => void;
}

/** `people` and `companies`: what the catalog held before the import. */
export interface CatalogImportResult extends CatalogRunHeader {
  file: { rows: number; megabytes: number; exportSeconds: number };
  import: ImportFigures;
  reimport: ImportFigures;
  /** Disk and memory before the import and after both imports. */
  footprint: { before: Footprint; after: Footprint };
  /** Deleting the new people and vacuuming the table. */
  cleanupSeconds: number;
}

/** New people imported into the seeded catalog (see the file's comment). */
export async function benchCatalogImport(options: CatalogImportOptions = {}): Promise<CatalogImportResult> {
  const scale = options.scale ?? 'xlarge';
  const people = options.people ?? 1_000_000;
  const log = options.log ?? progress;
  const loadBefore = os.loadavg().map((x) => round(x, 2));
  const seeded = await seededCatalog({ ...options, scale }, log);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-catalog-'));
  const sql = connect(seeded.url, 4);
  const server = { cpuSeconds: () => serverCpuSecondsOf(sql) };
  let lastId: string | undefined;
  try {
    const held = await peopleAndCompanies(sql);
    const [version] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
    const [{ max } = { max: '0' }] = await sql<{ max: string }[]>`select coalesce(max(id), 0)::text as max from person`;
    lastId = max;
    const before = await footprint(sql);

    const file = path.join(dir, 'people.csv');
    log(`exporting ${n(people)} new people to ${file}…`);
    let start = performance.now();
    // Emails keep their domain (company_domain still resolves); no generated local part has two dots or ends in -new.
    const exported = await exportDataset(seeded.url, sql, 'people', file, people, false, {
      email: `regexp_replace(t.email, '@', '.new@')`,
      linkedin_url: `t.linkedin_url || '-new'`,
    });
    const exportSeconds = seconds(start);
    const megabytes = round((await stat(file)).size / 1e6, 1);

    log(`importing them into the ${n(held.people)} people with importFile…`);
    const imported = await benchImport(sql, server, 'people', file);
    log(`  ${n(imported.rowsPerSec)} rows/s`);
    if (imported.summary.inserted !== exported.rows)
      throw new Error(`the import inserted ${imported.summary.inserted} people, expected ${exported.rows} new ones`);
    log('importing the same file again…');
    const reimported = await benchImport(sql, server, 'people', file);
    log(`  ${n(reimported.rowsPerSec)} rows/s`);
    // The row counts of the footprint are the planner's.
    await sql`analyze person`;
    const after = await footprint(sql);
    await rm(file, { force: true });

    log('deleting the new people…');
    start = performance.now();
    await removeNewPeople(sql, lastId);
    lastId = undefined;
    const cleanupSeconds = seconds(start);
    return {
      date: new Date().toISOString(),
      database: seeded.kind,
      postgres: version!.v,
      node: process.version,
      cpus: os.cpus().length,
      loadAverage: { before: loadBefore, after: os.loadavg().map((x) => round(x, 2)) },
      scale,
      people: held.people,
      companies: held.companies,
      seedSeconds: seeded.seedSeconds,
      file: { rows: exported.rows, megabytes, exportSeconds: round(exportSeconds, 1) },
      import: imported,
      reimport: reimported,
      footprint: { before, after },
      cleanupSeconds: round(cleanupSeconds, 1),
    };
  } finally {
    // A failed run still leaves the kept catalog as it was seeded.
    if (lastId !== undefined)
      await removeNewPeople(sql, lastId).catch((err: Error) => log(`could not delete the new people: ${err.message}`));
    await sql.end().catch(() => {});
    await seeded.close().catch(() => {});
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Deletes the people after `lastId`. Nobody received them, so the cascade to delivered_lead is
 * skipped (session_replication_role): per deleted row it would scan that table, whose key starts
 * with the account.
 */
async function removeNewPeople(sql: postgres.Sql, lastId: string): Promise<void> {
  await sql.begin(async (tx) => {
    await tx`set local session_replication_role = replica`;
    await tx`delete from person where id > ${lastId}::bigint`;
  });
  await sql`select setval(pg_get_serial_sequence('person', 'id'), ${lastId}::bigint)`;
  await sql`vacuum (analyze) person`;
}

function comparisonLines(c: LoadComparison, title: string): string[] {
  const w = [54, 8, 9, 7];
  const lines = [title, pad(['load', 's', 'rows/s', '×COPY'], w)];
  const copy = c.copy;
  if (copy.available) {
    lines.push(
      pad(
        [
          `psql \\copy, ${copy.indexes} secondary indexes in place`,
          copy.seconds.toFixed(1),
          n(copy.rowsPerSec),
          '1.00',
        ],
        w,
      ),
    );
    lines.push(
      pad(
        [
          `psql \\copy, then CREATE INDEX ×${copy.indexes} (${copy.rebuild.copySeconds.toFixed(1)} + ${copy.rebuild.indexSeconds.toFixed(1)} s)`,
          copy.rebuild.seconds.toFixed(1),
          n(copy.rebuild.rowsPerSec),
          (copy.rebuild.rowsPerSec / copy.rowsPerSec).toFixed(2),
        ],
        w,
      ),
    );
  } else {
    lines.push(`  (${copy.reason})`);
  }
  const ratioOf = (rowsPerSec: number) => (copy.available ? (rowsPerSec / copy.rowsPerSec).toFixed(2) : 'n/a');
  lines.push(
    pad(
      [
        'leadgate import (importFile), all new',
        c.import.seconds.toFixed(1),
        n(c.import.rowsPerSec),
        ratioOf(c.import.rowsPerSec),
      ],
      w,
    ),
  );
  lines.push(
    pad(
      [
        'leadgate import again, all unchanged',
        c.reimport.seconds.toFixed(1),
        n(c.reimport.rowsPerSec),
        ratioOf(c.reimport.rowsPerSec),
      ],
      w,
    ),
  );
  const phases = (figures: ImportFigures) => figures.phases.map((p) => `${p.phase} ${p.seconds.toFixed(1)}`).join(', ');
  const cpu = (figures: ImportFigures) =>
    `; CPU (s): node ${figures.cpu.node.toFixed(1)}` +
    (figures.cpu.postgres === undefined ? '' : `, postgres ${figures.cpu.postgres.toFixed(1)}`);
  lines.push(`   import phases (s): ${phases(c.import)}${cpu(c.import)}`);
  lines.push(`   again (s): ${phases(c.reimport)}${cpu(c.reimport)}`);
  const summary = (sm: ImportSummary) =>
    `inserted ${n(sm.inserted)}, updated ${n(sm.updated)}, unchanged ${n(sm.unchanged)}, invalid ${n(sm.invalid)}, duplicates ${n(sm.duplicatesInFile)}`;
  lines.push(`   import: ${summary(c.import.summary)}`);
  lines.push(`   again: ${summary(c.reimport.summary)}`);
  return lines;
}

function formatCatalog(result: CatalogResult): string {
  const s = result.seed;
  const sw = [24, 11, 9, 10];
  const lines = [
    `Catalog: seed ${s.scale} into a fresh ${result.database} database`,
    pad(['dataset', 'rows', 's', 'rows/s'], sw),
    ...s.tables.map((t) => pad([t.dataset, n(t.rows), t.seconds.toFixed(1), n(t.rowsPerSec)], sw)),
    pad(['total (with ANALYZE)', n(s.rows), s.seconds.toFixed(1), n(s.rowsPerSec)], sw),
    '',
    ...comparisonLines(
      result,
      `Import ${n(result.file.rows)} people (${result.file.megabytes} MB CSV) into a database holding only its ${n(result.companies)} companies`,
    ),
  ];
  const g = result.goals;
  const c = result.copy;
  lines.push(
    `   import/COPY = ${result.ratio === null ? 'n/a' : `${result.ratio.toFixed(2)}×`} (goal ≥ ${g.ratio}×: ${verdict(g.ratioMet)})` +
      (result.ratioToRebuild === null ? '' : `; against COPY then CREATE INDEX: ${result.ratioToRebuild.toFixed(2)}×`),
  );
  lines.push(
    `   import ${n(result.import.rowsPerSec)} rows/s (goal ≥ ${n(g.rowsPerSec)}: ${verdict(g.rowsPerSecMet)})` +
      (c.available
        ? `; plain COPY itself: ${n(c.rowsPerSec)} rows/s with the indexes in place (${verdict(g.copyRowsPerSecMet)})`
        : ''),
  );
  if (c.available && !g.rowsPerSecMet && g.copyRowsPerSecMet === false) {
    lines.push(
      `   the rate goal is beyond plain COPY on \`${result.table}\` with its ${c.indexes} secondary indexes (COPY then CREATE INDEX: ${n(c.rebuild.rowsPerSec)} rows/s)` +
        (result.fewerIndexes ? '; see the table with fewer indexes below' : ''),
    );
  }
  const f = result.fewerIndexes;
  if (f) {
    lines.push(
      '',
      ...comparisonLines(
        f,
        `Fewer indexes: import ${n(f.file.rows)} criminal records (seeded ones repeated with new keys; ${f.file.megabytes} MB CSV) into the empty \`${f.table}\``,
      ),
    );
    lines.push(
      `   import/COPY = ${f.ratio === null ? 'n/a' : `${f.ratio.toFixed(2)}×`}` +
        (f.ratioToRebuild === null ? '' : `; against COPY then CREATE INDEX: ${f.ratioToRebuild.toFixed(2)}×`) +
        `; import ${n(f.import.rowsPerSec)} rows/s (≥ ${n(g.rowsPerSec)}: ${verdict(f.import.rowsPerSec >= g.rowsPerSec)})`,
    );
  }
  return lines.join('\n');
}

function formatCatalogImport(r: CatalogImportResult): string {
  const w = [40, 8, 9];
  const row = (label: string, f: ImportFigures) => pad([label, f.seconds.toFixed(1), n(f.rowsPerSec)], w);
  const phases = (f: ImportFigures) =>
    `${f.phases.map((p) => `${p.phase} ${p.seconds.toFixed(1)}`).join(', ')}; CPU (s): node ${f.cpu.node.toFixed(1)}` +
    (f.cpu.postgres === undefined ? '' : `, postgres ${f.cpu.postgres.toFixed(1)}`);
  const summary = (sm: ImportSummary) =>
    `inserted ${n(sm.inserted)}, updated ${n(sm.updated)}, unchanged ${n(sm.unchanged)}, invalid ${n(sm.invalid)}`;
  return [
    `Catalog import at ${r.scale}: ${n(r.file.rows)} new people (${r.file.megabytes} MB CSV, exported in ${r.file.exportSeconds} s) into ${n(r.people)} people and ${n(r.companies)} companies`,
    `   (${catalogHeading(r)}; load ${r.loadAverage.before.join(' ')} → ${r.loadAverage.after.join(' ')})`,
    pad(['load', 's', 'rows/s'], w),
    row('leadgate import (importFile), all new', r.import),
    row('leadgate import again, all unchanged', r.reimport),
    `   import phases (s): ${phases(r.import)}`,
    `   again (s): ${phases(r.reimport)}`,
    `   import: ${summary(r.import.summary)}; again: ${summary(r.reimport.summary)}`,
    `   new people deleted again in ${r.cleanupSeconds} s`,
    '',
    'Disk and memory before the import',
    ...footprintLines(r.footprint.before),
    '',
    'Disk and memory after both imports',
    ...footprintLines(r.footprint.after),
  ].join('\n');
}

export const catalogImport: Suite<CatalogImportResult> = {
  name: 'catalog-import',
  key: 'catalogImport',
  run: () => benchCatalogImport(),
  format: formatCatalogImport,
};

export const catalog: Suite<CatalogResult> = {
  name: 'catalog',
  key: 'catalog',
  run: () => benchCatalog(),
  format: formatCatalog,
  goals: (r) => r.goals,
};
