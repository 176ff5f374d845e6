/**
 * `destinations`: a run's rows delivered to HubSpot as contacts by `runDelivery` (the `deliver_rows`
 * job's body), against the local HubSpot fake (test/helpers/fakes/hubspot.ts) set to HubSpot's published
 * rate limit. Issue "destinations": 10,000 contacts at 90 % or more of what the limit allows, the
 * gateway's memory flat.
 *
 *   - The limit: a private app on a Professional account, 190 requests every 10 s, rolling
 *     (`TEN_SECONDLY_ROLLING`; the fake's default is Free/Starter's 100; test/fixtures/hubspot/SOURCES.md,
 *     Rate limits), and at most 100 inputs a batch upsert: it allows 190 × 100 ÷ 10 s = 1,900 contacts/s.
 *   - 10,000 contacts are 100 requests, fewer than one window holds: at the published window the
 *     delivery never meets the limit (`published`, reported). The goal is read where the limit binds:
 *     `scaled`, the same rate in a 1 s window (19 requests a second), where 100 requests span 5.3 windows,
 *     as 100,000 contacts (1,000 requests) would at 10 s. What a client loses per window (the time it
 *     takes to send the window's requests, the wait after a 429) is the same share of the window at both.
 *   - `unlimited` (1,000,000 requests a second): the delivery's own pace, its time per batch.
 *   - `memory` and `memory-2000` (unlimited): 10,000 and 2,000 contacts with the heap sampled after
 *     `gc()`, what the delivery holds live (the sampled heap without it is mostly garbage: a page of
 *     1,000 rows outlives a few scavenges and is promoted, so its peak follows the delivery's length).
 *
 * One process for the fakes (bench/lib/hubspot-process.ts: a fake per limit, so its contacts and CPU are
 * not the gateway's; its contacts forgotten before each delivery), a gateway per fake (`startGateway`, no
 * worker; databases on one Postgres). Before the timed deliveries, for each: a private app of its own (so
 * its window starts empty), its connection (`POST /api/v1/connections/token`, which checks the token with
 * one request, out of the window before the delivery starts) and destination (`POST
 * /api/v1/destinations`, `hubspot_contacts`, the default mapping: 8 fields of a maps row), a finished maps
 * run written directly (all 19 columns, an email of its own on every row), its delivery queued by
 * `queueDeliveries` as a run's end queues it (no worker: the job stays queued). Timed: the call of
 * `runDelivery(core, id)` in this process (as the job calls it) to its return, a round of each case in
 * rotating order. Checked: the delivery succeeded with every row sent and created, and the fake holds
 * them. From the fake's log: upserts answered, 429s, the time from each 429 to the next answer, a batch
 * (the mean time between two answers in a row), and the idle time: after each 429, from when the
 * window's oldest request left it to the next answer, less a batch; the ratio without it. The fakes'
 * process's CPU. Memory of this process, which runs the delivery: heap settled (`gc()` twice) before,
 * `heapUsed` and RSS every 250 ms during, settled after; the heap's slope over the second half.
 *
 * Each limited case simulated at its own time a batch, one batch after another on the rolling window:
 * waiting a whole window after a 429 (as the code does), and sending as soon as the oldest request
 * leaves the window. A batch in parts, against `unlimited`, medians of 100 sequential calls each:
 * `accessTokenOf` (the token read each batch does), `upsertHubspotContacts` (client, fake, answer; the
 * fake's CPU beside it) and the least an acknowledgement commits (the delivery's row updated in a
 * transaction of its own); the rest of a batch is reading rows, mapping them and the acknowledgement.
 *
 * Goals: `scaled` contacts/s ÷ 1,900 ≥ 0.90 (median of rounds); the heap's peak − settled start ≤ 30 MB
 * at 10,000 contacts, and the live heap's at 10,000 ≤ 5 MB above 2,000's (rows held would add 8,000
 * parsed rows, 10 MB and more). `--contacts N` (default 10,000; the small case stays 2,000); `--quick`:
 * one round.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import v8 from 'node:v8';
import { runInNewContext } from 'node:vm';
import { eq, sql } from 'drizzle-orm';
import { deliveryTable } from '../../db/tables/destinations.ts';
import { destinations as destinationsConfig } from '../../src/config/destinations.ts';
import { accessTokenOf } from '../../src/destinations/connections.ts';
import { runDelivery } from '../../src/destinations/deliveries.ts';
import { HUBSPOT_BATCH, upsertHubspotContacts } from '../../src/destinations/providers/hubspot.ts';
import type { MappedRow } from '../../src/destinations/providers/types.ts';
import { queueDeliveries } from '../../src/destinations/queue.ts';
import {
  alternate,
  type BenchServer,
  type Gateway,
  median,
  n,
  openBenchServer,
  pad,
  progress,
  request,
  round,
  sleep,
  startGateway,
  type Suite,
  verdict,
} from './harness.ts';
import type { FakeCommand, FakeState, UpsertLogEntry } from './hubspot-process.ts';

/** HubSpot's published limit for a private app on a Professional account: 190 requests every 10 s. */
const PUBLISHED = { max: 190, intervalMs: 10_000 };
const LIMITS = {
  published: PUBLISHED,
  scaled: { max: PUBLISHED.max / 10, intervalMs: PUBLISHED.intervalMs / 10 },
  unlimited: { max: 1_000_000, intervalMs: 1_000 },
} as const;
type LimitName = keyof typeof LIMITS;

const CONTACTS = 10_000;
const SMALL = 2_000;
const ROUNDS = 3;
const GOAL_RATIO = 0.9;
const GOAL_GROWTH_MB = 30;
const GOAL_SIZE_MB = 5;
const SAMPLE_MS = 250;
/** The live heap's samples: a full collection each (tens of ms on this heap), so fewer. */
const LIVE_SAMPLE_MS = 500;
const PROBE_BATCHES = 100;

type CaseName = 'published' | 'scaled' | 'unlimited' | 'memory' | 'memory-2000';
/** `live`: the heap sampled after `gc()`, what the delivery holds (slower, so run once, after the others). */
const CASES: Record<CaseName, { limit: LimitName; small?: true; live?: true }> = {
  published: { limit: 'published' },
  scaled: { limit: 'scaled' },
  unlimited: { limit: 'unlimited' },
  memory: { limit: 'unlimited', live: true },
  'memory-2000': { limit: 'unlimited', small: true, live: true },
};

/** What the limit allows, contacts a second: requests a window × batch ÷ the window in seconds. */
const allowance = (limit: LimitName) => (LIMITS[limit].max * HUBSPOT_BATCH) / (LIMITS[limit].intervalMs / 1000);

interface MemorySpan {
  /** MB: the heap settled before, its peak and last sample during, settled after; RSS before and its peak. */
  startHeapMb: number;
  peakHeapMb: number;
  endHeapMb: number;
  settledEndHeapMb: number;
  startRssMb: number;
  peakRssMb: number;
  /** Peak − settled start, and settled end − settled start. */
  growthMb: number;
  retainedMb: number;
  /** Least-squares slope of the heap over the second half of the delivery, MB a second. */
  slopeMbPerSec: number;
  samples: number;
}

interface Delivered {
  rows: number;
  wallMs: number;
  contactsPerSec: number;
  /** Contacts a second ÷ what the limit allows. */
  ratio: number;
  sent: number;
  created: number;
  /** Upserts answered 200 or 207, 429, other. */
  upserts: number;
  throttled: number;
  other: number;
  /** Mean time from a 429 to the next answer (the wait, then the batch again), ms; null without 429s. */
  afterThrottleMs: number | null;
  /** Mean time between two answered upserts in a row (no 429 between them): a batch, ms. */
  batchMs: number;
  /**
   * After the 429s, the time the delivery waited while the window had room again: from when the oldest
   * request of the window left it to the next answer, less a batch; ms, all 429s together.
   */
  idleWithRoomMs: number;
  /** `ratio` had the delivery not waited then. */
  ratioWithoutIdle: number;
  /** CPU of the fakes' process during the delivery, ms. */
  fakeCpuMs: number;
  memory: MemorySpan;
}

interface CaseFigures {
  limit: { max: number; intervalMs: number; allowancePerSec: number };
  rows: number;
  /** Medians of the rounds. */
  wallMs: number;
  contactsPerSec: number;
  ratio: number;
  ratioWithoutIdle: number;
  batchMs: number;
  /**
   * The ratio of a sequential sender whose batches take `batchMs`, simulated on the window: waiting a
   * whole window after each 429 (as the code does), and sending as soon as the oldest request leaves it.
   */
  model: { wholeWindow: number; prompt: number } | null;
  /** The highest of the rounds. */
  growthMb: number;
  retainedMb: number;
  rounds: Delivered[];
}

export interface DestinationsResult {
  contacts: number;
  cases: Record<CaseName, CaseFigures>;
  /**
   * Milliseconds a batch, `unlimited`: its wall time ÷ requests, and the mean time between two answers;
   * the medians of its parts measured on their own (the upsert call and, within it, the fakes' process's
   * CPU, a mean; a bare commit of the delivery's row); the rest (rows read, mapped, acknowledgement
   * committed) is the difference.
   */
  perBatch: {
    deliveryMs: number;
    batchMs: number;
    tokenMs: number;
    upsertMs: number;
    fakeMs: number;
    commitMs: number;
    restMs: number;
  };
}

// ---------------------------------------------------------------------------------------------
// The fakes' process

interface FakeProcess {
  call<T>(command: FakeCommand): Promise<T>;
  close(): Promise<void>;
}

function startFakeProcess(): FakeProcess {
  const script = fileURLToPath(new URL('./hubspot-process.ts', import.meta.url));
  const child: ChildProcess = fork(script, [], {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  let seq = 0;
  const waiting = new Map<number, (reply: { value?: unknown; error?: string }) => void>();
  child.on('message', (reply: { id: number; value?: unknown; error?: string }) => waiting.get(reply.id)?.(reply));
  child.on('exit', (code) => {
    for (const settle of waiting.values()) settle({ error: `the fakes' process exited (${code})` });
  });
  return {
    call: <T>(command: FakeCommand) =>
      new Promise<T>((resolve, reject) => {
        const id = ++seq;
        waiting.set(id, (reply) => {
          waiting.delete(id);
          if (reply.error) reject(new Error(reply.error));
          else resolve(reply.value as T);
        });
        child.send({ id, ...command });
      }),
    close: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.disconnect();
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Memory

/** `global.gc`, exposed at run time when node was started without `--expose-gc`. */
function gcFunction(): () => void {
  if (typeof globalThis.gc === 'function') return globalThis.gc as () => void;
  v8.setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

const MB = 2 ** 20;

async function settledHeap(gc: () => void) {
  await sleep(50);
  gc();
  gc();
  const m = process.memoryUsage();
  return { heap: m.heapUsed / MB, rss: m.rss / MB };
}

/** The heap and RSS every `everyMs` until `stop`; with `gc`, collected first (the live heap). */
function sampleMemory(everyMs: number, gc?: () => void) {
  const t0 = performance.now();
  const samples: { secs: number; heap: number; rss: number }[] = [];
  const take = () => {
    gc?.();
    const m = process.memoryUsage();
    samples.push({ secs: (performance.now() - t0) / 1000, heap: m.heapUsed / MB, rss: m.rss / MB });
  };
  take();
  const timer = setInterval(take, everyMs);
  return () => {
    clearInterval(timer);
    take();
    return samples;
  };
}

/** Least-squares slope of `y` over `x`. */
function slope(points: { x: number; y: number }[]): number {
  if (points.length < 2) return 0;
  const mx = points.reduce((a, p) => a + p.x, 0) / points.length;
  const my = points.reduce((a, p) => a + p.y, 0) / points.length;
  const sxx = points.reduce((a, p) => a + (p.x - mx) ** 2, 0);
  return sxx === 0 ? 0 : points.reduce((a, p) => a + (p.x - mx) * (p.y - my), 0) / sxx;
}

// ---------------------------------------------------------------------------------------------
// Setup

interface Prepared {
  gw: Gateway;
  fakeUrl: string;
  runId: string;
  deliveryId: string;
  rows: number;
}

/** A finished maps run of `rows` rows, all its columns, an email of its own on every row (`tag` keeps them apart). */
async function writeRun(gw: Gateway, runId: string, rows: number, tag: string) {
  const sql = gw.app.core.sql;
  await sql`
    insert into run (id, account_id, tool, status, input, item_count, handled, requested, finished_at, expires_at)
    values (${runId}, ${gw.accountId}, 'maps', 'SUCCEEDED', '{"searchStringsArray":["dentist"]}', ${rows}, ${rows},
      ${rows}, now(), now() + interval '30 days')`;
  await sql`
    insert into run_item (run_id, seq, data)
    select ${runId}, i, json_build_object(
      'name', 'Dental Care ' || i, 'category', 'Dentist',
      'address', (100 + i % 9000) || ' Main Street, Denver, CO 80' || lpad((i % 300)::text, 3, '0'),
      'street', (100 + i % 9000) || ' Main Street', 'city', 'Denver', 'state', 'Colorado',
      'postal_code', '80' || lpad((i % 300)::text, 3, '0'), 'country_code', 'US',
      'phone', '+1 303-555-' || lpad((i % 10000)::text, 4, '0'),
      'website', 'https://dental-care-' || i || '.example.com/',
      'emails', json_build_array('office.' || ${tag} || '.' || i || '@dental-care-' || i || '.example.com'),
      'rating', 4.5, 'review_count', i % 2000, 'hours', json_build_array('Monday: 8 AM–5 PM'),
      'latitude', 39.7, 'longitude', -104.9, 'place_id', 'ChIJ' || md5(${tag} || i),
      'url', 'https://maps.example.com/' || i, 'search_term', 'dentist')
    from generate_series(0, ${rows - 1}) as i`;
}

/** A connection with `token` (a private app of its own) and a `hubspot_contacts` destination on it. */
async function makeDestination(gw: Gateway, token: string, name: string): Promise<string> {
  const { json: made } = await request<{ connection: { id: string } }>(gw, 'POST', '/api/v1/connections/token', {
    provider: 'hubspot',
    name,
    token,
  });
  const { json } = await request<{ destination: { id: string } }>(gw, 'POST', '/api/v1/destinations', {
    name,
    kind: 'hubspot_contacts',
    connection: made.connection.id,
  });
  return json.destination.id;
}

const tokenOf = (label: string) => `pat-na1-${label}-${randomBytes(8).toString('hex')}`;

// ---------------------------------------------------------------------------------------------
// One delivery

async function deliver(p: Prepared, fakes: FakeProcess, c: CaseName, gc: () => void): Promise<Delivered> {
  const { limit, live } = CASES[c];
  await fakes.call({ cmd: 'clear', args: { url: p.fakeUrl } });
  const fakeBefore = await fakes.call<FakeState>({ cmd: 'state', args: { url: p.fakeUrl } });
  const before = await settledHeap(gc);
  const startedAt = Date.now();
  const stop = live ? sampleMemory(LIVE_SAMPLE_MS, gc) : sampleMemory(SAMPLE_MS);
  const t0 = performance.now();
  await runDelivery(p.gw.app.core, p.deliveryId);
  const wallMs = performance.now() - t0;
  const samples = stop();
  const endedAt = Date.now();
  const fakeAfter = await fakes.call<FakeState>({ cmd: 'state', args: { url: p.fakeUrl } });
  const after = await settledHeap(gc);
  if (fakeAfter.contacts !== p.rows) throw new Error(`the fake holds ${fakeAfter.contacts} of ${p.rows} contacts`);

  const [done] = await p.gw.app.core.db.select().from(deliveryTable).where(eq(deliveryTable.id, p.deliveryId));
  if (done?.status !== 'succeeded' || done.sent !== p.rows || done.created !== p.rows)
    throw new Error(
      `delivery ${p.deliveryId}: ${done?.status}, ${done?.sent} sent, ${done?.created} created of ${p.rows}: ` +
        `${done?.message}`,
    );
  const log = (await fakes.call<UpsertLogEntry[]>({ cmd: 'log', args: { url: p.fakeUrl } })).filter(
    (r) => r.time >= startedAt && r.time <= endedAt,
  );
  const waits = log.flatMap((r, i) => (r.status === 429 && log[i + 1] ? [log[i + 1]!.time - r.time] : []));
  const { batchMs, idleMs } = windowUse(log, LIMITS[limit]);
  const allowed = allowance(limit);
  const half = samples.at(-1)!.secs / 2;
  const contactsPerSec = p.rows / (wallMs / 1000);
  const mb = (value: number) => round(value, 1);
  return {
    rows: p.rows,
    wallMs: round(wallMs),
    contactsPerSec: round(contactsPerSec),
    ratio: round(contactsPerSec / allowed, 3),
    sent: done.sent,
    created: done.created,
    upserts: log.filter((r) => r.status === 200 || r.status === 207).length,
    throttled: log.filter((r) => r.status === 429).length,
    other: log.filter((r) => ![200, 207, 429].includes(r.status)).length,
    afterThrottleMs: waits.length > 0 ? round(waits.reduce((a, b) => a + b, 0) / waits.length) : null,
    batchMs: round(batchMs, 2),
    idleWithRoomMs: round(idleMs),
    ratioWithoutIdle: round(p.rows / ((wallMs - idleMs) / 1000) / allowed, 3),
    fakeCpuMs: round(fakeAfter.cpuMs - fakeBefore.cpuMs),
    memory: {
      startHeapMb: mb(before.heap),
      peakHeapMb: mb(Math.max(...samples.map((s) => s.heap))),
      endHeapMb: mb(samples.at(-1)!.heap),
      settledEndHeapMb: mb(after.heap),
      startRssMb: mb(before.rss),
      peakRssMb: mb(Math.max(...samples.map((s) => s.rss))),
      growthMb: mb(Math.max(...samples.map((s) => s.heap)) - before.heap),
      retainedMb: mb(after.heap - before.heap),
      slopeMbPerSec: round(slope(samples.filter((s) => s.secs >= half).map((s) => ({ x: s.secs, y: s.heap }))), 2),
      samples: samples.length,
    },
  };
}

const answered = (r: UpsertLogEntry) => r.status === 200 || r.status === 207;

/**
 * From a delivery's upserts in the fake's log: the mean time between two answered in a row (a batch),
 * and the time, over all 429s, from when the oldest admitted request of the window left it (the retry
 * would have been admitted) to the next answer, less a batch (the retry's own time).
 */
function windowUse(log: UpsertLogEntry[], limit: { max: number; intervalMs: number }) {
  const gaps = log.flatMap((r, i) =>
    i > 0 && answered(r) && answered(log[i - 1]!) ? [r.time - log[i - 1]!.time] : [],
  );
  const batchMs = gaps.length > 0 ? gaps.reduce((a, b) => a + b, 0) / gaps.length : 0;
  const admitted: number[] = [];
  let idleMs = 0;
  for (const [i, r] of log.entries()) {
    if (answered(r)) admitted.push(r.time);
    if (r.status !== 429) continue;
    const oldest = admitted[admitted.length - limit.max];
    const next = log.slice(i + 1).find(answered);
    if (oldest !== undefined && next) idleMs += Math.max(0, next.time - (oldest + limit.intervalMs) - batchMs);
  }
  return { batchMs, idleMs };
}

/**
 * The ratio to the allowance of `rows` sent in batches one after another, each taking `batchMs`, on a
 * rolling window (admitted while fewer than `max` were in the last `intervalMs`); a refused request
 * waits a whole window (`wholeWindow`) or until the oldest request leaves it (`prompt`). The 429's own
 * round trip is left out.
 */
function modelled(rows: number, batchMs: number, limit: LimitName) {
  const { max, intervalMs } = LIMITS[limit];
  const requests = Math.ceil(rows / HUBSPOT_BATCH);
  const allowedMs = (rows / allowance(limit)) * 1000;
  const simulate = (prompt: boolean) => {
    const admitted: number[] = [];
    let t = 0;
    while (admitted.length < requests) {
      const freeAt = (admitted[admitted.length - max] ?? Number.NEGATIVE_INFINITY) + intervalMs;
      // The same sum both times: `t = freeAt` must admit the next request.
      if (freeAt > t) t = prompt ? freeAt : t + intervalMs;
      else {
        admitted.push(t);
        t += batchMs;
      }
    }
    return round(allowedMs / t, 3);
  };
  return { wholeWindow: simulate(false), prompt: simulate(true) };
}

/** Milliseconds each of `times` sequential calls of `fn` took. */
async function perCall(times: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const ms: number[] = [];
  for (let i = 0; i < times; i++) {
    const t0 = performance.now();
    await fn(i);
    ms.push(performance.now() - t0);
  }
  return ms;
}

/** Batches of HUBSPOT_BATCH contacts mapped as the default mapping maps a maps row. */
const probeBatch = (b: number): MappedRow[] =>
  Array.from({ length: HUBSPOT_BATCH }, (_, j) => {
    const i = b * HUBSPOT_BATCH + j;
    return {
      row: i,
      fields: {
        email: `probe.${i}@dental-care-${i}.example.com`,
        company: `Dental Care ${i}`,
        phone: `+1 303-555-${String(i % 10_000).padStart(4, '0')}`,
        website: `https://dental-care-${i}.example.com/`,
        city: 'Denver',
        state: 'Colorado',
        zip: '80202',
        country: 'US',
      },
    };
  });

// ---------------------------------------------------------------------------------------------

export const destinations: Suite<DestinationsResult> = {
  name: 'destinations',
  key: 'destinations',
  flags: ['contacts'],
  quick: true,
  async run(context) {
    const contacts = context.count('contacts') ?? CONTACTS;
    const rounds = context.quick ? 1 : ROUNDS;
    const roundsOf = (c: CaseName) => (CASES[c].live ? 1 : rounds);
    const gc = gcFunction();
    const fakes = startFakeProcess();
    let server: BenchServer | undefined;
    const gateways: Gateway[] = [];
    try {
      server = await openBenchServer();
      const secrets = `k1:${randomBytes(32).toString('base64')}`;
      const tokens = new Map<string, string>();
      const limitNames = Object.keys(LIMITS) as LimitName[];
      const caseNames = Object.keys(CASES) as CaseName[];
      for (const c of caseNames)
        for (let r = 0; r < roundsOf(c); r++) tokens.set(`${c}-${r}`, tokenOf(c.replace(/\W/g, '')));
      tokens.set('probe', tokenOf('probe'));
      const sites = new Map<LimitName, { gw: Gateway; fakeUrl: string }>();
      for (const limit of limitNames) {
        progress(`destinations: a HubSpot fake at ${LIMITS[limit].max} requests every ${LIMITS[limit].intervalMs} ms`);
        const fakeUrl = await fakes.call<string>({
          cmd: 'start',
          args: {
            rateLimit: { intervalMs: LIMITS[limit].intervalMs, privateAppMax: LIMITS[limit].max },
            tokens: [...tokens.values()],
          },
        });
        const gw = await startGateway({
          server,
          config: { destinations: destinationsConfig({ SECRETS_KEYS: secrets, HUBSPOT_BASE_URL: fakeUrl }) },
          account: { name: `destinations ${limit}`, creditsMicros: 1_000_000_000n },
        });
        gateways.push(gw);
        sites.set(limit, { gw, fakeUrl });
      }

      progress(`destinations: runs, connections and destinations for ${tokens.size - 1} deliveries`);
      const prepared = new Map<string, Prepared & { readyAt: number }>();
      for (const c of caseNames) {
        const { gw, fakeUrl } = sites.get(CASES[c].limit)!;
        const rows = CASES[c].small ? SMALL : contacts;
        for (let r = 0; r < roundsOf(c); r++) {
          const key = `${c}-${r}`;
          const destinationId = await makeDestination(gw, tokens.get(key)!, `bench ${key}`);
          const runId = `benchdest${c.replace(/\W/g, '')}${r}`;
          await writeRun(gw, runId, rows, `${c.replace(/\W/g, '')}${r}`);
          await queueDeliveries(gw.app.core, gw.app.core.db, gw.accountId, { runId }, [destinationId]);
          const [queued] = await gw.app.core.db
            .select({ id: deliveryTable.id })
            .from(deliveryTable)
            .where(eq(deliveryTable.runId, runId));
          prepared.set(key, { gw, fakeUrl, runId, deliveryId: queued!.id, rows, readyAt: Date.now() });
        }
      }
      await gateways[0]!.app.core.sql`vacuum analyze run_item`;

      const timed = caseNames.filter((c) => !CASES[c].live);
      const run = async (c: CaseName, r: number) => {
        const p = prepared.get(`${c}-${r}`)!;
        // The token check's request leaves the app's window first: each delivery starts on an empty window.
        await sleep(p.readyAt + LIMITS[CASES[c].limit].intervalMs + 100 - Date.now());
        const d = await deliver(p, fakes, c, gc);
        progress(
          `destinations: ${c} round ${r + 1}: ${n(d.rows)} in ${n(d.wallMs)} ms, ${n(d.contactsPerSec)}/s ` +
            `(${d.ratio}×), ${d.upserts} upserts, ${d.throttled} × 429, heap +${d.memory.growthMb} MB`,
        );
        return d;
      };
      const kept: Record<CaseName, Delivered[]> = {
        ...(await alternate(timed, rounds, run)),
        memory: [await run('memory', 0)],
        'memory-2000': [await run('memory-2000', 0)],
      };

      progress('destinations: a batch in parts, against the unlimited fake');
      const probeSite = sites.get('unlimited')!;
      const probeDestination = await makeDestination(probeSite.gw, tokens.get('probe')!, 'bench probe');
      const core = probeSite.gw.app.core;
      const [probe] = await core.sql<
        { connection_id: string }[]
      >`select connection_id from destination where id = ${probeDestination}`;
      const token = await accessTokenOf(core, probe!.connection_id);
      const tokenMs = median(await perCall(PROBE_BATCHES, () => accessTokenOf(core, probe!.connection_id)));
      const url = probeSite.fakeUrl;
      await fakes.call({ cmd: 'clear', args: { url } });
      const fakeBefore = await fakes.call<FakeState>({ cmd: 'state', args: { url } });
      const upsertMs = median(
        await perCall(PROBE_BATCHES, (b) =>
          upsertHubspotContacts(core.config.destinations.hubspot, token, probeBatch(b)),
        ),
      );
      const fakeMs =
        ((await fakes.call<FakeState>({ cmd: 'state', args: { url } })).cpuMs - fakeBefore.cpuMs) / PROBE_BATCHES;
      // The least an acknowledgement commits: the delivery's row updated in a transaction of its own.
      const delivered = prepared.get('unlimited-0')!.deliveryId;
      const commitMs = median(
        await perCall(PROBE_BATCHES, () =>
          core.db.transaction((tx) =>
            tx
              .update(deliveryTable)
              .set({ nextOffset: sql`${deliveryTable.nextOffset}` })
              .where(eq(deliveryTable.id, delivered)),
          ),
        ),
      );

      const cases = Object.fromEntries(
        caseNames.map((c) => {
          const list = kept[c];
          const limit = LIMITS[CASES[c].limit];
          const figures: CaseFigures = {
            limit: { ...limit, allowancePerSec: allowance(CASES[c].limit) },
            rows: list[0]!.rows,
            wallMs: round(median(list.map((d) => d.wallMs))),
            contactsPerSec: round(median(list.map((d) => d.contactsPerSec))),
            ratio: round(median(list.map((d) => d.ratio)), 3),
            ratioWithoutIdle: round(median(list.map((d) => d.ratioWithoutIdle)), 3),
            batchMs: round(median(list.map((d) => d.batchMs)), 2),
            model:
              CASES[c].limit === 'unlimited'
                ? null
                : modelled(list[0]!.rows, median(list.map((d) => d.batchMs)), CASES[c].limit),
            growthMb: Math.max(...list.map((d) => d.memory.growthMb)),
            retainedMb: Math.max(...list.map((d) => d.memory.retainedMb)),
            rounds: list,
          };
          return [c, figures];
        }),
      ) as Record<CaseName, CaseFigures>;
      const deliveryMs = cases.unlimited.wallMs / Math.ceil(contacts / HUBSPOT_BATCH);
      return {
        contacts,
        cases,
        perBatch: {
          deliveryMs: round(deliveryMs, 2),
          batchMs: cases.unlimited.batchMs,
          tokenMs: round(tokenMs, 2),
          upsertMs: round(upsertMs, 2),
          fakeMs: round(fakeMs, 2),
          commitMs: round(commitMs, 2),
          restMs: round(cases.unlimited.batchMs - tokenMs - upsertMs, 2),
        },
      };
    } finally {
      for (const gw of gateways) await gw.close().catch(() => {});
      await server?.close().catch(() => {});
      await fakes.close();
    }
  },

  format(r) {
    const c = r.cases;
    const names = Object.keys(c) as CaseName[];
    const timed = names.filter((name) => !CASES[name].live);
    const endless = (f: CaseFigures) => f.limit.max > 1e5;
    const w = [11, 8, 8, 8, 10, 7, 7, 4, 9, 7, 8, 8];
    const throughput = timed.map((name) => {
      const f = c[name];
      const last = f.rounds.at(-1)!;
      return pad(
        [
          name,
          `${endless(f) ? '∞' : f.limit.max}/${f.limit.intervalMs / 1000} s`,
          n(f.rows),
          n(Math.round(f.wallMs)),
          n(Math.round(f.contactsPerSec)),
          endless(f) ? '–' : `${f.ratio}×`,
          last.upserts,
          last.throttled,
          last.afterThrottleMs === null ? '–' : n(Math.round(last.afterThrottleMs)),
          n(Math.round(last.idleWithRoomMs)),
          round(f.batchMs),
          n(Math.round(last.fakeCpuMs)),
        ],
        w,
      );
    });
    const m = [11, 8, 9, 8, 8, 8, 8, 12, 8];
    const memory = names.flatMap((name) =>
      c[name].rounds.map((d, i) =>
        pad(
          [
            i === 0 ? name : '',
            n(d.rows),
            d.memory.startHeapMb,
            d.memory.peakHeapMb,
            d.memory.settledEndHeapMb,
            `+${d.memory.growthMb}`,
            d.memory.retainedMb,
            `${Math.round(d.memory.startRssMb)} → ${Math.round(d.memory.peakRssMb)}`,
            d.memory.slopeMbPerSec,
          ],
          m,
        ),
      ),
    );
    const g = goalsOf(r);
    const b = r.perBatch;
    return [
      '17. Contacts to HubSpot (destinations): runDelivery against the HubSpot fake; a private app on ' +
        `Professional, ${PUBLISHED.max} requests / ${PUBLISHED.intervalMs / 1000} s × ${HUBSPOT_BATCH} = ` +
        `${n(allowance('published'))} contacts/s`,
      pad(
        ['case', 'limit', 'contacts', 'wall ms', 'contacts/s', 'ratio', 'upserts', '429', '429→next'].concat([
          'idle ms',
          'batch ms',
          'fake CPU',
        ]),
        w,
      ),
      ...throughput,
      `   medians of ${c.scaled.rounds.length} rounds; upserts to "fake CPU" (ms), the last round's: idle, the ` +
        'waits after 429s while the window had room again',
      ...(['published', 'scaled'] as const).map((name) => {
        const f = c[name];
        return (
          `   ${name}: ${f.ratio}× measured, ${f.ratioWithoutIdle}× without the idle time; simulated at its ` +
          `${round(f.batchMs)} ms a batch: a whole window after each 429 → ${f.model?.wholeWindow}×, sending as ` +
          `soon as the oldest request leaves the window → ${f.model?.prompt}×`
        );
      }),
      ...(c.published.rows <= PUBLISHED.max * HUBSPOT_BATCH
        ? [
            `   published: ${n(Math.ceil(c.published.rows / HUBSPOT_BATCH))} requests, within one window of ` +
              `${PUBLISHED.max}: the limit is never met, the pace is the delivery’s own`,
          ]
        : []),
      `   a batch, unlimited: ${b.deliveryMs} ms (wall ÷ requests), ${b.batchMs} between answers; on their ` +
        `own: token read ${b.tokenMs}, upsert call ${b.upsertMs} (the fake's CPU ${b.fakeMs}); rows, mapping ` +
        `and acknowledgement the rest, ${b.restMs} (a bare commit of the delivery's row: ${b.commitMs})`,
      pad(['memory, MB', 'contacts', 'heap at', 'peak', 'settled', 'growth', 'retained', 'RSS', 'MB/s ½'], m),
      ...memory,
      '   heap settled (gc) before and after; peak and slope over the second half sampled every ' +
        `${SAMPLE_MS} ms, memory cases after gc() every ${LIVE_SAMPLE_MS} ms (the live heap)`,
      `   goal: scaled ${c.scaled.ratio}× of the limit ≥ ${GOAL_RATIO}: ${verdict(g.throughput.met)}`,
      `   goal: heap peak − start ${g.memory.peakGrowthMb} MB at ${n(r.contacts)} contacts ≤ ${GOAL_GROWTH_MB} ` +
        `MB; live heap +${c.memory.growthMb} MB, ${g.memory.aboveSmallMb} MB above ${n(SMALL)} contacts' ≤ ` +
        `${GOAL_SIZE_MB} MB: ${verdict(g.memory.met)}`,
    ].join('\n');
  },

  goals: goalsOf,
};

function goalsOf(r: DestinationsResult) {
  const big = Math.max(r.cases.scaled.growthMb, r.cases.published.growthMb, r.cases.unlimited.growthMb);
  const aboveSmallMb = round(r.cases.memory.growthMb - r.cases['memory-2000'].growthMb, 1);
  return {
    throughput: {
      goal: `scaled contacts/s ÷ the limit's allowance ≥ ${GOAL_RATIO}`,
      ratio: r.cases.scaled.ratio,
      met: r.cases.scaled.ratio >= GOAL_RATIO,
    },
    memory: {
      goal:
        `heap peak − settled start ≤ ${GOAL_GROWTH_MB} MB at ${n(r.contacts)} contacts; live heap peak − start ` +
        `(after gc) ≤ ${GOAL_SIZE_MB} MB above ${n(SMALL)} contacts'`,
      peakGrowthMb: big,
      aboveSmallMb,
      met: big <= GOAL_GROWTH_MB && aboveSmallMb <= GOAL_SIZE_MB,
    },
  };
}
