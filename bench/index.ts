import { mkdir, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { BENCH_RATE_LIMIT_PER_MINUTE, startBenchEnv, type BenchEnv } from './lib/env.ts';
import { benchLimits, type Comparison, type LimitsOptions, type LimitsResult } from './lib/limits.ts';
import { benchCatalog, formatCatalog, type CatalogResult } from './lib/catalog.ts';
import { benchDatabase, formatDatabase, type DatabaseResult } from './lib/database.ts';
import { benchEmail, formatEmail, type EmailBenchResult } from './lib/email.ts';
import { benchTools, formatTools, type ToolsResult } from './lib/tools.ts';
import { benchPolling, type PollingResult } from './lib/polling.ts';
import { benchProgress, type ProgressResult } from './lib/progress.ts';
import { benchSubscribers, formatSubscribers, type SubscribersOptions, type SubscribersResult } from './lib/subscribers.ts';

const POLLING = { connections: 20, durationSecs: 8, warmupSecs: 2, rounds: 2 };
const PROGRESS = { runs: 30, warmups: 3, rows: 100 };
const LIMITS: LimitsOptions = { connections: 20, durationSecs: 8, warmupSecs: 2, rounds: 4, rateLimitPerMinute: BENCH_RATE_LIMIT_PER_MINUTE, maxSlowerPct: 15 };
const SUBSCRIBERS: SubscribersOptions = { subscribers: 1000, paces: [{ paceMs: 100, events: 100 }, { paceMs: 500, events: 30 }], rounds: 2, warmupEvents: 10, concurrency: 50, goalP95Ms: 100 };
const GOALS = { pollingRatio: 0.5, firstProgressP50Ms: 50, limitsMaxSlowerPct: LIMITS.maxSlowerPct, emailChecksPerSec: 100 };

/** Suites in the order `npm run bench` runs them; `--only a,b` picks some. */
const SUITES = ['polling', 'progress', 'limits', 'catalog', 'database', 'email', 'tools', 'subscribers'] as const;
type Suite = (typeof SUITES)[number];

const USAGE = `usage: npm run bench [-- --only <suite>[,<suite>…]]   suites: ${SUITES.join(', ')} (default: all; catalog, database and tools seed the large catalog and take minutes)`;

function parseArgs(argv: string[]): Set<Suite> {
  const picked: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--help' || arg === '-h') {
      console.log(USAGE);
      process.exit(0);
    }
    let value: string | undefined;
    if (arg === '--only') value = argv[++i];
    else if (arg.startsWith('--only=')) value = arg.slice('--only='.length);
    else throw new Error(`unknown argument "${arg}"\n${USAGE}`);
    if (!value) throw new Error(`--only needs a suite name\n${USAGE}`);
    picked.push(...value.split(',').map((s) => s.trim()).filter(Boolean));
  }
  for (const name of picked) {
    if (!(SUITES as readonly string[]).includes(name)) throw new Error(`unknown suite "${name}"\n${USAGE}`);
  }
  return new Set((picked.length > 0 ? picked : SUITES) as Suite[]);
}

const pad = (cells: (string | number)[], widths: number[]) =>
  cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]!) : String(c).padStart(widths[i]!))).join('  ');
const verdict = (ok: boolean) => (ok ? 'met' : 'MISSED');

function pollingTable(polling: PollingResult): string {
  const pw = [40, 10, 8, 8];
  const { rest, bare } = polling;
  const o = polling.options;
  return [
    `1. Status polling: ${o.connections} connections, ${o.rounds} × ${o.durationSecs} s per target alternated, medians`,
    pad(['target', 'req/s', 'p50 ms', 'p99 ms'], pw),
    pad([`A ${rest.label}`, rest.reqPerSec, rest.p50Ms, rest.p99Ms], pw),
    pad([`B ${bare.label}`, bare.reqPerSec, bare.p50Ms, bare.p99Ms], pw),
    `   A/B = ${polling.ratio.toFixed(2)}×   (goal ≥ ${GOALS.pollingRatio}×: ${verdict(polling.ratio >= GOALS.pollingRatio)})`,
    `   rounds A: ${rest.rounds.map((r) => r.reqPerSec).join(', ')} req/s   B: ${bare.rounds.map((r) => r.reqPerSec).join(', ')} req/s`,
  ].join('\n');
}

function progressTable(progress: ProgressResult): string {
  const lw = [28, 8, 8, 8];
  return [
    `2. ${progress.options.rows}-row maps run over graphql-ws: ${progress.options.runs} runs after ${progress.options.warmups} warm-ups, from just before POST`,
    pad(['event', 'p50 ms', 'p90 ms', 'max ms'], lw),
    pad(['start response (POST)', progress.startResponse.p50, progress.startResponse.p90, progress.startResponse.max], lw),
    pad(['first progress (handled>0)', progress.firstProgress.p50, progress.firstProgress.p90, progress.firstProgress.max], lw),
    pad(['SUCCEEDED', progress.succeeded.p50, progress.succeeded.p90, progress.succeeded.max], lw),
    `   goal p50 first progress < ${GOALS.firstProgressP50Ms} ms: ${verdict(progress.firstProgress.p50 < GOALS.firstProgressP50Ms)}`,
  ].join('\n');
}

function limitsTable(limits: LimitsResult): string {
  const o = limits.options;
  const w = [40, 9, 10, 8, 8];
  const rows = (c: Comparison) => [
    pad([`${c.method} ${c.route}`, 'ON', c.on.reqPerSec, c.on.p50Ms, c.on.p99Ms], w),
    pad(['', 'OFF', c.off.reqPerSec, c.off.p50Ms, c.off.p99Ms], w),
    `   ON/OFF = ${c.ratio.toFixed(3)}×, ${c.slowerPct.toFixed(1)} % slower   (goal ≤ ${o.maxSlowerPct} %: ${verdict(c.met)})`,
    `   median of back-to-back round ratios: ${c.pairedRatio.toFixed(3)}×, ${c.pairedSlowerPct.toFixed(1)} % slower`,
    `   rounds ON: ${c.on.rounds.map((r) => r.reqPerSec).join(', ')} req/s   OFF: ${c.off.rounds.map((r) => r.reqPerSec).join(', ')} req/s`,
  ];
  const state = (c: Comparison, key: 'on' | 'off') => {
    const s = c[key].rounds.at(-1)?.state;
    if (!s) return '';
    const runs = Object.entries(s.runs).map(([status, n]) => `${n} ${status}`).join(' + ');
    return `${runs}, ${s.jobs} jobs, ${s.ledgerEntries} hold entries`;
  };
  return [
    `3. Money and limit checks on the request path: ON (enforceLimits, rate limit ${o.rateLimitPerMinute.toExponential(0)}/min, never refusing) vs OFF,`,
    `   own database each on one server, no worker; ${o.connections} connections, ${o.rounds} × ${o.durationSecs} s per variant alternated (ON OFF, OFF ON, …), medians`,
    pad(['workload', 'checks', 'req/s', 'p50 ms', 'p99 ms'], w),
    ...rows(limits.polling),
    ...rows(limits.starts),
    `   last start round left  ON: ${state(limits.starts, 'on')}`,
    `                         OFF: ${state(limits.starts, 'off')}`,
  ].join('\n');
}

interface Results {
  date?: string;
  node?: string;
  cpus?: number;
  database?: string;
  /** Suites this run measured. */
  suites?: Suite[];
  /** When each suite's figures were measured (suites not run keep their earlier figures). */
  measuredAt?: Partial<Record<Suite, string>>;
  goals?: Record<string, unknown>;
  polling?: PollingResult;
  progress?: ProgressResult;
  limits?: LimitsResult;
  catalog?: CatalogResult;
  databaseApis?: DatabaseResult;
  email?: EmailBenchResult;
  tools?: ToolsResult;
  subscribers?: SubscribersResult;
}

async function readPrevious(file: URL): Promise<Results> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as Results;
  } catch {
    return {};
  }
}

async function main() {
  const suites = parseArgs(process.argv.slice(2));
  const header = (database: string) => `leadgate bench: ${database} Postgres, node ${process.version}, ${os.cpus().length} CPUs`;
  const fresh: Results = {};
  const tables: string[] = [];
  let database: string | undefined;

  if (suites.has('polling') || suites.has('progress')) {
    const env: BenchEnv = await startBenchEnv();
    database = env.database.kind;
    try {
      if (suites.has('polling')) fresh.polling = await benchPolling(env, POLLING);
      if (suites.has('progress')) fresh.progress = await benchProgress(env, PROGRESS);
    } finally {
      await env.close();
    }
    if (fresh.polling) tables.push(pollingTable(fresh.polling));
    if (fresh.progress) tables.push(progressTable(fresh.progress));
  }
  if (suites.has('limits')) {
    fresh.limits = await benchLimits(LIMITS);
    database = fresh.limits.database;
    tables.push(limitsTable(fresh.limits));
  }
  if (suites.has('catalog')) {
    fresh.catalog = await benchCatalog();
    tables.push(formatCatalog(fresh.catalog));
  }
  if (suites.has('database')) {
    fresh.databaseApis = await benchDatabase();
    tables.push(formatDatabase(fresh.databaseApis));
  }
  if (suites.has('email')) {
    fresh.email = await benchEmail();
    tables.push(formatEmail(fresh.email, GOALS.emailChecksPerSec));
  }
  if (suites.has('tools')) {
    fresh.tools = await benchTools();
    tables.push(formatTools(fresh.tools));
  }
  if (suites.has('subscribers')) {
    fresh.subscribers = await benchSubscribers(SUBSCRIBERS);
    database ??= fresh.subscribers.database;
    tables.push(formatSubscribers(fresh.subscribers));
  }
  console.log([header(database ?? 'embedded'), ...tables].join('\n\n'));

  // Suites not run this time keep their previous figures, dated in `measuredAt`.
  const dir = new URL('./results/', import.meta.url);
  await mkdir(dir, { recursive: true });
  const file = new URL('latest.json', dir);
  const previous = await readPrevious(file);
  const merged: Results = { ...previous, ...fresh };
  const goals: Record<string, unknown> = { ...GOALS };
  if (merged.polling) goals.pollingRatioMet = merged.polling.ratio >= GOALS.pollingRatio;
  if (merged.progress) goals.firstProgressP50Met = merged.progress.firstProgress.p50 < GOALS.firstProgressP50Ms;
  if (merged.limits) {
    goals.limitsPollingMet = merged.limits.polling.met;
    goals.limitsStartsMet = merged.limits.starts.met;
  }
  if (merged.email) goals.emailChecksPerSecMet = merged.email.smtp.validator.perSec >= GOALS.emailChecksPerSec;
  if (merged.subscribers) {
    goals.subscribersP95Ms = merged.subscribers.options.goalP95Ms;
    goals.subscribersP95Met = Object.fromEntries(merged.subscribers.paces.map((p) => [`every ${p.paceMs} ms`, p.goalMet]));
  }
  const now = new Date().toISOString();
  const measuredAt = { ...previous.measuredAt };
  if (!previous.measuredAt && previous.date) {
    if (previous.polling) measuredAt.polling = previous.date;
    if (previous.progress) measuredAt.progress = previous.date;
  }
  for (const suite of suites) measuredAt[suite] = now;
  const results: Results = {
    date: now,
    node: process.version,
    cpus: os.cpus().length,
    database: database ?? previous.database,
    suites: [...suites],
    measuredAt,
    goals,
    polling: merged.polling,
    progress: merged.progress,
    limits: merged.limits,
    catalog: merged.catalog,
    databaseApis: merged.databaseApis,
    email: merged.email,
    tools: merged.tools,
    subscribers: merged.subscribers,
  };
  await writeFile(file, `${JSON.stringify(results, null, 2)}\n`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
