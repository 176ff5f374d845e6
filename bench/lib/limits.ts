/**
 * `limits`: the money and limit checks on the request path. The same gateway twice, ON
 * (`enforceLimits`, the per-key rate limit raised so nothing is refused but every request still
 * counted) against OFF, each over its own database with the small catalog on one Postgres server, no
 * worker: status polling of a run, and run starts (ON holds money and queues runs after the 10th).
 */
import { JOBS } from '../../src/workers/jobs.ts';
import {
  BENCH_RATE_LIMIT_PER_MINUTE,
  compareLoad,
  gatewayTarget,
  median,
  openBenchServer,
  pad,
  request,
  round,
  startGateway,
  verdict,
  type Gateway,
  type LoadFigures,
  type LoadOptions,
  type LoadRound,
  type Suite,
} from './harness.ts';

export interface LimitsOptions extends LoadOptions {
  /** The per-key limit with checks ON: high enough that nothing is refused, so the count still runs. */
  rateLimitPerMinute: number;
  /** The goal: ON at most this many percent slower than OFF (req/s). */
  maxSlowerPct: number;
}

const OPTIONS: LimitsOptions = {
  connections: 20,
  durationSecs: 8,
  warmupSecs: 2,
  rounds: 4,
  rateLimitPerMinute: BENCH_RATE_LIMIT_PER_MINUTE,
  maxSlowerPct: 15,
};
const START_ROUTE = '/api/v1/scrape/maps';
const START_BODY = { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 10 };

type VariantKey = 'on' | 'off';
const KEYS: VariantKey[] = ['on', 'off'];

/** How the runs a start round created ended up (checks ON queue them as READY after the 10th). */
export interface StartRoundState {
  runs: Record<string, number>;
  jobs: number;
  ledgerEntries: number;
}

export interface Comparison {
  label: string;
  method: 'GET' | 'POST';
  route: string;
  body?: unknown;
  on: LoadFigures<LoadRound & { state?: StartRoundState }>;
  off: LoadFigures<LoadRound & { state?: StartRoundState }>;
  /** ON req/s ÷ OFF req/s, and (1 − ratio) × 100. */
  ratio: number;
  slowerPct: number;
  /** Median of the per-round ON/OFF ratios of rounds run back to back: steadier when the machine's load drifts. */
  pairedRatio: number;
  pairedSlowerPct: number;
  met: boolean;
}

export interface LimitsResult {
  date: string;
  options: LimitsOptions;
  /** The only difference between the two gateways. */
  variants: Record<VariantKey, { enforceLimits: boolean; rateLimitPerMinute: number }>;
  polling: Comparison;
  starts: Comparison;
}

interface Variant extends Gateway {
  key: VariantKey;
  /** Wallet balances right after seeding, restored before every start round. */
  wallet: { plan: string; purchased: string };
}

/**
 * Empties what start rounds create (runs and their items, hold entries, worker jobs) and puts the
 * wallet back (balances and its count of active runs), so every start round begins alike in both variants.
 */
async function resetRuns(v: Variant) {
  const sql = v.app.core.sql;
  await sql.begin(async (tx) => {
    // The truncate first: it waits for starts still committing from the last round, whose jobs the
    // next statement then sees. Jobs go through graphile-worker's public API (every job of a run carries
    // the run id as its key; no worker runs here).
    await tx`truncate run cascade`;
    await tx`select graphile_worker.remove_job(key) from graphile_worker.jobs where key is not null`;
    await tx`delete from ledger_entry where run_id is not null`;
    await tx`update wallet set plan_micros = ${v.wallet.plan}::bigint, purchased_micros = ${v.wallet.purchased}::bigint, active_runs = 0
             where account_id = ${v.accountId}`;
  });
  await sql`vacuum analyze run, ledger_entry, wallet`;
}

/** One snapshot for all three counts: a start still committing when the round ends is seen whole or not at all. */
function roundState(v: Variant): Promise<StartRoundState> {
  return v.app.core.sql.begin('isolation level repeatable read read only', async (sql) => {
    const runs = await sql<
      { status: string; n: number }[]
    >`select status, count(*)::int as n from run group by status order by status`;
    // Runs' jobs only: one per RUNNING run is the promise; other tasks (housekeeping) may sit in the queue too.
    const [jobs] = await sql<
      { n: number }[]
    >`select count(*)::int as n from graphile_worker.jobs where task_identifier = ${JOBS.runTool}`;
    const [ledger] = await sql<{ n: number }[]>`select count(*)::int as n from ledger_entry where run_id is not null`;
    return { runs: Object.fromEntries(runs.map((r) => [r.status, r.n])), jobs: jobs!.n, ledgerEntries: ledger!.n };
  });
}

/** Checks ON must count the request (RateLimit headers present), OFF must not. */
function assertChecks(v: Variant, what: string, headers: Headers) {
  if (headers.has('ratelimit') !== (v.key === 'on'))
    throw new Error(
      `[${v.key}] ${what}: RateLimit header ${headers.has('ratelimit') ? 'present' : 'absent'}; the checks are not ${v.key.toUpperCase()}`,
    );
}

async function compare(
  variants: Record<VariantKey, Variant>,
  label: string,
  target: (v: Variant) => ReturnType<typeof gatewayTarget>,
  hooks: { before?: (v: Variant) => Promise<void>; after?: (v: Variant) => Promise<StartRoundState> } = {},
) {
  const figures = await compareLoad({ on: target(variants.on), off: target(variants.off) }, OPTIONS, {
    before: hooks.before && ((key) => hooks.before!(variants[key])),
    after: hooks.after && ((key) => hooks.after!(variants[key])),
    log: (key, i, r) =>
      process.stderr.write(
        `  limits: ${label} round ${i + 1} ${key.toUpperCase()}: ${r.reqPerSec} req/s, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms\n`,
      ),
  });
  const ratio = figures.on.reqPerSec / figures.off.reqPerSec;
  const slowerPct = round((1 - ratio) * 100);
  const pairedRatio = median(figures.on.rounds.map((r, i) => r.reqPerSec / figures.off.rounds[i]!.reqPerSec));
  return {
    ...figures,
    ratio: round(ratio, 3),
    slowerPct,
    pairedRatio: round(pairedRatio, 3),
    pairedSlowerPct: round((1 - pairedRatio) * 100),
    met: slowerPct <= OPTIONS.maxSlowerPct,
  };
}

export const limits: Suite<LimitsResult> = {
  name: 'limits',
  key: 'limits',
  async run() {
    const server = await openBenchServer();
    const started: Variant[] = [];
    try {
      for (const key of KEYS) {
        const gw = await startGateway({
          server,
          seed: true,
          config: { enforceLimits: key === 'on', rateLimitPerMinute: OPTIONS.rateLimitPerMinute },
          account: { name: `bench-limits-${key}`, creditsMicros: 10n ** 13n },
        });
        const [wallet] = await gw.app.core.sql<{ plan: string; purchased: string }[]>`
          select plan_micros::text as plan, purchased_micros::text as purchased from wallet where account_id = ${gw.accountId}`;
        started.push({ ...gw, key, wallet: wallet! });
      }
      const variants = { on: started[0]!, off: started[1]! };
      // Settle both freshly loaded catalogs now rather than under load (autovacuum's visibility-map
      // pass, the checkpoint of their pages); CHECKPOINT needs superuser or pg_checkpoint, else skipped.
      for (const v of started) await v.app.core.sql`vacuum analyze`;
      await started[0]!.app.core.sql`checkpoint`.catch(() => {});

      // Status polling of one run per gateway; it stays RUNNING (no worker), which the route does not mind.
      const pollRuns = {} as Record<VariantKey, string>;
      for (const v of started) {
        const start = await request(v, 'POST', START_ROUTE, START_BODY);
        assertChecks(v, 'start', start.headers);
        if (start.json.status !== 'RUNNING')
          throw new Error(`[${v.key}] the first run is ${String(start.json.status)}, expected RUNNING`);
        pollRuns[v.key] = String(start.json.runId);
        assertChecks(v, 'status', (await request(v, 'GET', `/api/v1/scrape/status/${pollRuns[v.key]}`)).headers);
      }
      const polling = await compare(variants, 'status', (v) =>
        gatewayTarget(v, 'GET', `/api/v1/scrape/status/${pollRuns[v.key]}`),
      );
      const starts = await compare(variants, 'start', (v) => gatewayTarget(v, 'POST', START_ROUTE, START_BODY), {
        before: resetRuns,
        after: roundState,
      });

      // What the last start round of each variant did: ON holds money and queues after 10 RUNNING.
      for (const v of started) {
        const state = starts[v.key].rounds.at(-1)!.state!;
        const ready = state.runs.READY ?? 0;
        if (v.key === 'on' && (state.ledgerEntries === 0 || ready === 0))
          throw new Error(`[on] start round left ${JSON.stringify(state)}: expected holds and READY (queued) runs`);
        if (v.key === 'off' && (state.ledgerEntries !== 0 || ready !== 0 || state.jobs !== state.runs.RUNNING)) {
          throw new Error(
            `[off] start round left ${JSON.stringify(state)}: expected only RUNNING runs, one job each, no holds`,
          );
        }
      }
      return {
        date: new Date().toISOString(),
        options: OPTIONS,
        variants: {
          on: { enforceLimits: true, rateLimitPerMinute: OPTIONS.rateLimitPerMinute },
          off: { enforceLimits: false, rateLimitPerMinute: OPTIONS.rateLimitPerMinute },
        },
        polling: { label: 'status polling', method: 'GET', route: '/api/v1/scrape/status/:runId', ...polling },
        starts: { label: 'run start', method: 'POST', route: START_ROUTE, body: START_BODY, ...starts },
      };
    } finally {
      for (const v of started) await v.close().catch((err: unknown) => console.error(`[${v.key}] stop:`, err));
      await server.close();
    }
  },
  format(r) {
    const o = r.options;
    const w = [40, 9, 10, 8, 8];
    const rows = (c: Comparison) => [
      pad([`${c.method} ${c.route}`, 'ON', c.on.reqPerSec, c.on.p50Ms, c.on.p99Ms], w),
      pad(['', 'OFF', c.off.reqPerSec, c.off.p50Ms, c.off.p99Ms], w),
      `   ON/OFF = ${c.ratio.toFixed(3)}×, ${c.slowerPct.toFixed(1)} % slower   (goal ≤ ${o.maxSlowerPct} %: ${verdict(c.met)})`,
      `   median of back-to-back round ratios: ${c.pairedRatio.toFixed(3)}×, ${c.pairedSlowerPct.toFixed(1)} % slower`,
      `   rounds ON: ${c.on.rounds.map((x) => x.reqPerSec).join(', ')} req/s   OFF: ${c.off.rounds.map((x) => x.reqPerSec).join(', ')} req/s`,
    ];
    const state = (key: VariantKey) => {
      const s = r.starts[key].rounds.at(-1)?.state;
      if (!s) return '';
      return `${Object.entries(s.runs)
        .map(([status, count]) => `${count} ${status}`)
        .join(' + ')}, ${s.jobs} jobs, ${s.ledgerEntries} hold entries`;
    };
    return [
      `3. Money and limit checks on the request path: ON (enforceLimits, rate limit ${o.rateLimitPerMinute.toExponential(0)}/min, never refusing) vs OFF,`,
      `   own database each on one server, no worker; ${o.connections} connections, ${o.rounds} × ${o.durationSecs} s per variant alternated (ON OFF, OFF ON, …), medians`,
      pad(['workload', 'checks', 'req/s', 'p50 ms', 'p99 ms'], w),
      ...rows(r.polling),
      ...rows(r.starts),
      `   last start round left  ON: ${state('on')}`,
      `                         OFF: ${state('off')}`,
    ].join('\n');
  },
  goals: (r) => ({ maxSlowerPct: r.options.maxSlowerPct, pollingMet: r.polling.met, startsMet: r.starts.met }),
};
