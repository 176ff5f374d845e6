import { freePort } from '../../db/embedded.ts';
import { migrateDatabase } from '../../db/migrate.ts';
import { seedCatalog } from '../../db/seed/index.ts';
import { buildApp, type App } from '../../src/app.ts';
import { loopbackConfig } from '../../src/config.ts';
import { createLogger } from '../../src/logger.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { openBenchServer, type BenchDatabase, type BenchServer } from './env.ts';
import { load, type LoadRound, type LoadTarget } from './load.ts';
import { median, round } from './stats.ts';

export interface LimitsOptions {
  connections: number;
  durationSecs: number;
  warmupSecs: number;
  /** Rounds per variant and workload; ON and OFF alternate, the order flipping every round. */
  rounds: number;
  /** The per-key limit with checks ON: high enough that nothing is refused, so the count still runs. */
  rateLimitPerMinute: number;
  /** The goal: ON at most this many percent slower than OFF (req/s). */
  maxSlowerPct: number;
}

export type VariantKey = 'on' | 'off';

/** How the runs a start round created ended up (checks ON queue them as READY after the 10th). */
export interface StartRoundState {
  runs: Record<string, number>;
  jobs: number;
  ledgerEntries: number;
}

export interface VariantFigures {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  rounds: (LoadRound & { state?: StartRoundState })[];
}

export interface Comparison {
  label: string;
  method: 'GET' | 'POST';
  route: string;
  body?: unknown;
  on: VariantFigures;
  off: VariantFigures;
  /** ON req/s ÷ OFF req/s. */
  ratio: number;
  /** (1 − ratio) × 100. */
  slowerPct: number;
  /** Median of the per-round ON/OFF ratios of rounds run back to back: steadier when the machine's load drifts. */
  pairedRatio: number;
  pairedSlowerPct: number;
  met: boolean;
}

export interface LimitsResult {
  date: string;
  database: BenchDatabase['kind'];
  options: LimitsOptions;
  /** The only difference between the two gateways. */
  variants: Record<VariantKey, { enforceLimits: boolean; rateLimitPerMinute: number }>;
  polling: Comparison;
  starts: Comparison;
}

export interface Variant {
  key: VariantKey;
  app: App;
  baseUrl: string;
  apiKey: string;
  accountId: string;
  /** Wallet balances right after seeding, restored before every start round. */
  wallet: { planMicros: bigint; purchasedMicros: bigint };
}

export const START_ROUTE = '/api/v1/scrape/maps';
export const START_BODY = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 10 };
const WALLET_MICROS = 10n ** 13n;

/** A migrated, seeded database of its own and a gateway without a worker over it, with a rich account. */
export async function startVariant(server: BenchServer, key: VariantKey, rateLimitPerMinute: number): Promise<Variant> {
  const url = await server.createDatabase();
  await migrateDatabase(url);
  const port = await freePort();
  const config = loopbackConfig(url, port, { enforceLimits: key === 'on', rateLimitPerMinute });
  const app = await buildApp({ config, databaseUrl: url, logger: createLogger('silent'), worker: false });
  try {
    await seedCatalog(app.core.sql, { scale: 'small' });
    const { apiKey, account } = await createAccount(app.core.db, { name: `bench-limits-${key}`, plan: 'scale', creditsMicros: WALLET_MICROS });
    const [wallet] = await app.core.sql<{ plan: string; purchased: string }[]>`
      select plan_micros::text as plan, purchased_micros::text as purchased from wallet where account_id = ${account.id}`;
    const baseUrl = await app.start(port, config.host);
    return {
      key,
      app,
      baseUrl,
      apiKey,
      accountId: account.id,
      wallet: { planMicros: BigInt(wallet!.plan), purchasedMicros: BigInt(wallet!.purchased) },
    };
  } catch (err) {
    await app.stop().catch(() => {});
    throw err;
  }
}

export async function request(v: Variant, method: 'GET' | 'POST', route: string, body?: unknown) {
  const response = await fetch(`${v.baseUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${v.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`[${v.key}] ${method} ${route} → ${response.status}: ${text}`);
  return { json: JSON.parse(text) as Record<string, unknown>, rateLimited: response.headers.has('ratelimit') };
}

/** Checks ON must count the request (RateLimit headers present), OFF must not. */
function assertChecks(v: Variant, what: string, rateLimited: boolean) {
  if (rateLimited !== (v.key === 'on')) {
    throw new Error(`[${v.key}] ${what}: RateLimit header ${rateLimited ? 'present' : 'absent'}; the checks are not ${v.key.toUpperCase()}`);
  }
}

/**
 * Empties what start rounds create (runs and their items, hold entries, worker jobs) and puts the
 * wallet back (balances and its count of active runs), so every start round begins from the same state in both variants.
 */
export async function resetRuns(v: Variant) {
  const sql = v.app.core.sql;
  await sql.begin(async (tx) => {
    await tx`truncate run, graphile_worker._private_jobs cascade`;
    await tx`delete from ledger_entry where run_id is not null`;
    // No run is left, so none is active: the next round starts with 10 free slots.
    await tx`update wallet set plan_micros = ${v.wallet.planMicros.toString()}::bigint, purchased_micros = ${v.wallet.purchasedMicros.toString()}::bigint, active_runs = 0
             where account_id = ${v.accountId}`;
  });
  await sql`vacuum analyze run, ledger_entry, wallet, graphile_worker._private_jobs`;
}

async function roundState(v: Variant): Promise<StartRoundState> {
  // One snapshot for all three counts: a start still committing when the round ends is seen whole or not at all.
  return v.app.core.sql.begin('isolation level repeatable read read only', async (sql) => {
    const runs = await sql<{ status: string; n: number }[]>`select status, count(*)::int as n from run group by status order by status`;
    const [jobs] = await sql<{ n: number }[]>`select count(*)::int as n from graphile_worker._private_jobs`;
    const [ledger] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_entry where run_id is not null`;
    return { runs: Object.fromEntries(runs.map((r) => [r.status, r.n])), jobs: jobs!.n, ledgerEntries: ledger!.n };
  });
}

const figures = (rounds: VariantFigures['rounds']): VariantFigures => ({
  reqPerSec: round(median(rounds.map((r) => r.reqPerSec))),
  p50Ms: round(median(rounds.map((r) => r.p50Ms))),
  p99Ms: round(median(rounds.map((r) => r.p99Ms))),
  rounds,
});

/**
 * One workload against both variants: a warm-up each, then `rounds` rounds each, alternating
 * ON/OFF and flipping the order every round (ON OFF, OFF ON, …) so neither always goes first.
 */
async function compare(
  variants: Record<VariantKey, Variant>,
  options: LimitsOptions,
  workload: { label: string; target: (v: Variant) => LoadTarget; before?: (v: Variant) => Promise<void>; after?: (v: Variant) => Promise<StartRoundState> },
) {
  const log = (line: string) => process.stderr.write(`  limits: ${line}\n`);
  for (const key of ['on', 'off'] as const) {
    await workload.before?.(variants[key]);
    await load(workload.target(variants[key]), options.connections, options.warmupSecs);
  }
  const rounds: Record<VariantKey, VariantFigures['rounds']> = { on: [], off: [] };
  for (let i = 0; i < options.rounds; i++) {
    const order: VariantKey[] = i % 2 === 0 ? ['on', 'off'] : ['off', 'on'];
    for (const key of order) {
      const v = variants[key];
      await workload.before?.(v);
      const result: VariantFigures['rounds'][number] = await load(workload.target(v), options.connections, options.durationSecs);
      if (workload.after) result.state = await workload.after(v);
      rounds[key].push(result);
      log(`${workload.label} round ${i + 1} ${key.toUpperCase()}: ${result.reqPerSec} req/s, p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms`);
    }
  }
  const on = figures(rounds.on);
  const off = figures(rounds.off);
  const ratio = on.reqPerSec / off.reqPerSec;
  const slowerPct = round((1 - ratio) * 100);
  const pairedRatio = median(rounds.on.map((r, i) => r.reqPerSec / rounds.off[i]!.reqPerSec));
  return {
    on,
    off,
    ratio: round(ratio, 3),
    slowerPct,
    pairedRatio: round(pairedRatio, 3),
    pairedSlowerPct: round((1 - pairedRatio) * 100),
    met: slowerPct <= options.maxSlowerPct,
  };
}

/** The same gateway with the money and limit checks ON and OFF, each over its own database on one server. */
export async function benchLimits(options: LimitsOptions): Promise<LimitsResult> {
  const server = await openBenchServer();
  const started: Variant[] = [];
  try {
    for (const key of ['on', 'off'] as const) started.push(await startVariant(server, key, options.rateLimitPerMinute));
    const variants = { on: started[0]!, off: started[1]! };
    // Settle both freshly loaded catalogs now rather than under load: autovacuum's visibility-map
    // pass over the COPYed tables and the checkpoint of their pages would otherwise land in early rounds.
    for (const v of started) await v.app.core.sql`vacuum analyze`;
    // CHECKPOINT needs superuser or pg_checkpoint; a DATABASE_URL without them just skips it.
    await started[0]!.app.core.sql`checkpoint`.catch(() => {});

    // Status polling of one run per app; it stays RUNNING (no worker), which the route does not mind.
    const pollRuns = {} as Record<VariantKey, string>;
    for (const v of started) {
      const start = await request(v, 'POST', START_ROUTE, START_BODY);
      assertChecks(v, 'start', start.rateLimited);
      if (start.json.status !== 'RUNNING') throw new Error(`[${v.key}] the first run is ${String(start.json.status)}, expected RUNNING`);
      pollRuns[v.key] = String(start.json.runId);
      const status = await request(v, 'GET', `/api/v1/scrape/status/${pollRuns[v.key]}`);
      assertChecks(v, 'status', status.rateLimited);
    }
    const auth = (v: Variant) => ({ authorization: `Bearer ${v.apiKey}` });
    const polling = await compare(variants, options, {
      label: 'status',
      target: (v) => ({ url: `${v.baseUrl}/api/v1/scrape/status/${pollRuns[v.key]}`, headers: auth(v) }),
    });

    const starts = await compare(variants, options, {
      label: 'start',
      target: (v) => ({
        url: `${v.baseUrl}${START_ROUTE}`,
        method: 'POST',
        headers: { ...auth(v), 'content-type': 'application/json' },
        body: JSON.stringify(START_BODY),
      }),
      before: resetRuns,
      after: roundState,
    });
    // What the last start round of each variant did: ON holds money and queues after 10 RUNNING.
    for (const v of started) {
      const state = (v.key === 'on' ? starts.on : starts.off).rounds.at(-1)!.state!;
      const holds = state.ledgerEntries;
      if (v.key === 'on' && (holds === 0 || (state.runs.READY ?? 0) === 0)) {
        throw new Error(`[on] start round left ${JSON.stringify(state)}: expected holds and READY (queued) runs`);
      }
      if (v.key === 'off' && (holds !== 0 || (state.runs.READY ?? 0) !== 0 || state.jobs !== state.runs.RUNNING)) {
        throw new Error(`[off] start round left ${JSON.stringify(state)}: expected only RUNNING runs, one job each, no holds`);
      }
    }

    return {
      date: new Date().toISOString(),
      database: server.kind,
      options,
      variants: {
        on: { enforceLimits: true, rateLimitPerMinute: options.rateLimitPerMinute },
        off: { enforceLimits: false, rateLimitPerMinute: options.rateLimitPerMinute },
      },
      polling: { label: 'status polling', method: 'GET', route: '/api/v1/scrape/status/:runId', ...polling },
      starts: { label: 'run start', method: 'POST', route: START_ROUTE, body: START_BODY, ...starts },
    };
  } finally {
    for (const v of started) await v.app.stop().catch((err: unknown) => console.error(`[${v.key}] stop:`, err));
    await server.close();
  }
}
