import { ApifyApiError, ApifyClient } from 'apify-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { runColumns } from '../helpers/runs.ts';
import { startFakeApify, type FakeApify, type FakeRun } from '../helpers/fake-apify.ts';
import { waitFor } from '../helpers/wait.ts';
import { collect, disposeClients, wsClient } from '../helpers/ws.ts';
import { parseMetrics, sum } from '../helpers/metrics.ts';
import { leadgate } from '../helpers/process.ts';
import { graphql } from '../helpers/gql/index.ts';
import { settleUpstreamCost } from '../../src/runs/upstream.ts';

const RunItems = graphql(`
  subscription UpstreamApifyRunItems($id: ID!) { runItems(id: $id) { offset results { __typename ... on MapsResult { placeId } } run { status } } }
`);

/**
 * The map-listing scraper on an Apify actor: the official client (apify-client) against a local fake
 * of the API v2 subset the connector uses (test/helpers/fake-apify.ts). The fake's runs move only when
 * the test pushes items or changes their status, as an actor would.
 */

let t: TestApp;
let fake: FakeApify;
let key: string;
let accountId: string;

const ACTOR = 'compass~crawler-google-places';
const PRICE_MICROS = mapsTool.price.unitMicros;

beforeAll(async () => {
  fake = await startFakeApify({ actors: [ACTOR] });
  t = await startTestApp({
    config: {
      apify: { token: fake.token, baseUrl: fake.url },
      toolSources: { maps: { engine: 'apify', actorId: undefined } },
    },
  });
  ({ apiKey: key, accountId } = await t.account({ creditsMicros: 100_000_000n }));
});
afterEach(() => disposeClients());
afterAll(async () => {
  await t?.stop();
  await fake?.close();
});

/** A place as compass/crawler-google-places writes it to its dataset (fields from the actor's output schema). */
const place = (n: number, searchString = 'dentist') => ({
  title: `Smile Dental ${n}`,
  categoryName: 'Dentist',
  address: `${100 + n} Main St, Denver, CO 80202`,
  street: `${100 + n} Main St`,
  city: 'Denver',
  state: 'Colorado',
  postalCode: '80202',
  countryCode: 'US',
  phone: `+1 303-555-01${String(n).padStart(2, '0')}`,
  website: `https://smile${n}.example.com/`,
  totalScore: 4.5,
  reviewsCount: 120 + n,
  openingHours: [
    { day: 'Monday', hours: '9 AM to 5 PM' },
    { day: 'Tuesday', hours: '9 AM to 5 PM' },
  ],
  location: { lat: 39.74 + n / 1000, lng: -104.99 },
  placeId: `ChIJplace${n}`,
  url: `https://www.google.com/maps/search/?api=1&query=Smile&query_place_id=ChIJplace${n}`,
  searchString,
  '#debug': { requestId: n },
});

const runRow = (id: string) =>
  runColumns(t.app.core.sql, id, [
    'status',
    'status_message',
    'item_count',
    'charged_micros',
    'upstream_run_id',
    'upstream_actor_id',
    'upstream_offset',
    'upstream_cost_micros',
    'error_detail',
  ]);

const until = <T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string) =>
  waitFor(read, ok, { timeoutMs: 30_000, intervalMs: 50, what });

async function startMaps(
  body: Record<string, unknown> = {
    searchStringsArray: ['dentist'],
    locationQuery: 'Denver, CO',
    maxCrawledPlacesPerSearch: 20,
  },
): Promise<{ runId: string; upstream: FakeRun }> {
  const next = fake.nextRun();
  const started = await t.request('POST', '/api/v1/scrape/maps', { key, body });
  expect(started.status).toBe(200);
  return { runId: started.body.runId as string, upstream: await next };
}

async function rows(runId: string) {
  const res = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
  expect(res.status).toBe(200);
  return res.body as Record<string, unknown>[];
}

describe('maps on compass/crawler-google-places', { timeout: 60_000 }, () => {
  it('starts the actor with the mapped input within the hold, streams its items into rows of the spec columns, shows its status message, bills what was delivered and records the upstream run', async () => {
    const walletBefore = await t.walletMicros(accountId);
    const { runId, upstream } = await startMaps();
    expect(upstream.actId).toBe(ACTOR);
    expect(upstream.input).toEqual({
      searchStringsArray: ['dentist'],
      locationQuery: 'Denver, CO',
      maxCrawledPlacesPerSearch: 20,
      language: 'en',
    });
    // The bound: no more items than the hold pays for, no more upstream spending than it holds.
    expect(Number(upstream.options.maxItems)).toBe(20);
    expect(Number(upstream.options.maxTotalChargeUsd)).toBeCloseTo(20 * 0.0099, 6);
    expect(Number(upstream.options.timeout)).toBeGreaterThan(0);

    // RUNNING at once, attached to the upstream run before any item exists.
    await until(
      () => runRow(runId),
      (r) => r.upstream_run_id === upstream.id,
      'the upstream run id stored',
    );
    expect((await runRow(runId)).status).toBe('RUNNING');

    upstream.push(place(1), place(2));
    upstream.set('RUNNING', 'Crawled 2 of 20 places');
    await until(
      () => runRow(runId),
      (r) => r.item_count === 2 && r.status_message === 'Crawled 2 of 20 places',
      'two rows and the upstream message',
    );
    const status = await t.request('GET', `/api/v1/scrape/status/${runId}`, { key });
    expect(status.body.statusMessage ?? status.body.status_message).toBe('Crawled 2 of 20 places');

    upstream.push(place(3));
    upstream.usageTotalUsd = 0.0123;
    upstream.set('SUCCEEDED', 'Finished! Scraped 3 places');
    const end = await t.waitForRun(key, runId);
    // The actor ended on its own within the hold: the run did all it was asked.
    expect(end).toMatchObject({ status: 'SUCCEEDED', complete: true, stoppedReason: null });

    const got = await rows(runId);
    expect(got).toHaveLength(3);
    expect(got[0]).toEqual({
      name: 'Smile Dental 1',
      category: 'Dentist',
      address: '101 Main St, Denver, CO 80202',
      street: '101 Main St',
      city: 'Denver',
      state: 'Colorado',
      postal_code: '80202',
      country_code: 'US',
      phone: '+1 303-555-0101',
      website: 'https://smile1.example.com/',
      emails: [],
      rating: 4.5,
      review_count: 121,
      hours: ['Monday: 9 AM to 5 PM', 'Tuesday: 9 AM to 5 PM'],
      latitude: 39.741,
      longitude: -104.99,
      place_id: 'ChIJplace1',
      url: 'https://www.google.com/maps/search/?api=1&query=Smile&query_place_id=ChIJplace1',
      search_term: 'dentist',
    });
    expect(got.map((r) => r.place_id)).toEqual(['ChIJplace1', 'ChIJplace2', 'ChIJplace3']);

    const row = await runRow(runId);
    expect(row).toMatchObject({
      item_count: 3,
      upstream_actor_id: ACTOR,
      upstream_offset: 3,
      upstream_cost_micros: '12300',
    });
    expect(BigInt(row.charged_micros)).toBe(3n * PRICE_MICROS);
    expect(walletBefore - (await t.walletMicros(accountId))).toBe(3n * PRICE_MICROS);
    // One upstream run, never aborted: it ended on its own.
    expect(upstream.aborts).toBe(0);
  });

  it('rows reach a runItems subscriber while the upstream run is still RUNNING', async () => {
    const { runId, upstream } = await startMaps();
    const client = wsClient(t.url, key);
    const stream = collect(
      client,
      RunItems,
      { id: runId },
      'runItems',
      (batches) => batches.flatMap((b) => b.results).length >= 2,
    );
    upstream.push(place(11), place(12));
    const batches = await stream.done;
    expect(
      batches.flatMap((b) => b.results.map((r) => (r.__typename === 'MapsResult' ? r.placeId : undefined))),
    ).toEqual(['ChIJplace11', 'ChIJplace12']);
    // Delivered while the actor still runs.
    expect(upstream.status).toBe('RUNNING');
    expect(batches.at(-1)!.run.status).toBe('RUNNING');
    upstream.set('SUCCEEDED');
    expect((await t.waitForRun(key, runId)).status).toBe('SUCCEEDED');
  });

  it('a cancel aborts the upstream run and keeps the rows read', async () => {
    const { runId, upstream } = await startMaps();
    upstream.push(place(21), place(22));
    await until(
      () => runRow(runId),
      (r) => r.item_count === 2,
      'two rows',
    );
    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${runId}`, { key });
    expect(cancel.status).toBe(200);
    const end = await t.waitForRun(key, runId);
    expect(end).toMatchObject({ status: 'ABORTED', complete: false, stoppedReason: 'cancelled' });
    expect(upstream.aborts).toBe(1);
    expect(upstream.status).toBe('ABORTED');
    expect(await rows(runId)).toHaveLength(2);
    expect(BigInt((await runRow(runId)).charged_micros)).toBe(2n * PRICE_MICROS);
  });

  it('an upstream run that FAILED ends the run FAILED with the rows delivered kept and billed', async () => {
    const { runId, upstream } = await startMaps();
    upstream.push(place(31));
    await until(
      () => runRow(runId),
      (r) => r.item_count === 1,
      'one row',
    );
    upstream.push(place(32));
    upstream.set('FAILED', 'The crawler was blocked');
    const end = await t.waitForRun(key, runId);
    expect(end).toMatchObject({ status: 'FAILED', complete: false, stoppedReason: 'upstream_failed' });
    const row = await runRow(runId);
    // Every item the dataset holds is read before the end.
    expect(row.item_count).toBe(2);
    expect(row.status_message).toBe('The upstream run failed (The crawler was blocked): 2 businesses kept');
    expect(BigInt(row.charged_micros)).toBe(2n * PRICE_MICROS);
    expect(await rows(runId)).toHaveLength(2);
  });

  it('an upstream run that TIMED-OUT ends the run TIMED-OUT', async () => {
    const { runId, upstream } = await startMaps();
    upstream.push(place(41));
    upstream.set('TIMED-OUT');
    const end = await t.waitForRun(key, runId);
    // The upstream run is given the run's own time limit: its timeout is the run's.
    expect(end).toMatchObject({ status: 'TIMED-OUT', complete: false, stoppedReason: 'time_limit' });
    expect((await runRow(runId)).status_message).toBe('The upstream run timed out: 1 business kept');
    expect(await rows(runId)).toHaveLength(1);
  });

  it('an upstream run aborted on its side ends the run ABORTED for an upstream failure, not a cancel', async () => {
    const { runId, upstream } = await startMaps();
    upstream.push(place(45));
    upstream.set('ABORTED', 'Aborted by the platform');
    const end = await t.waitForRun(key, runId);
    expect(end).toMatchObject({ status: 'ABORTED', complete: false, stoppedReason: 'upstream_failed' });
    expect(end.statusMessage).toBe('The upstream run was aborted (Aborted by the platform): 1 business kept');
  });

  it('429 and 500 answers are retried with backoff: the run completes with every item once', async () => {
    fake.fail(/\/v2\/(acts|actors)\/[^/]+\/runs$/, 500, 1);
    fake.fail(/\/v2\/datasets\/[^/]+\/items$/, 429, 2);
    fake.fail(/\/v2\/actor-runs\/[^/]+$/, 500, 2);
    const { runId, upstream } = await startMaps();
    upstream.push(place(51), place(52), place(53));
    upstream.set('SUCCEEDED');
    expect((await t.waitForRun(key, runId)).status).toBe('SUCCEEDED');
    expect((await rows(runId)).map((r) => r.place_id)).toEqual(['ChIJplace51', 'ChIJplace52', 'ChIJplace53']);
    const answered = fake.requests.map((r) => r.status);
    expect(answered.filter((s) => s === 429)).toHaveLength(2);
    expect(answered.filter((s) => s === 500)).toHaveLength(3);
  });
});

describe('the upstream refuses', { timeout: 60_000 }, () => {
  const upstreamErrors = async (reason: string) =>
    sum(parseMetrics((await t.request('GET', '/metrics')).text), 'leadgate_upstream_errors_total', {
      tool: 'maps',
      reason,
    });

  for (const [status, why] of [
    [401, 'a bad token'],
    [402, 'no money left on the operator account'],
  ] as const) {
    it(`${status} (${why}) at start fails the run with the caller's message, the detail for the operator, nothing billed`, async () => {
      const walletBefore = await t.walletMicros(accountId);
      const countBefore = await upstreamErrors(String(status));
      const runsBefore = fake.runs.length;
      fake.fail(/\/v2\/(acts|actors)\/[^/]+\/runs$/, status, 1);
      const started = await t.request('POST', '/api/v1/scrape/maps', {
        key,
        body: { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 5 },
      });
      const runId = started.body.runId as string;
      const end = await t.waitForRun(key, runId);
      expect(end).toMatchObject({ status: 'FAILED', complete: false, stoppedReason: 'upstream_failed' });
      const row = await runRow(runId);
      expect(row.status_message).toBe('upstream source unavailable');
      expect(row.error_detail).toContain(String(status));
      expect(row.charged_micros).toBe('0');
      expect(fake.runs.length).toBe(runsBefore);
      expect(await t.walletMicros(accountId)).toBe(walletBefore);
      expect(await upstreamErrors(String(status))).toBe(countBefore + 1);
    });
  }

  it('404 (an unknown actor) fails the run the same way', async () => {
    fake.actors.delete(ACTOR);
    try {
      const started = await t.request('POST', '/api/v1/scrape/maps', {
        key,
        body: { searchStringsArray: ['dentist'], maxCrawledPlacesPerSearch: 5 },
      });
      const end = await t.waitForRun(key, started.body.runId as string);
      expect(end).toMatchObject({ status: 'FAILED', stoppedReason: 'upstream_failed' });
      const row = await runRow(started.body.runId as string);
      expect(row.status_message).toBe('upstream source unavailable');
      expect(row.error_detail).toMatch(/404 record-not-found/);
      expect(row.charged_micros).toBe('0');
    } finally {
      fake.actors.add(ACTOR);
    }
  });

  it('a 402 mid-run keeps and bills the rows delivered, and only those', async () => {
    const { runId, upstream } = await startMaps();
    upstream.push(place(61), place(62));
    await until(
      () => runRow(runId),
      (r) => r.item_count === 2,
      'two rows',
    );
    fake.fail(/\/v2\/(datasets|actor-runs)\//, 402, 100);
    upstream.push(place(63));
    try {
      const end = await t.waitForRun(key, runId);
      expect(end).toMatchObject({ status: 'FAILED', complete: false, stoppedReason: 'upstream_failed' });
    } finally {
      fake.clearFaults();
    }
    const row = await runRow(runId);
    expect(row.status_message).toBe('upstream source unavailable');
    expect(row.item_count).toBe(2);
    expect(BigInt(row.charged_micros)).toBe(2n * PRICE_MICROS);
  });
});

describe('the platform as it behaves', { timeout: 60_000 }, () => {
  afterEach(() => {
    fake.notFoundAfterStart = 0;
    fake.loseStartAnswers = 0;
    fake.clearFaults();
    fake.pricing.delete(ACTOR);
  });

  it('a run READY at first that answers 404 for its first requests is asked again, and read once it is known', async () => {
    fake.notFoundAfterStart = 3;
    const before = fake.requests.length;
    const { runId, upstream } = await startMaps();
    upstream.push(place(61), place(62));
    upstream.set('SUCCEEDED');
    expect(await t.waitForRun(key, runId)).toMatchObject({ status: 'SUCCEEDED', complete: true });
    expect((await rows(runId)).map((r) => r.place_id)).toEqual(['ChIJplace61', 'ChIJplace62']);
    const notFound = fake.requests.slice(before).filter((r) => r.status === 404);
    expect(notFound.length).toBe(3);
    expect(upstream.aborts).toBe(0);
  });

  it('a cancel while a new run still answers 404 stops asking at once', async () => {
    fake.notFoundAfterStart = 1_000;
    const { runId, upstream } = await startMaps();
    const asked = () =>
      fake.requests.filter((r) => r.status === 404 && r.path.includes(upstream.defaultDatasetId)).length;
    await until(
      async () => asked(),
      (n) => n >= 2,
      'the dataset asked again',
    );
    const cancel = await t.request('POST', `/api/v1/scrape/cancel/${runId}`, { key });
    expect(cancel.status).toBe(200);
    expect(await t.waitForRun(key, runId)).toMatchObject({ status: 'ABORTED', stoppedReason: 'cancelled' });
    const after = asked();
    // Asked again at up to two-second intervals for 20 s if the stop did not end the wait.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    expect(asked() - after).toBeLessThanOrEqual(1);
  });

  it('a run the platform aborts at the charge the hold allows ends as its hold used up, not as a failure', async () => {
    // The actor costs twice what the tool charges: the hold for 20 places pays for 10 of its items.
    fake.pricing.set(ACTOR, { perItemUsd: (2 * Number(PRICE_MICROS)) / 1_000_000 });
    const { runId, upstream } = await startMaps();
    expect(Number(upstream.options.maxTotalChargeUsd)).toBeCloseTo((20 * Number(PRICE_MICROS)) / 1_000_000, 6);
    upstream.push(...Array.from({ length: 20 }, (_, n) => place(70 + n)));
    const end = await t.waitForRun(key, runId);
    expect(end).toMatchObject({ status: 'SUCCEEDED', complete: false, stoppedReason: 'budget_exhausted' });
    expect(end.statusMessage).toMatch(/^Stopped after 10 businesses: the .* USD held for this run is used up/);
    expect(upstream.aborts).toBe(0);
    expect(await runRow(runId)).toMatchObject({ item_count: 10, charged_micros: String(10n * PRICE_MICROS) });
  });

  it('an actor whose minimum charge is above the hold: the run fails saying so, nothing charged', async () => {
    fake.pricing.set(ACTOR, { minimumChargeUsd: 5 });
    const started = await t.request('POST', '/api/v1/scrape/maps', {
      key,
      body: { searchStringsArray: ['dentist'], locationQuery: 'Denver, CO', maxCrawledPlacesPerSearch: 20 },
    });
    expect(started.status).toBe(200);
    const end = await t.waitForRun(key, started.body.runId);
    expect(end).toMatchObject({ status: 'FAILED', stoppedReason: 'upstream_failed' });
    expect(end.statusMessage).toMatch(
      /^The live source of this tool charges at least 5\.00 USD a run, more than the 0\.\d+ USD held for this one: nothing ran and nothing was charged/,
    );
    expect(await runRow(started.body.runId)).toMatchObject({ charged_micros: '0', upstream_run_id: null });
  });

  it('a start whose input the actor’s schema refuses is 400 invalid-input naming the field, as the platform answers', async () => {
    const client = new ApifyClient({ token: fake.token, baseUrl: fake.url, maxRetries: 0 });
    const refused = await client
      .actor(ACTOR)
      .start({ searchStringsArray: ['dentist'], language: 'xx' })
      .catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(ApifyApiError);
    expect(refused).toMatchObject({ statusCode: 400, type: 'invalid-input' });
    expect((refused as ApifyApiError).message).toMatch(
      /^Input is not valid: Field input\.language must be equal to one of the allowed values: "en", /,
    );
  });

  /** The runs the fake started with this maps input, in order. */
  const startedWith = (body: Record<string, unknown>) =>
    fake.runs.filter((r) => JSON.stringify(r.input) === JSON.stringify(body));

  it('a start whose answer is lost is found among the actor’s runs by its input and adopted: one upstream run', async () => {
    fake.loseStartAnswers = 1;
    const { runId, upstream } = await startMaps({
      searchStringsArray: ['orthodontist'],
      locationQuery: 'Boulder, CO',
      maxCrawledPlacesPerSearch: 5,
    });
    upstream.push(place(101), place(102));
    upstream.set('SUCCEEDED');
    expect(await t.waitForRun(key, runId)).toMatchObject({ status: 'SUCCEEDED', complete: true });
    expect(startedWith(upstream.input as Record<string, unknown>)).toEqual([upstream]);
    expect(upstream.aborts).toBe(0);
    expect(await runRow(runId)).toMatchObject({ upstream_run_id: upstream.id, item_count: 2 });
    expect(fake.requests.some((r) => r.method === 'GET' && /\/records\/INPUT$/.test(r.path))).toBe(true);
  });

  it('a lost start answer whose run is not found in time: the start is asked again and the run left behind is aborted', async () => {
    fake.loseStartAnswers = 1;
    // The lookup after the lost answer is refused once: nothing found, so the start is asked again.
    fake.fail(/\/v2\/(acts|actors)\/[^/]+\/runs$/, 403, 1, 'GET');
    const lookups = fake.requests.length;
    const body = { searchStringsArray: ['endodontist'], locationQuery: 'Aurora, CO', maxCrawledPlacesPerSearch: 5 };
    const first = fake.nextRun();
    const started = await t.request('POST', '/api/v1/scrape/maps', { key, body });
    expect(started.status).toBe(200);
    const orphan = await first;
    const kept = await until(
      async () => (await runRow(started.body.runId)).upstream_run_id as string | null,
      (id) => id !== null,
      'the upstream run stored',
    );
    const adopted = fake.runs.find((r) => r.id === kept)!;
    expect(adopted).toBeDefined();
    expect(kept).not.toBe(orphan.id);
    await until(
      async () => orphan.status,
      (s) => s === 'ABORTED',
      'the orphan aborted',
    );
    expect(orphan.aborts).toBe(1);
    adopted.push(place(111));
    adopted.set('SUCCEEDED');
    expect(await t.waitForRun(key, started.body.runId)).toMatchObject({ status: 'SUCCEEDED', complete: true });
    expect(adopted.aborts).toBe(0);
    expect(fake.requests.slice(lookups).filter((r) => r.status === 403)).toHaveLength(1);
  });

  it('a lost start answer never adopts or aborts the upstream run of another run of ours with the same input', async () => {
    const body = { searchStringsArray: ['periodontist'], locationQuery: 'Lakewood, CO', maxCrawledPlacesPerSearch: 5 };
    const a = await startMaps(body);
    await until(
      async () => (await runRow(a.runId)).upstream_run_id,
      (id) => id === a.upstream.id,
      'run A attached',
    );
    fake.loseStartAnswers = 1;
    const b = await startMaps(body);
    await until(
      async () => (await runRow(b.runId)).upstream_run_id,
      (id) => id !== null,
      'run B attached',
    );
    expect((await runRow(b.runId)).upstream_run_id).toBe(b.upstream.id);
    expect(b.upstream.id).not.toBe(a.upstream.id);
    for (const { runId, upstream } of [a, b]) {
      upstream.push(place(121));
      upstream.set('SUCCEEDED');
      expect(await t.waitForRun(key, runId)).toMatchObject({ status: 'SUCCEEDED' });
      expect(upstream.aborts).toBe(0);
    }
    expect(startedWith(a.upstream.input as Record<string, unknown>)).toEqual([a.upstream, b.upstream]);
  });

  it('a cost the platform has not counted when the run ends is settled later by a job', async () => {
    const { runId, upstream } = await startMaps();
    upstream.push(place(91));
    upstream.costSettled = false;
    upstream.usageTotalUsd = 0.0077;
    upstream.set('SUCCEEDED');
    expect((await t.waitForRun(key, runId)).status).toBe('SUCCEEDED');
    await until(
      async () =>
        (
          await t.app.core.sql`
        select count(*)::int as n from graphile_worker.jobs
        where task_identifier = 'settle_upstream_cost' and key = ${`upstream-cost:${runId}`}`
        )[0]!.n as number,
      (n) => n === 1,
      'the job that settles the cost',
    );
    expect((await runRow(runId)).upstream_cost_micros).toBe('0');
    // The job's work: refused while the platform has not counted it, stored once it has.
    const deps = { db: t.app.core.db, engine: t.app.core.upstream };
    await expect(settleUpstreamCost(deps, runId)).rejects.toThrow(/has not settled its cost yet/);
    upstream.costSettled = true;
    await settleUpstreamCost(deps, runId);
    expect((await runRow(runId)).upstream_cost_micros).toBe('7700');
  });
});

describe('leadgate report margin', { timeout: 60_000 }, () => {
  it('prints revenue, upstream cost and margin per tool over the span', async () => {
    const [expected] = await t.app.core.sql`
      select count(*)::int as runs, count(upstream_run_id)::int as upstream, sum(charged_micros)::bigint as revenue, sum(upstream_cost_micros)::bigint as cost
      from run where tool = 'maps'`;
    expect(BigInt(expected!.cost)).toBeGreaterThan(0n);
    const out = await leadgate(['report', 'margin', '--since', '7d', '--json'], { DATABASE_URL: t.database.url });
    expect(out).toMatchObject({ code: 0 });
    const maps = (JSON.parse(out.stdout) as { tools: Record<string, unknown>[] }).tools.find((r) => r.tool === 'maps');
    const usd = (micros: bigint) =>
      (Number(micros) / 1e6)
        .toFixed(6)
        .replace(/0+$/, '')
        .replace(/\.(\d)$/, '.$10');
    expect(maps).toEqual({
      tool: 'maps',
      runs: expected!.runs,
      upstreamRuns: expected!.upstream,
      revenueUsd: usd(BigInt(expected!.revenue)),
      upstreamCostUsd: usd(BigInt(expected!.cost)),
      marginUsd: usd(BigInt(expected!.revenue) - BigInt(expected!.cost)),
    });
    const table = await leadgate(['report', 'margin', '--since', '24h'], { DATABASE_URL: t.database.url });
    expect(table.stdout).toMatch(
      /^tool\s+runs\s+upstream runs\s+revenue USD\s+upstream cost USD\s+margin USD\s+margin$/m,
    );
    // The table shows the upstream cost recorded on the maps runs, as the platform settled it.
    const cost = usd(BigInt(expected!.cost)).replace(/0$/, '').replace('.', '\\.');
    expect(table.stdout).toMatch(new RegExp(`^maps\\s+\\d+\\s+\\d+\\s+[\\d.]+\\s+${cost}\\s+`, 'm'));
    expect(
      (await leadgate(['report', 'margin', '--since', 'forever'], { DATABASE_URL: t.database.url })).code,
    ).not.toBe(0);
  });
});
