import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import { executeRun, cancelRun } from '../../src/runs/engine/index.ts';
import { handBack, watchStops } from '../../src/runs/engine/stops.ts';
import { leadScraperTool } from '../../src/tools/lead-scraper.ts';
import { countingEvents } from '../helpers/events.ts';
import { AppError, ValidationError } from '../../src/shared/errors.ts';
import { startRun } from '../../src/runs/start.ts';
import type { RunSnapshot } from '../../src/runs/view.ts';
import type { Place } from '../../src/sources/local-businesses.ts';
import type { Sources } from '../../src/sources/types.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';

/**
 * How a run stops part-way, driven in this process with a listing source the test holds: a cancel
 * from another request, the time limit, a worker that is shutting down, and the run that resumes
 * after it. One RUNNING run per account, so an ending run visibly promotes the next.
 */
let t: TestApp;

beforeAll(async () => {
  t = await startTestApp({ worker: false, config: { maxRunningRuns: 1 } });
});
afterAll(() => t?.stop());

/** Three pages of listings: 50, 50 and 20. */
const INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 };
const PRICE = mapsTool.price.unitMicros;

async function account(creditsMicros = 100_000_000n) {
  const { accountId, apiKey } = await t.account({ creditsMicros });
  const principal: Principal = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
  return { accountId, principal };
}

/**
 * A listing source that answers its first `pages` calls and then holds the next one until
 * `release()`: `stalled` resolves once the runner is waiting there, which is after the engine stored
 * every earlier page (it asks for a page only once the one before is written).
 */
function stallingSources(pages: number) {
  const real = t.app.core.sources.localBusinesses;
  let served = 0;
  let reached!: () => void;
  let release!: () => void;
  const stalled = new Promise<void>((resolve) => (reached = resolve));
  const released = new Promise<void>((resolve) => (release = resolve));
  const sources: Sources = {
    ...t.app.core.sources,
    localBusinesses: {
      ...real,
      searchPlaces: async (query): Promise<Place[]> => {
        if (served++ >= pages) {
          reached();
          await released;
        }
        return real.searchPlaces(query);
      },
    },
  };
  return { sources, stalled, release, calls: () => served };
}

/**
 * Executes `runId` with its source stalled after `pages` pages, and while it waits, has a cancel land
 * in the table unannounced, before the engine has seen it. Returns the run's progress events with
 * rows (the start's own may arrive after the subscription began; it holds none) up to its end.
 */
async function cancelledUnannounced(runId: string, pages: number) {
  const source = stallingSources(pages);
  const progress: RunSnapshot[] = [];
  const events = await t.app.core.events.subscribe('runProgress', runId);
  const following = (async () => {
    for await (const snapshot of events) {
      if (snapshot.itemCount > 0) progress.push(snapshot);
      if (snapshot.status === 'ABORTED') return;
    }
  })();
  const executing = executeRun({ ...t.app.core, sources: source.sources }, runId);
  await source.stalled;
  await t.app.core
    .sql`update run set status = 'ABORTING', status_message = 'Cancelling: results stored so far are kept' where id = ${runId}`;
  source.release();
  await executing;
  await following;
  return progress;
}

/** A logger that keeps what the engine writes, as the JSON objects pino emits. */
function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
  return { logger, lines };
}

interface RunRow {
  status: string;
  status_message: string;
  /** The stop reason the engine's finish recorded (RunSnapshot.stoppedReason). */
  stop_reason: string | null;
  item_count: number;
  handled: number;
  charged: bigint;
  billed_units: number;
  settled: boolean;
}

/** A run that stored, and was billed for, every row of the search, and was settled. */
const everyRow = (status: string, statusMessage: string, stopReason: string | null): RunRow => ({
  status,
  status_message: statusMessage,
  stop_reason: stopReason,
  item_count: expectedRows,
  handled: expectedRows,
  charged: BigInt(expectedRows) * PRICE,
  billed_units: expectedRows,
  settled: true,
});

async function run(id: string): Promise<RunRow> {
  const [r] = await t.app.core.sql`
    select status, status_message, stop_reason, item_count, handled, charged_micros::text as charged, billed_units, settled_at is not null as settled
    from run where id = ${id}`;
  return { ...(r as unknown as RunRow), charged: BigInt(r!.charged as string) };
}

const seqs = async (runId: string) =>
  (await t.app.core.sql`select seq from run_item where run_id = ${runId} order by seq`).map((r) => r.seq as number);
const placeIds = async (runId: string) =>
  (await t.app.core.sql`select data->>'placeId' as id from run_item where run_id = ${runId} order by seq`).map(
    (r) => r.id as string,
  );
const jobs = async (runId: string) =>
  (await t.app.core.sql`select count(*)::int as n from graphile_worker.jobs where key = ${runId}`)[0]!.n as number;
const status = async (runId: string) => (await run(runId)).status;
const activeRuns = async (accountId: string) =>
  (await t.app.core.sql`select active_runs from wallet where account_id = ${accountId}`)[0]!.active_runs as number;
/** The data of the end's webhook delivery of a run (the first, when it had several). */
const endPayload = async (runId: string) =>
  (await t.app.core.sql`select payload from webhook_delivery where run_id = ${runId} order by created_at limit 1`)[0]!
    .payload.data as Record<string, unknown>;
const deliveries = async (runId: string) =>
  (await t.app.core.sql`select event, url from webhook_delivery where run_id = ${runId} order by created_at`).map(
    (r) => `${r.event} ${r.url}`,
  );

/** How many dentists the catalog holds, capped at the run's 120. */
let expectedRows: number;
beforeAll(async () => {
  const [row] = await t.app.core.sql`select count(*)::int as n from local_business where category = 'Dentist'`;
  expectedRows = Math.min(120, row!.n as number);
  // The test needs a third page to stop before.
  expect(expectedRows).toBeGreaterThan(100);
});

describe('a cancel part-way', () => {
  it('ends the run ABORTED with the rows stored before it, billed, and promotes the next run; rows the runner hands over later are dropped', async () => {
    const { accountId, principal } = await account();
    const before = await t.walletMicros(accountId);
    const { run: first } = await startRun(t.app.core, principal, 'maps', {
      ...INPUT,
      webhookUrl: 'https://hooks.example.com/run',
    });
    const { run: next } = await startRun(t.app.core, principal, 'maps', INPUT);
    expect([await status(first.id), await status(next.id)]).toEqual(['RUNNING', 'READY']);
    const source = stallingSources(1);
    const { logger, lines } = recordingLogger();
    const executing = executeRun({ ...t.app.core, sources: source.sources, logger }, first.id);
    await source.stalled;
    expect(await seqs(first.id)).toHaveLength(50);

    await cancelRun(t.app.core, principal, first.id);
    await executing;
    expect(await run(first.id)).toEqual({
      status: 'ABORTED',
      status_message: 'Cancelled: 50 businesses kept',
      stop_reason: 'cancelled',
      item_count: 50,
      handled: 50,
      charged: 50n * PRICE,
      billed_units: 50,
      settled: true,
    });
    expect(lines.map((l) => l.msg)).toContain('run cancelled');

    // The held page arrives after the end: nothing more is stored or billed.
    source.release();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(await seqs(first.id)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(await run(first.id)).toMatchObject({ item_count: 50, charged: 50n * PRICE });

    // The slot went to the waiting run, whose hold is still on the wallet; the first run's was settled.
    expect(await status(next.id)).toBe('RUNNING');
    expect(await jobs(next.id)).toBe(1);
    expect(await activeRuns(accountId)).toBe(1);
    const nextHold = 120n * PRICE;
    expect(await t.walletMicros(accountId)).toBe(before - 50n * PRICE - nextHold);
    expect(await deliveries(first.id)).toEqual(['run.aborted https://hooks.example.com/run']);
    expect(await endPayload(first.id)).toMatchObject({
      status: 'ABORTED',
      complete: false,
      stoppedReason: 'cancelled',
    });
  });

  it('a batch stored while the cancel is under way keeps the cancel’s message', async () => {
    const { principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    // The cancel lands while the runner is between its first and second pages.
    const progress = await cancelledUnannounced(r.id, 1);
    const ended = await run(r.id);
    // The page in hand was stored with the cancel's message untouched, then the run ended ABORTED.
    expect(ended).toMatchObject({
      status: 'ABORTED',
      status_message: 'Cancelled: 100 businesses kept',
      stop_reason: 'cancelled',
      item_count: 100,
      charged: 100n * PRICE,
    });
    expect(await seqs(r.id)).toHaveLength(100);
    expect(progress.map(({ itemCount, statusMessage }) => ({ itemCount, statusMessage }))).toEqual([
      { itemCount: 50, statusMessage: '"dentist": 50 places found' },
      { itemCount: 100, statusMessage: 'Cancelling: results stored so far are kept' },
      { itemCount: 100, statusMessage: 'Cancelled: 100 businesses kept' },
    ]);
  });

  it('a last page stored with the run’s end after a cancel landed ends the run ABORTED with every row, in one transaction', async () => {
    const { accountId, principal } = await account();
    const before = await t.walletMicros(accountId);
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    // Two pages stored, then the cancel lands while the runner waits for the page that fills the search, its last.
    const progress = await cancelledUnannounced(r.id, 2);
    expect(await run(r.id)).toEqual(everyRow('ABORTED', `Cancelled: ${expectedRows} businesses kept`, 'cancelled'));
    expect(await seqs(r.id)).toEqual(Array.from({ length: expectedRows }, (_, i) => i));
    expect(await t.walletMicros(accountId)).toBe(before - BigInt(expectedRows) * PRICE);
    expect(await activeRuns(accountId)).toBe(0);
    // The last page arrives with the end: no progress event of its own.
    expect(progress.map((p) => `${p.itemCount} ${p.status}`)).toEqual([
      '50 RUNNING',
      '100 RUNNING',
      `${expectedRows} ABORTED`,
    ]);
  });

  it('a run found ABORTING when its job starts ends ABORTED without running', async () => {
    const { accountId, principal } = await account();
    const before = await t.walletMicros(accountId);
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    await cancelRun(t.app.core, principal, r.id);
    expect(await status(r.id)).toBe('ABORTING');
    const source = stallingSources(0);
    await executeRun({ ...t.app.core, sources: source.sources }, r.id);
    expect(source.calls()).toBe(0);
    expect(await run(r.id)).toMatchObject({
      status: 'ABORTED',
      status_message: 'Cancelled: 0 businesses kept',
      stop_reason: 'cancelled',
      item_count: 0,
      charged: 0n,
    });
    expect(await t.walletMicros(accountId)).toBe(before);
    expect(await activeRuns(accountId)).toBe(0);
  });
});

describe('the time limit part-way', () => {
  it('ends a run whose source hangs TIMED-OUT when its limit passes, keeping and billing what was stored', async () => {
    const { accountId, principal } = await account();
    const before = await t.walletMicros(accountId);
    const { run: r } = await startRun(t.app.core, principal, 'maps', {
      ...INPUT,
      webhookUrl: 'https://hooks.example.com/late',
    });
    const { run: next } = await startRun(t.app.core, principal, 'maps', INPUT);
    const source = stallingSources(1);
    const { logger, lines } = recordingLogger();
    const limitSecs = 3;
    await t.app.core.sql`update run set started_at = now() where id = ${r.id}`;
    // The source never answers the second page: only the time limit can end this run.
    await executeRun(
      { ...t.app.core, sources: source.sources, logger, config: { ...t.app.core.config, runTimeoutSecs: limitSecs } },
      r.id,
    );
    expect(await run(r.id)).toEqual({
      status: 'TIMED-OUT',
      status_message: `Timed out after ${limitSecs} s (this tool's limit): 50 businesses kept`,
      stop_reason: 'time_limit',
      item_count: 50,
      handled: 50,
      charged: 50n * PRICE,
      billed_units: 50,
      settled: true,
    });
    expect(lines.find((l) => l.msg === 'run timed out')).toMatchObject({
      level: 40,
      limitSecs,
      runId: r.id,
      tool: 'maps',
    });
    expect(await status(next.id)).toBe('RUNNING');
    expect(await activeRuns(accountId)).toBe(1);
    expect(await t.walletMicros(accountId)).toBe(before - 50n * PRICE - 120n * PRICE);
    expect(await deliveries(r.id)).toEqual(['run.timed_out https://hooks.example.com/late']);
    expect(await endPayload(r.id)).toMatchObject({
      status: 'TIMED-OUT',
      complete: false,
      stoppedReason: 'time_limit',
    });
    source.release();
  });
});

describe('a worker that stops part-way', () => {
  it('hands the run back with the rows stored; the next attempt stores and bills only the rest, in order', async () => {
    const { accountId, principal } = await account();
    const before = await t.walletMicros(accountId);
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    await t.app.core.sql`select graphile_worker.remove_job(${r.id})`;
    const source = stallingSources(1);
    const { logger, lines } = recordingLogger();
    const stopping = new AbortController();
    const executing = executeRun({ ...t.app.core, sources: source.sources, logger }, r.id, stopping.signal);
    await source.stalled;
    stopping.abort();
    await executing;
    expect(await run(r.id)).toMatchObject({
      status: 'RUNNING',
      item_count: 50,
      handled: 50,
      charged: 50n * PRICE,
      billed_units: 50,
      settled: false,
    });
    expect(await jobs(r.id)).toBe(1);
    expect(lines.find((l) => l.msg === 'worker stopping: run handed back')).toMatchObject({
      level: 30,
      items: 50,
      runId: r.id,
    });
    expect(await activeRuns(accountId)).toBe(1);
    source.release();

    // The next worker's attempt reads the whole search again and skips what is stored.
    const resumed = recordingLogger();
    await executeRun({ ...t.app.core, logger: resumed.logger }, r.id);
    expect(await run(r.id)).toEqual(everyRow('SUCCEEDED', `Finished: ${expectedRows} businesses`, null));
    expect(await seqs(r.id)).toEqual(Array.from({ length: expectedRows }, (_, i) => i));
    expect(resumed.lines.find((l) => l.msg === 'run succeeded')).toMatchObject({
      items: expectedRows,
      holdUsedUp: false,
    });
    expect(await t.walletMicros(accountId)).toBe(before - BigInt(expectedRows) * PRICE);
    expect(await activeRuns(accountId)).toBe(0);

    // The same rows, in the same order, as a run that was never interrupted.
    const { run: whole } = await startRun(t.app.core, principal, 'maps', INPUT);
    await executeRun(t.app.core, whole.id);
    expect(await placeIds(r.id)).toEqual(await placeIds(whole.id));
  });

  it('hands back a run whose stop comes while its page is being read, without storing that page', async () => {
    const { principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const source = stallingSources(0);
    const stopping = new AbortController();
    const executing = executeRun({ ...t.app.core, sources: source.sources }, r.id, stopping.signal);
    await source.stalled;
    stopping.abort();
    await executing;
    source.release();
    await new Promise<void>((resolve) => setImmediate(resolve));
    expect(await run(r.id)).toMatchObject({ status: 'RUNNING', item_count: 0, charged: 0n });
    expect(await seqs(r.id)).toEqual([]);
  });

  it('an error thrown by a runner that was stopped does not fail the run', async () => {
    const { principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const real = t.app.core.sources.localBusinesses;
    const stopping = new AbortController();
    // The source notices the stop and throws, as a client library does on an aborted request.
    const sources: Sources = {
      ...t.app.core.sources,
      localBusinesses: {
        ...real,
        searchPlaces: async () => {
          stopping.abort();
          throw new Error('The operation was aborted');
        },
      },
    };
    await executeRun({ ...t.app.core, sources }, r.id, stopping.signal);
    expect(await run(r.id)).toMatchObject({ status: 'RUNNING', item_count: 0 });
    expect(await jobs(r.id)).toBe(1);
  });
});

describe('a run that fails', () => {
  it('logs the error with its run and tool, and frees the slot', async () => {
    const { accountId, principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const real = t.app.core.sources.localBusinesses;
    const sources: Sources = {
      ...t.app.core.sources,
      localBusinesses: {
        ...real,
        searchPlaces: async () => {
          throw new Error('socket hang up');
        },
      },
    };
    const { logger, lines } = recordingLogger();
    await executeRun({ ...t.app.core, sources, logger }, r.id);
    // Failed on an error of its own, not a stop: no stop reason (statusMessage says what happened).
    expect(await run(r.id)).toMatchObject({
      status: 'FAILED',
      stop_reason: null,
      item_count: 0,
      charged: 0n,
      settled: true,
    });
    const failed = lines.find((l) => l.msg === 'run failed') as
      | { level: number; runId: string; err: { message: string } }
      | undefined;
    expect(failed).toMatchObject({ level: 50, runId: r.id, tool: 'maps', err: { message: 'socket hang up' } });
    expect(await activeRuns(accountId)).toBe(0);
  });
});

describe('what a finished run says', () => {
  const finish = async (tool: string, input: unknown, creditsMicros?: bigint) => {
    const { principal } = await account(creditsMicros);
    const { run: r } = await startRun(t.app.core, principal, tool, input);
    await executeRun(t.app.core, r.id);
    return run(r.id);
  };

  it('counts the units found and billed for a tool that bills what it finds', async () => {
    const emails = (
      await t.app.core.sql`select email from person where mobile is not null and email is not null order by id limit 2`
    ).map((r) => r.email as string);
    const ended = await finish('mobile-finder', { inputs: [...emails, 'nobody@nowhere.example.org'] });
    expect(ended).toMatchObject({
      status: 'SUCCEEDED',
      status_message: 'Finished: 3 inputs; 2 mobile numbers found and billed',
      stop_reason: null,
      item_count: 3,
      billed_units: 2,
      charged: 500_000n,
    });
  });

  it('names the overdraft in the hold of a tool that may spend past the wallet', async () => {
    // 0.01 USD in the wallet: 1.01 USD held, 258 leads at 0.0039 USD.
    const ended = await finish(
      'lead-scraper',
      { url: 'https://app.apollo.io/#/people?personLocations[]=United%20States', count: 1000 },
      10_000n,
    );
    expect(ended).toMatchObject({
      status: 'SUCCEEDED',
      status_message:
        'Stopped after 258 leads: the 1.01 USD held for this run (the wallet balance plus 1.00 USD) is used up. Buy credits to get more.',
      stop_reason: 'budget_exhausted',
      item_count: 258,
      charged: 258n * 3_900n,
    });
  });

  it('adds the runner’s note after the count', async () => {
    const ended = await finish('tech-stack', { technology: 'klaviyo' });
    expect(ended.status_message).toMatch(
      new RegExp(`^Finished: ${ended.item_count} domains\\. Looked up in the \\d{4}-\\d{2} data$`),
    );
  });
});

describe('an attempt that resumes part-way through a page', () => {
  it('skips the stored part of the page and stores the rest at the right place', async () => {
    const { principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const real = t.app.core.sources.localBusinesses;
    // The first attempt got a short first page (30 listings) and then its worker stopped.
    const stopping = new AbortController();
    let pages = 0;
    const sources: Sources = {
      ...t.app.core.sources,
      localBusinesses: {
        ...real,
        searchPlaces: async (query) => {
          if (pages++ === 0) return (await real.searchPlaces(query)).slice(0, 30);
          stopping.abort();
          return new Promise<Place[]>(() => {});
        },
      },
    };
    await executeRun({ ...t.app.core, sources }, r.id, stopping.signal);
    expect(await run(r.id)).toMatchObject({ status: 'RUNNING', item_count: 30, charged: 30n * PRICE });
    // The next attempt reads whole pages of 50: the first 30 rows of its first page are stored already.
    await executeRun(t.app.core, r.id);
    expect(await run(r.id)).toMatchObject({
      status: 'SUCCEEDED',
      stop_reason: null,
      item_count: expectedRows,
      charged: BigInt(expectedRows) * PRICE,
      billed_units: expectedRows,
    });
    expect(await seqs(r.id)).toEqual(Array.from({ length: expectedRows }, (_, i) => i));
    const { run: whole } = await startRun(t.app.core, principal, 'maps', INPUT);
    await executeRun(t.app.core, whole.id);
    expect(await placeIds(r.id)).toEqual(await placeIds(whole.id));
  });
});

describe('settling against a hold of both kinds of credit', () => {
  it('charges the whole hold when the run uses it all, plan and purchased credits together', async () => {
    const { accountId, principal } = await account();
    // 0.05 USD of the wallet is purchased credit, spent first: the hold takes it and the rest from plan credits.
    await t.app.core
      .sql`update wallet set plan_micros = plan_micros - 50000, purchased_micros = purchased_micros + 50000 where account_id = ${accountId}`;
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const [hold] = await t.app.core
      .sql`select hold_plan_micros::text as plan, hold_purchased_micros::text as purchased from run where id = ${r.id}`;
    expect(BigInt(hold!.purchased as string)).toBe(50_000n);
    expect(BigInt(hold!.plan as string) + 50_000n).toBe(120n * PRICE);
    await executeRun(t.app.core, r.id);
    // The hold paid for every row the search found: the run ran to completion, not out of money.
    expect(await run(r.id)).toMatchObject({
      status: 'SUCCEEDED',
      stop_reason: null,
      item_count: expectedRows,
      charged: BigInt(expectedRows) * PRICE,
    });
  });
});

describe('with money checks off', () => {
  it('runs to the end whatever the wallet holds: nothing is capped', async () => {
    const { principal } = await account(0n);
    const deps = { ...t.app.core, config: { ...t.app.core.config, enforceLimits: false } };
    const { run: r } = await startRun(deps, principal, 'maps', INPUT);
    await executeRun(deps, r.id);
    expect(await run(r.id)).toMatchObject({
      status: 'SUCCEEDED',
      status_message: `Finished: ${expectedRows} businesses`,
      stop_reason: null,
      item_count: expectedRows,
    });
  });
});

describe('what the account’s event stream hears', () => {
  it('a progress event for each page stored before the last, then one finished event, which brings the last', async () => {
    const { accountId, principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const kinds: string[] = [];
    const events = await t.app.core.events.subscribe('runEvents', accountId);
    const following = (async () => {
      for await (const event of events) {
        if (event.run.id !== r.id || event.run.itemCount === 0) continue;
        const { kind, run: snapshot } = event;
        kinds.push(`${kind} ${snapshot.itemCount} ${snapshot.status} ${snapshot.complete} ${snapshot.stoppedReason}`);
        if (event.kind === 'finished') return;
      }
    })();
    await executeRun(t.app.core, r.id);
    await following;
    // The runner marks the page that fills the search as its last: it is stored with the run's end.
    // A run in flight is neither complete nor stopped; the end's event says it ran to completion.
    expect(kinds).toEqual([
      'progress 50 RUNNING null null',
      'progress 100 RUNNING null null',
      `finished ${expectedRows} SUCCEEDED true null`,
    ]);
  });
});

describe('a cancel accepted after the last batch', () => {
  it('ends the run ABORTED, not SUCCEEDED, with every row it stored', async () => {
    const { principal } = await account();
    const { run: r } = await startRun(t.app.core, principal, 'maps', INPUT);
    const real = t.app.core.sources.localBusinesses;
    let pages = 0;
    const sources: Sources = {
      ...t.app.core.sources,
      localBusinesses: {
        ...real,
        searchPlaces: async (query) => {
          if (pages++ < 2) return real.searchPlaces(query);
          // The cancel lands while the runner reads its last (empty) page; nothing announces it in time.
          await t.app.core
            .sql`update run set status = 'ABORTING', status_message = 'Cancelling: results stored so far are kept' where id = ${r.id}`;
          return [];
        },
      },
    };
    await executeRun({ ...t.app.core, sources }, r.id);
    expect(await run(r.id)).toMatchObject({
      status: 'ABORTED',
      status_message: 'Cancelled: 100 businesses kept',
      stop_reason: 'cancelled',
      item_count: 100,
      charged: 100n * PRICE,
      settled: true,
    });
  });
});

describe('the stops of one run, one by one', () => {
  const runOf = (startedAt: Date) => ({
    id: `run_stops_${Math.random().toString(36).slice(2)}`,
    startedAt,
    createdAt: startedAt,
  });
  const HOUR = 3600;

  it('keeps the first reason, aborts the signal with it, and settles stopped() then', async () => {
    const stops = await watchStops(t.app.core, runOf(new Date()), HOUR, new AbortController().signal);
    expect(stops.reason).toBeUndefined();
    const stopped = stops.stopped();
    stops.stop('cancelled');
    stops.stop('timed-out');
    expect(stops.reason).toBe('cancelled');
    expect(stops.signal.aborted).toBe(true);
    expect(stops.signal.reason).toBe('cancelled');
    expect(await stopped).toBeNull();
    stops.release();
  });

  it('stops shutdown for a worker signal aborted before or after it starts watching', async () => {
    const before = new AbortController();
    before.abort();
    const early = await watchStops(t.app.core, runOf(new Date()), HOUR, before.signal);
    expect(early.reason).toBe('shutdown');
    early.release();
    const after = new AbortController();
    const late = await watchStops(t.app.core, runOf(new Date()), HOUR, after.signal);
    after.abort();
    expect(late.reason).toBe('shutdown');
    late.release();
  });

  it('checkDeadline stops timed-out once the limit from the start has passed, not before', async () => {
    const fresh = await watchStops(t.app.core, runOf(new Date()), HOUR, new AbortController().signal);
    fresh.checkDeadline();
    expect(fresh.reason).toBeUndefined();
    fresh.release();
    const old = await watchStops(
      t.app.core,
      runOf(new Date(Date.now() - 2 * HOUR * 1000)),
      HOUR,
      new AbortController().signal,
    );
    old.checkDeadline();
    expect(old.reason).toBe('timed-out');
    old.release();
  });

  it("release stops listening: to the worker signal and to the run's topic", async () => {
    const { events, counts } = countingEvents(t.app.core.events);
    const worker = new AbortController();
    const stops = await watchStops({ ...t.app.core, events }, runOf(new Date()), HOUR, worker.signal);
    expect(counts).toEqual({ open: 1, made: 1 });
    stops.release();
    expect(counts).toEqual({ open: 0, made: 1 });
    worker.abort();
    expect(stops.reason).toBeUndefined();
  });

  it('hands back a run that has not ended, and leaves one that has without a job', async () => {
    const { principal } = await account();
    const { run: going } = await startRun(t.app.core, principal, 'maps', INPUT);
    await t.app.core.sql`select graphile_worker.remove_job(${going.id})`;
    await handBack(t.app.core, going.id);
    expect(await jobs(going.id)).toBe(1);
    await executeRun(t.app.core, going.id);
    expect(await status(going.id)).toBe('SUCCEEDED');
    await t.app.core.sql`select graphile_worker.remove_job(${going.id})`;
    await handBack(t.app.core, going.id);
    expect(await jobs(going.id)).toBe(0);
  });

  it("cancelRun refuses another account's run, an id it cannot store, a tool that cannot be cancelled, and an ended run", async () => {
    const { principal } = await account();
    const { principal: other } = await account();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const refusal = (err: unknown) => {
      expect(err).toBeInstanceOf(AppError);
      const { status, code, message } = err as AppError;
      return { status, code, message };
    };
    expect(refusal(await cancelRun(t.app.core, other, run.id).catch((e) => e))).toMatchObject({
      status: 404,
      code: 'not_found',
      message: expect.stringMatching(/^Run /),
    });
    const unstorable = await cancelRun(t.app.core, principal, 'run_\u0000').catch((e) => e);
    expect(unstorable).toBeInstanceOf(ValidationError);
    expect(((unstorable as ValidationError).details as { path: string }[]).map((d) => d.path)).toEqual(['runId']);
    const { run: leads } = await startRun(t.app.core, principal, 'lead-scraper', leadScraperTool.example);
    expect(refusal(await cancelRun(t.app.core, principal, leads.id).catch((e) => e))).toEqual({
      status: 409,
      code: 'not_cancellable',
      message: `${leadScraperTool.title} runs cannot be cancelled; this one will finish on its own.`,
    });
    await executeRun(t.app.core, run.id);
    expect(refusal(await cancelRun(t.app.core, principal, run.id).catch((e) => e))).toEqual({
      status: 409,
      code: 'run_finished',
      message: 'The run has already ended (SUCCEEDED).',
    });
  });
});
