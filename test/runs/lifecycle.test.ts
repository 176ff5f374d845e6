import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { mapsTool } from '../../src/tools/maps.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

let t: TestApp;
let key: string;
let denverDentists: number;

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key } = await t.account());
  const [row] = await t.app.core
    .sql`select count(*)::int as n from local_business where city = 'Denver' and state = 'CO' and category = 'Dentist'`;
  denverDentists = row!.n;
});
afterAll(() => t?.stop());

/** The columns of a maps result row the GraphQL results are compared on. */
interface PlaceRow {
  name: string;
  place_id: string;
  review_count: number;
  latitude: number;
  emails: string[];
}

const RunWithResults = graphql(`
  query LifecycleRunWithResults($id: ID!) {
    run(id: $id) {
      id status statusMessage complete stoppedReason handled requested runTimeSecs outputUrl expiresAt cost billedUnits
      priceRule { text unit unitPrice }
      results(first: 2) { totalCount nodes { ... on MapsResult { name placeId reviewCount latitude emails } } }
    }
  }
`);
const SucceededRuns = graphql(`
  query LifecycleSucceededRuns { runs(first: 10, status: SUCCEEDED) { totalCount edges { cursor node { id status } } pageInfo { hasNextPage } } }
`);
const FailedRuns = graphql(`query LifecycleFailedRuns { runs(first: 10, status: FAILED) { edges { node { id } } } }`);
const FirstRuns = graphql(
  `query LifecycleFirstRuns { runs(first: 2) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
);
const NextRuns = graphql(
  `query LifecycleNextRuns($after: String) { runs(first: 2, after: $after) { edges { node { id } } pageInfo { hasNextPage } } }`,
);

describe('a maps run through the real worker', () => {
  let runId: string;

  it('answers at once with a runId, then goes RUNNING → SUCCEEDED', async () => {
    const started = await t.request('POST', '/api/v1/scrape/maps', { key, body: DENVER_DENTISTS });
    expect(started.status).toBe(200);
    expect(started.body).toMatchObject({ runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/), status: 'RUNNING' });
    runId = started.body.runId;

    const job = await t.app.core.sql`select task_identifier, key from graphile_worker.jobs where key = ${runId}`;
    const run = await t.app.core.sql`select status from run where id = ${runId}`;
    expect(run).toHaveLength(1);
    // The job may already be done; if it is still queued, it carries the run's id.
    for (const j of job) expect(j.task_identifier).toBe('run_tool');

    const finished = await t.waitForRun(key, runId);
    expect(denverDentists).toBeGreaterThan(0);
    expect(finished).toEqual({
      runId,
      status: 'SUCCEEDED',
      statusMessage: `Finished: ${denverDentists} businesses`,
      // Ran to completion: every dentist the search found, none held back by the budget or a stop.
      complete: true,
      stoppedReason: null,
      handled: denverDentists,
      requested: 100,
      runTimeSecs: expect.any(Number),
      outputUrl: `${t.url}/api/downloads/${runId}`,
      expiresAt: expect.any(String),
      // A finished run's charge, to check against the price table: cost = billed_units × unit_price.
      cost: Number((denverDentists * 0.0099).toFixed(6)),
      billed_units: denverDentists,
      price_rule: { text: '0.0099 USD per business', unit: 'business', unit_price: 0.0099 },
    });
    // Results are kept 48 hours after the end.
    const [row] = await t.app.core
      .sql`select extract(epoch from expires_at - finished_at)::int as secs from run where id = ${runId}`;
    expect(row!.secs).toBe(48 * 3600);
  });

  it('downloads a CSV with the header row and one row per business', async () => {
    const res = await t.request('GET', `/api/downloads/${runId}`, { key });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="maps-${runId}.csv"`);
    const records: string[][] = parse(res.text);
    expect(records[0]).toEqual(mapsTool.columns.map((c) => c.header));
    expect(records).toHaveLength(denverDentists + 1);
    const header = records[0]!;
    for (const record of records.slice(1)) {
      expect(record[header.indexOf('city')]).toBe('Denver');
      expect(record[header.indexOf('category')]).toBe('Dentist');
      expect(record[header.indexOf('search_term')]).toBe('dentist');
    }
    expect(await t.request('GET', `/api/downloads/${runId}?format=csv`, { key })).toMatchObject({
      status: 200,
      text: res.text,
    });
  });

  it('downloads the same rows as JSON and NDJSON, columns in order', async () => {
    const json = await t.request('GET', `/api/downloads/${runId}?format=json`, { key });
    expect(json.status).toBe(200);
    expect(json.body).toHaveLength(denverDentists);
    expect(Object.keys(json.body[0])).toEqual(mapsTool.columns.map((c) => c.key));
    const ndjson = await t.request('GET', `/api/downloads/${runId}?format=ndjson`, { key });
    expect(ndjson.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = ndjson.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toEqual(json.body);
    expect((await t.request('GET', `/api/downloads/${runId}?format=xls`, { key })).body.error.code).toBe(
      'validation_failed',
    );
  });

  it('downloads a page of rows with offset and limit, in every format', async () => {
    const all = (await t.request('GET', `/api/downloads/${runId}?format=json`, { key })).body as { place_id: string }[];
    expect(all.length).toBeGreaterThan(8);
    const page = await t.request('GET', `/api/downloads/${runId}?format=json&offset=3&limit=4`, { key });
    expect(page.body).toEqual(all.slice(3, 7));
    const tail = await t.request('GET', `/api/downloads/${runId}?format=ndjson&offset=${all.length - 2}`, { key });
    expect(
      tail.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line)),
    ).toEqual(all.slice(-2));
    const csv = parse((await t.request('GET', `/api/downloads/${runId}?format=CSV&offset=1&limit=2`, { key })).text, {
      columns: true,
    }) as { place_id: string }[];
    expect(csv.map((r) => r.place_id)).toEqual(all.slice(1, 3).map((r) => r.place_id));
    const bad = await t.request('GET', `/api/downloads/${runId}?offset=-1&limit=0`, { key });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { path: string }) => d.path).sort()).toEqual(['limit', 'offset']);
  });

  it('shows the same run through REST and GraphQL', async () => {
    const rest = await t.request('GET', `/api/v1/scrape/status/${runId}`, { key });
    const gql = await t.graphql(key, RunWithResults, { id: runId });
    expect(gql.body.errors).toBeUndefined();
    const { id, results, billedUnits, priceRule, ...fields } = gql.body.data!.run!;
    const { unitPrice, ...rule } = priceRule;
    // Money is a decimal string in GraphQL, a number in the REST status answer.
    expect({
      runId: id,
      ...fields,
      cost: Number(fields.cost),
      billed_units: billedUnits,
      price_rule: { ...rule, unit_price: Number(unitPrice) },
    }).toEqual(rest.body);
    const json = await t.request<PlaceRow[]>('GET', `/api/downloads/${runId}?format=json`, { key });
    expect(results!.totalCount).toBe(json.body.length);
    expect(results!.nodes).toEqual(
      json.body.slice(0, 2).map((r) => ({
        name: r.name,
        placeId: r.place_id,
        reviewCount: r.review_count,
        latitude: r.latitude,
        emails: r.emails,
      })),
    );
  });

  it('lists the run in the runs connection, filtered by status', async () => {
    const res = await t.graphql(key, SucceededRuns);
    expect(res.body.data!.runs.edges.map((e) => e.node.id)).toContain(runId);
    expect(res.body.data!.runs.totalCount).toBe(res.body.data!.runs.edges.length);
    const none = await t.graphql(key, FailedRuns);
    expect(none.body.data!.runs.edges).toEqual([]);
  });
});

describe('the overview routes', () => {
  it('POST /api/v1/maps/run starts a maps run and GET /api/v1/runs/{id}[/results] read it', async () => {
    const started = await t.request('POST', '/api/v1/maps/run', {
      key,
      body: { query: 'dentists in Denver, CO', limit: 5 },
    });
    expect(started.status).toBe(200);
    expect(started.body).toEqual({ runId: expect.any(String), status: 'RUNNING' });
    const { runId } = started.body;
    await t.waitForRun(key, runId);
    const run = await t.request('GET', `/api/v1/runs/${runId}`, { key });
    expect(run.body).toEqual({ status: 'SUCCEEDED', handled: Math.min(5, denverDentists) });
    const results = await t.request('GET', `/api/v1/runs/${runId}/results`, { key });
    expect(results.status).toBe(200);
    expect(results.body).toHaveLength(Math.min(5, denverDentists));
    expect(results.body[0]).toMatchObject({ city: 'Denver', category: 'Dentist' });
  });

  it('refuses a query-less overview start', async () => {
    const res = await t.request('POST', '/api/v1/maps/run', { key, body: { limit: 5 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([{ path: 'query', message: expect.any(String) }]);
  });
});

describe('paging runs', () => {
  it('pages newest first with cursors and no overlap', async () => {
    const other = await t.account();
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.request('POST', '/api/v1/scrape/maps', {
        key: other.apiKey,
        body: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: 1 },
      });
      ids.push(res.body.runId);
    }
    const first = await t.graphql(other.apiKey, FirstRuns);
    const page1 = first.body.data!.runs;
    expect(page1.pageInfo.hasNextPage).toBe(true);
    const second = await t.graphql(other.apiKey, NextRuns, { after: page1.pageInfo.endCursor });
    const seen = [...page1.edges, ...second.body.data!.runs.edges].map((e) => e.node.id);
    expect(seen).toEqual([...ids].reverse());
    expect(second.body.data!.runs.pageInfo.hasNextPage).toBe(false);
  });
});
