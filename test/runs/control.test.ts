import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { drizzle } from 'drizzle-orm/postgres-js';
import { executeRun } from '../../src/runs/engine/index.ts';
import { followRunItems, runStatus, waitForRun } from '../../src/runs/follow.ts';
import { startRun } from '../../src/runs/start.ts';
import type { Principal } from '../../src/accounts/accounts.ts';
import type { Sources } from '../../src/sources/types.ts';
import { TOOLS } from '../../src/tools/index.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runColumns } from '../helpers/runs.ts';
import { countingEvents, nextSubscription } from '../helpers/events.ts';
import { gatedSources as gatedOver } from '../helpers/sources.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, disposeClients, wsClient } from '../helpers/ws.ts';
import { graphql } from '../helpers/gql/index.ts';

const CancelRun = graphql(
  `mutation RunsControlCancelRun($id: ID!) { cancelRun(id: $id) { run { id status } userErrors { code } } }`,
);
const CancelRunAgain = graphql(
  `mutation RunsControlCancelRunAgain($id: ID!) { cancelRun(id: $id) { run { id } userErrors { code field message } } }`,
);
const RunItems = graphql(`
  subscription RunsControlRunItems($id: ID!) { runItems(id: $id) { offset results { __typename ... on MapsResult { placeId } } run { status } } }
`);
const RunEvents = graphql(`subscription RunsControlRunEvents { runEvents { kind run { id status } } }`);

let t: TestApp;
let key: string;
let principal: Principal;

beforeAll(async () => {
  // No worker: each test drives the engine by hand, with sources it controls.
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account());
  principal = await t.app.core.auth.authenticate(`Bearer ${key}`);
});
afterEach(() => disposeClients());
afterAll(() => t?.stop());

const INPUT = { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 120 };
const PRICE_MICROS = mapsTool.price.unitMicros;

/** Sources whose place search pauses before page `n` (from 0) until `release(n)` is called. */
const gatedSources = () => gatedOver(t.app.core.sources);

/** The app's event bus, counting the subscriptions open now and ever made. */
const countingAppEvents = () => countingEvents(t.app.core.events);

/** A drizzle over the app's pool, and how many statements reading the run table it has sent. */
function countingRunReads() {
  let reads = 0;
  const counting = new Proxy(t.app.core.sql, {
    get: (target, prop, receiver) =>
      prop === 'unsafe'
        ? (query: string, ...rest: unknown[]) => {
            if (/\bfrom "run"/.test(query)) reads++;
            return (target.unsafe as (...a: unknown[]) => unknown)(query, ...rest);
          }
        : Reflect.get(target, prop, receiver),
  });
  return { db: drizzle(counting) as unknown as typeof t.app.core.db, reads: () => reads };
}

/** A stop signal that records the listeners of its `abort` added to it and taken off it. */
function recordingStop() {
  const controller = new AbortController();
  const listening = new Set<unknown>();
  const signal = {
    get aborted() {
      return controller.signal.aborted;
    },
    addEventListener(type: string, listener: () => void) {
      if (type === 'abort') listening.add(listener);
      controller.signal.addEventListener(type, listener);
    },
    removeEventListener(type: string, listener: () => void) {
      if (type === 'abort') listening.delete(listener);
      controller.signal.removeEventListener(type, listener);
    },
  } as unknown as AbortSignal;
  return { signal, stop: () => controller.abort(), listening };
}

const runRow = (id: string) => runColumns(t.app.core.sql, id, ['status', 'item_count', 'charged_micros', 'handled']);

describe('cancel', () => {
  it('stops a running run within the batch in hand: ABORTED, earlier rows kept, downloadable and billed only for them', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    gate.release(0);
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id);
    await gate.reachedPage(1); // page 0 stored, page 1 pending

    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${run.id}`, { key });
    expect(cancel.status).toBe(200);
    expect(cancel.body).toMatchObject({ runId: run.id, status: 'ABORTING' });
    await execution;

    const status = await t.request('GET', `/api/v1/scrape/status/${run.id}`, { key });
    expect(status.body).toMatchObject({
      status: 'ABORTED',
      statusMessage: 'Cancelled: 50 businesses kept',
      outputUrl: `${t.url}/api/downloads/${run.id}`,
    });
    const row = await runRow(run.id);
    expect(row.item_count).toBe(50);
    expect(BigInt(row.charged_micros)).toBe(50n * PRICE_MICROS);
    const csv = await t.request('GET', `/api/downloads/${run.id}`, { key });
    expect(csv.text.trim().split('\n')).toHaveLength(51);
    gate.release(1);
  });

  it('listens for a cancel before it asks for the first page, so a cancel while it waits on a page is heard', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    gate.release(0);
    // The run's topic is listened on only when the test lets it: a database slow to answer the LISTEN.
    let listen!: () => void;
    const listening = new Promise<void>((resolve) => (listen = resolve));
    const bus = t.app.core.events;
    const events: typeof bus = {
      ...bus,
      subscribe: async (topic, id) => {
        await listening;
        return bus.subscribe(topic, id);
      },
    };
    let pageAsked = false;
    void gate.reachedPage(0).then(() => (pageAsked = true));
    const execution = executeRun({ ...t.app.core, events, sources: gate.sources }, run.id);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(pageAsked, 'a page asked for before the cancel is listened for').toBe(false);
    listen();
    await gate.reachedPage(1); // page 0 stored, page 1 pending
    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${run.id}`, { key });
    expect(cancel.body).toMatchObject({ runId: run.id, status: 'ABORTING' });
    await execution;
    expect(await runRow(run.id)).toMatchObject({ status: 'ABORTED', item_count: 50 });
    gate.releaseAll();
  });

  it('ends a waiting run at once and releases its hold', async () => {
    const small = await startTestApp({ worker: false, config: { maxRunningRuns: 1 } });
    try {
      const { apiKey } = await small.account({ creditsMicros: 10_000_000n });
      const who = await small.app.core.auth.authenticate(`Bearer ${apiKey}`);
      await startRun(small.app.core, who, 'maps', INPUT);
      const { run: waiting } = await startRun(small.app.core, who, 'maps', INPUT);
      expect(waiting.status).toBe('READY');
      const before = await small.request('GET', '/api/v1/wallet', { key: apiKey });

      const cancel = await small.request('POST', `/api/v1/scrape/cancel/${waiting.id}`, { key: apiKey });
      expect(cancel.body).toMatchObject({
        status: 'ABORTED',
        statusMessage: 'Cancelled before it started: nothing was charged',
      });
      const after = await small.request('GET', '/api/v1/wallet', { key: apiKey });
      const held = Number(after.body.wallet.total_balance_dollars) - Number(before.body.wallet.total_balance_dollars);
      expect(held).toBeCloseTo(120 * 0.0099, 6);
      // The slot was never free: nothing else was promoted.
      const [counts] = await small.app.core.sql`select count(*)::int as running from run where status = 'RUNNING'`;
      expect(counts!.running).toBe(1);
    } finally {
      await small.stop();
    }
  });

  it('refuses finished runs with 409 run_finished, and other accounts’ runs with 404', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    await executeRun(t.app.core, run.id);
    const finished = await t.request('POST', `/api/v1/scrape/cancel/${run.id}`, { key });
    expect(finished.status).toBe(409);
    expect(finished.body.error.code).toBe('run_finished');

    const other = await t.account();
    const foreign = await t.request('POST', `/api/v1/scrape/cancel/${run.id}`, { key: other.apiKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('not_found');
  });

  it('refuses tools outside the spec’s cancellable list with 409 not_cancellable, and leaves the run alone', async () => {
    const tool = TOOLS.find((candidate) => !candidate.cancellable && candidate.name === 'lead-scraper');
    expect(tool, 'the lead scraper is registered and not cancellable').toBeDefined();
    const url = 'https://app.example.com/#/people?personTitles[]=ceo&personLocations[]=United%20States';
    const started = await t.request('POST', tool!.rest.path, { key, body: { url, count: 500 } });
    expect(started.status).toBe(200);
    const refused = await t.request('POST', `/api/v1/scrape/cancel/${started.body.runId}`, { key });
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('not_cancellable');
    expect((await runRow(started.body.runId)).status).toBe('RUNNING');
  });

  it('is a GraphQL mutation too, with the same codes', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id);
    await gate.reachedPage(0);
    const res = await t.graphql(key, CancelRun, { id: run.id });
    expect(res.body.data!.cancelRun).toEqual({ run: { id: run.id, status: 'ABORTING' }, userErrors: [] });
    await execution; // the pending page is never released: the stop does not wait for it
    expect((await runRow(run.id)).status).toBe('ABORTED');
    const again = await t.graphql(key, CancelRunAgain, { id: run.id });
    expect(again.body.data!.cancelRun).toEqual({
      run: null,
      userErrors: [{ code: 'RUN_FINISHED', field: null, message: expect.stringMatching(/ended/) }],
    });
  });
});

describe('time limits', () => {
  it('ends a run past its time limit TIMED-OUT, keeping its rows, even when its source hangs', async () => {
    const quick = await startTestApp({ worker: false, config: { runTimeoutSecs: 1 } });
    try {
      const { apiKey } = await quick.account();
      const who = await quick.app.core.auth.authenticate(`Bearer ${apiKey}`);
      const { run } = await startRun(quick.app.core, who, 'maps', INPUT);
      let pages = 0;
      const hanging: Sources = {
        ...quick.app.core.sources,
        localBusinesses: {
          ...quick.app.core.sources.localBusinesses,
          searchPlaces: (query) =>
            pages++ === 0 ? quick.app.core.sources.localBusinesses.searchPlaces(query) : new Promise(() => {}),
        },
      };
      // The source never answers: that executeRun returns at all shows the limit does not wait for it.
      await executeRun({ ...quick.app.core, sources: hanging }, run.id);
      const status = await quick.request('GET', `/api/v1/scrape/status/${run.id}`, { key: apiKey });
      expect(status.body.status).toBe('TIMED-OUT');
      expect(status.body.statusMessage).toBe("Timed out after 1 s (this tool's limit): 50 businesses kept");
      const [row] = await quick.app.core.sql`select item_count, charged_micros from run where id = ${run.id}`;
      expect(row).toMatchObject({ item_count: 50, charged_micros: String(50n * PRICE_MICROS) });
    } finally {
      await quick.stop();
    }
  });
});

describe('worker shutdown', () => {
  it('hands a run back: it stays RUNNING with its job queued again, and the next attempt completes it with no duplicate rows, billed once', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    gate.release(0);
    const shutdown = new AbortController();
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id, shutdown.signal);
    await gate.reachedPage(1);
    shutdown.abort();
    await execution;

    expect(await runRow(run.id)).toMatchObject({ status: 'RUNNING', item_count: 50 });
    const jobs = await t.app.core.sql`select key from graphile_worker.jobs where key = ${run.id}`;
    expect(jobs).toHaveLength(1);

    await executeRun(t.app.core, run.id);
    const expected = await t.app.core
      .sql`select count(*)::int as n from local_business where search_text @@ plainto_tsquery('english', 'dentist')`;
    const total = Math.min(120, expected[0]!.n as number);
    const row = await runRow(run.id);
    expect(row).toMatchObject({ status: 'SUCCEEDED', item_count: total });
    expect(BigInt(row.charged_micros)).toBe(BigInt(total) * PRICE_MICROS);
    const seqs = await t.app.core.sql`select seq from run_item where run_id = ${run.id} order by seq`;
    expect(seqs.map((r) => r.seq)).toEqual([...Array(total).keys()]);
    const ids = await t.app.core
      .sql`select count(distinct data->>'place_id')::int as n from run_item where run_id = ${run.id}`;
    expect(ids[0]!.n).toBe(total);
  });
});

describe('waitForFinish', () => {
  it('holds the status request until the run ends', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', { ...INPUT, maxCrawledPlacesPerSearch: 10 });
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id);
    await gate.reachedPage(0);
    // The request holds from the moment it subscribes to the run; the run cannot end before the pages are released.
    const holding = nextSubscription(t.app.core.events, 'runProgress', run.id);
    let answered = false;
    const waiting = t
      .request('GET', `/api/v1/scrape/status/${run.id}?waitForFinish=20`, { key })
      .finally(() => (answered = true));
    await holding;
    expect(answered).toBe(false);
    gate.releaseAll();
    const res = await waiting;
    await execution;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'SUCCEEDED', handled: 10 });
  });

  it('answers with the run as its end announced it, reading it once: the same run a read after the end gives', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', { ...INPUT, maxCrawledPlacesPerSearch: 10 });
    const { db, reads } = countingRunReads();
    const waiting = waitForRun({ ...t.app.core, db }, principal, run.id, 30);
    // The run ends only once the wait has read it (not ended yet) and waits for its end.
    await waitFor(reads, (n) => n === 1, { what: 'the wait read the run' });
    await executeRun(t.app.core, run.id);
    const answer = await waiting;
    expect(answer).toEqual(await runStatus(t.app.core, principal, run.id));
    expect(answer).toMatchObject({
      status: 'SUCCEEDED',
      itemCount: 10,
      finishedAt: expect.any(String),
      expiresAt: expect.any(String),
    });
    expect(answer.cost).toBeGreaterThan(0);
    expect(reads()).toBe(1);
  });

  it('answers with the run as it is once the wait passes', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id);
    await gate.reachedPage(0);
    const began = Date.now();
    const res = await t.request('GET', `/api/v1/scrape/status/${run.id}?waitForFinish=1`, { key });
    // A lower bound only (the wait was honoured); a slow machine cannot make it fail.
    expect(Date.now() - began).toBeGreaterThanOrEqual(900);
    expect(res.body.status).toBe('RUNNING');
    await t.request('POST', `/api/v1/scrape/cancel/${run.id}`, { key });
    await execution;
  });

  it('answers an id that is no run as not found, also while waiting, whatever its characters', async () => {
    // Each would be a run's channel to listen on: none reaches a statement as written.
    for (const id of ['"; create table injected (); --', 'x'.repeat(64), 'ünïcødé run', "run'quote"]) {
      const res = await t.request('GET', `/api/v1/scrape/status/${encodeURIComponent(id)}?waitForFinish=2`, { key });
      expect(res.status, id).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'not_found' });
    }
    const [row] = await t.app.core.sql<{ injected: string | null }[]>`select to_regclass('injected')::text as injected`;
    expect(row?.injected).toBeNull();
    // And the bus listens on: a wait for a real run still ends with the run.
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const waiting = t.request('GET', `/api/v1/scrape/status/${run.id}?waitForFinish=30`, { key });
    await executeRun(t.app.core, run.id);
    expect((await waiting).body).toMatchObject({ runId: run.id, status: 'SUCCEEDED' });
  });

  it('answers an ended run at once whatever the wait, and a status without a wait subscribes to nothing', async () => {
    const { events, counts } = countingAppEvents();
    const core = { ...t.app.core, events };
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    expect(await runStatus(core, principal, run.id)).toMatchObject({ status: 'RUNNING' });
    expect(counts).toEqual({ open: 0, made: 0 });
    await executeRun(t.app.core, run.id);
    // An hour's wait (longer than any test may take) ends at once for a run that has ended.
    expect(await runStatus(core, principal, run.id, 3600)).toMatchObject({ status: 'SUCCEEDED' });
    expect(counts).toEqual({ open: 0, made: 1 });
  });

  it('ends a wait when the process stops, answering the run as it is, and leaves no listener on the stop', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id);
    await gate.reachedPage(0);
    const stopping = recordingStop();
    const { db, reads } = countingRunReads();
    const waiting = waitForRun({ ...t.app.core, db, shutdown: stopping.signal }, principal, run.id, 3600);
    // Stopped only once the wait has read the run (still going) and waits for its end.
    await waitFor(reads, (n) => n === 1, { what: 'the wait to read the run' });
    expect(stopping.listening.size).toBe(1);
    stopping.stop();
    expect(await waiting).toMatchObject({ status: 'RUNNING' });
    expect(stopping.listening.size).toBe(0);
    // A process already stopping answers at once.
    expect(await waitForRun({ ...t.app.core, shutdown: stopping.signal }, principal, run.id, 3600)).toMatchObject({
      status: 'RUNNING',
    });
    expect(stopping.listening.size).toBe(0);
    await t.request('POST', `/api/v1/scrape/cancel/${run.id}`, { key });
    gate.releaseAll();
    await execution;
  });

  it('follows rows to the end of the run, then lets go of its subscription', async () => {
    const { events, counts } = countingAppEvents();
    const { run } = await startRun(t.app.core, principal, 'maps', { ...INPUT, maxCrawledPlacesPerSearch: 10 });
    await executeRun(t.app.core, run.id);
    const offsets: number[] = [];
    for await (const batch of followRunItems({ ...t.app.core, events }, principal, run.id, 4)) {
      offsets.push(batch.offset, batch.offset + batch.items.length);
      expect(batch.offset + batch.items.length).toBeLessThanOrEqual(batch.run.itemCount);
    }
    expect(offsets).toEqual([4, 10]);
    expect(counts).toEqual({ open: 0, made: 1 });
  });

  it('refuses waits over 60 seconds', async () => {
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    const res = await t.request('GET', `/api/v1/scrape/status/${run.id}?waitForFinish=61`, { key });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({
      code: 'validation_failed',
      details: [{ path: 'waitForFinish', message: 'must be at most 60' }],
    });
  });
});

describe('subscriptions', () => {
  it('runItems streams every row in order, then completes after the run ends', async () => {
    const gate = gatedSources();
    const { run } = await startRun(t.app.core, principal, 'maps', INPUT);
    gate.release(0);
    const execution = executeRun({ ...t.app.core, sources: gate.sources }, run.id);
    await gate.reachedPage(1);
    const stream = collect(wsClient(t.url, key), RunItems, { id: run.id }, 'runItems');
    // The rows stored so far come first: the subscription is in place before the rest are released.
    const first = await stream.first;
    expect([first.offset, first.results.length, first.run.status]).toEqual([0, 50, 'RUNNING']);
    // The same typed rows as Run.results.
    expect(new Set(first.results.map((r) => r.__typename))).toEqual(new Set(['MapsResult']));
    gate.releaseAll();
    await execution;
    const batches = await stream.done;
    const rows = batches.flatMap((b) => b.results);
    const stored = await t.app.core
      .sql`select data->>'place_id' as id from run_item where run_id = ${run.id} order by seq`;
    expect(rows.map((r) => (r.__typename === 'MapsResult' ? r.placeId : undefined))).toEqual(stored.map((r) => r.id));
    let offset = 0;
    for (const batch of batches) {
      expect(batch.offset).toBe(offset);
      offset += batch.results.length;
    }
    expect(batches.length).toBeGreaterThan(1);
  });

  it('runEvents reports the runs in flight, then every run of the account: created, progress, finished', async () => {
    const { apiKey } = await t.account();
    const who = await t.app.core.auth.authenticate(`Bearer ${apiKey}`);
    const gate = gatedSources();
    const { run: inFlight } = await startRun(t.app.core, who, 'maps', INPUT);
    const held = executeRun({ ...t.app.core, sources: gate.sources }, inFlight.id);
    await gate.reachedPage(0);

    const events = collect(wsClient(t.url, apiKey), RunEvents, {}, 'runEvents', (items) =>
      items.some((e) => e.kind === 'FINISHED' && e.run.id !== inFlight.id),
    );
    expect(await events.first).toEqual({ kind: 'PROGRESS', run: { id: inFlight.id, status: 'RUNNING' } });
    const { run } = await startRun(t.app.core, who, 'maps', { ...INPUT, maxCrawledPlacesPerSearch: 60 });
    await executeRun(t.app.core, run.id);
    const all = await events.done;
    const seen = all.filter((e) => e.run.id === run.id);
    expect(seen[0]).toEqual({ kind: 'CREATED', run: { id: run.id, status: 'RUNNING' } });
    expect(seen.some((e) => e.kind === 'PROGRESS')).toBe(true);
    expect(seen.at(-1)).toEqual({ kind: 'FINISHED', run: { id: run.id, status: 'SUCCEEDED' } });
    // The run in flight was reported once, as it was: nothing since the subscription changed it.
    expect(all.filter((e) => e.run.id === inFlight.id)).toHaveLength(1);

    gate.releaseAll();
    await held;
  });
});
