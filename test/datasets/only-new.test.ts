import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mapsTool } from '../../src/tools/maps.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';

/**
 * Named datasets and only-new delivery on every tool: the engine claims each row's identity (the tool's
 * identity columns) for the run before it delivers it, skips, unbilled, what the dataset delivered
 * before, and the dataset is a resource on REST, GraphQL and MCP.
 */

const PATH = '/api/v1/scrape/maps';
const UNIT = mapsTool.price.unitMicros;

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

const search = (count: number, extra: Record<string, unknown> = {}) => ({
  searchStringsArray: ['dentist'],
  locationQuery: 'Denver, CO',
  maxCrawledPlacesPerSearch: count,
  ...extra,
});

const placeIds = (rows: Record<string, unknown>[]) => rows.map((r) => r.place_id);

describe('only-new delivery', () => {
  it('a second run of the same search into the same dataset delivers and bills only the places the first did not', async () => {
    const first = await t.runTool(key, PATH, search(5, { datasetName: 'denver-dentists', onlyNew: true }));
    expect(first.rows).toHaveLength(5);
    expect(first.status).toMatchObject({ datasetName: 'denver-dentists', onlyNew: true, skippedDelivered: 0 });

    const second = await t.runTool(key, PATH, search(8, { datasetName: 'denver-dentists', onlyNew: true }));
    const all = await t.runTool(key, PATH, search(8));
    expect(placeIds(second.rows)).toEqual(placeIds(all.rows).slice(5));
    expect(second.status).toMatchObject({ status: 'SUCCEEDED', skippedDelivered: 5, billed_units: 3 });
    expect(await chargedMicros(t.app.core.sql, second.start.runId)).toBe(3n * UNIT);

    // The dataset holds the eight, one row each, in the order they were delivered.
    const dataset = await t.request('GET', '/api/v1/datasets/denver-dentists', { key });
    expect(dataset.status).toBe(200);
    expect(dataset.body.dataset).toMatchObject({
      name: 'denver-dentists',
      tool: 'maps',
      rowCount: 8,
      identityCount: 8,
    });
    const page = await t.request('GET', `/api/v1/datasets/${dataset.body.dataset.id}/rows?limit=6`, { key });
    expect(placeIds(page.body.rows)).toEqual(placeIds(all.rows).slice(0, 6));
    const rest = await t.request('GET', `/api/v1/datasets/denver-dentists/rows?after=${page.body.nextAfter}`, { key });
    expect(placeIds(rest.body.rows)).toEqual(placeIds(all.rows).slice(6));
    expect(rest.body.nextAfter).toBeNull();

    // Exports: the same rows in each format, CSV with the tool's header.
    const csv = await t.request('GET', '/api/v1/datasets/denver-dentists/export?format=csv', { key });
    expect(csv.status, csv.text).toBe(200);
    expect(csv.headers.get('content-disposition')).toBe('attachment; filename="denver-dentists.csv"');
    const records = parse(csv.text, { columns: true }) as Record<string, string>[];
    expect(records.map((r) => r.place_id)).toEqual(placeIds(all.rows));
    const ndjson = await t.request('GET', '/api/v1/datasets/denver-dentists/export?format=ndjson', { key });
    expect(
      ndjson.text
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).place_id),
    ).toEqual(placeIds(all.rows));
  });

  it('without onlyNew a run delivers everything, and the dataset keeps one row a place', async () => {
    await t.runTool(key, PATH, search(4, { datasetName: 'kept' }));
    const again = await t.runTool(key, PATH, search(6, { datasetName: 'kept' }));
    expect(again.rows).toHaveLength(6);
    expect(again.status).toMatchObject({ skippedDelivered: 0, billed_units: 6 });
    const dataset = await t.request('GET', '/api/v1/datasets/kept', { key });
    expect(dataset.body.dataset).toMatchObject({ rowCount: 6, identityCount: 6 });
  });

  it('a hold that runs out part-way gives back the places it claimed but never delivered', async () => {
    const poor = await t.account({ creditsMicros: 2n * UNIT });
    const cut = await t.runTool(poor.apiKey, PATH, search(5, { datasetName: 'cut', onlyNew: true }));
    expect(cut.rows).toHaveLength(2);
    expect(cut.status).toMatchObject({ stoppedReason: 'budget_exhausted' });
    const [{ n }] = (await t.app.core.sql`
      select count(*)::int as n from dataset_item where account_id = ${poor.accountId} and dataset = 'cut'`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(2);
  });

  it('clearing a dataset forgets what it delivered; deleting it removes it', async () => {
    await t.runTool(key, PATH, search(3, { datasetName: 'to-clear', onlyNew: true }));
    const skipped = await t.runTool(key, PATH, search(3, { datasetName: 'to-clear', onlyNew: true }));
    expect(skipped.rows).toEqual([]);
    const cleared = await t.request('POST', '/api/v1/datasets/to-clear/clear', { key });
    expect(cleared.body).toEqual({ forgotten: 3 });
    const afresh = await t.runTool(key, PATH, search(3, { datasetName: 'to-clear', onlyNew: true }));
    expect(afresh.rows).toHaveLength(3);
    expect((await t.request('DELETE', '/api/v1/datasets/to-clear', { key })).status).toBe(204);
    const gone = await t.request('GET', '/api/v1/datasets/to-clear', { key });
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: 'dataset_not_found' });
  });

  it('refuses onlyNew without a dataset, a name of another tool’s dataset, and another account’s dataset', async () => {
    const alone = await t.request('POST', PATH, { key, body: search(3, { onlyNew: true }) });
    expect(alone.status).toBe(400);
    expect(alone.body.error.details).toEqual([
      { path: 'onlyNew', message: 'needs datasetName: the dataset whose rows are not new' },
    ]);
    await t.runTool(key, PATH, search(1, { datasetName: 'maps-only' }));
    const other = await t.request('POST', '/api/v1/scrape/email-validator', {
      key,
      body: { emails: ['a@example.com'], datasetName: 'maps-only' },
    });
    expect(other.status).toBe(400);
    expect(other.body.error.message).toMatch(/^Dataset "maps-only" holds rows of another tool \(maps\)/);
    const listings = await t.request('POST', '/api/v1/scrape/bizforsale-scraper', {
      key,
      body: {
        startUrls: ['https://www.bizlistings.net/businesses-for-sale/colorado'],
        datasetName: 'weekly',
        onlyNew: false,
      },
    });
    expect(listings.status).toBe(400);
    expect(listings.body.error.details).toEqual([
      {
        path: 'onlyNew',
        message: "Business-for-sale scraper's datasetName always skips what it delivered before: remove onlyNew",
      },
    ]);
    const stranger = await t.account();
    const read = await t.request('GET', '/api/v1/datasets/maps-only', { key: stranger.apiKey });
    expect(read.status).toBe(404);
  });
});

describe('datasets on GraphQL and MCP', () => {
  it('GraphQL: typed rows paged by cursor, the run’s skipped count, clear and delete as mutations', async () => {
    const start = await t.graphql(
      key,
      `mutation ($input: StartMapsScrapeInput!) {
        startMapsScrape(input: $input, datasetName: "gql", onlyNew: true) { run { id datasetName onlyNew } userErrors { message } }
      }`,
      { input: search(4) },
    );
    expect(start.body.data.startMapsScrape.run).toMatchObject({ datasetName: 'gql', onlyNew: true });
    await t.waitForRun(key, start.body.data.startMapsScrape.run.id);
    const query = `query ($after: String) {
      dataset(dataset: "gql") { name tool rowCount identityCount
        rows(first: 3, after: $after) { totalCount pageInfo { hasNextPage endCursor } nodes { __typename ... on MapsResult { placeId } } } } }`;
    const page = await t.graphql(key, query);
    expect(page.body.errors).toBeUndefined();
    const { dataset } = page.body.data;
    expect(dataset).toMatchObject({ name: 'gql', tool: 'MAPS', rowCount: 4, identityCount: 4 });
    expect(dataset.rows.nodes).toHaveLength(3);
    expect(dataset.rows.nodes[0].__typename).toBe('MapsResult');
    const next = await t.graphql(key, query, { after: dataset.rows.pageInfo.endCursor });
    expect(next.body.data.dataset.rows.nodes).toHaveLength(1);
    expect(next.body.data.dataset.rows.pageInfo.hasNextPage).toBe(false);

    const cleared = await t.graphql(
      key,
      'mutation { clearDataset(dataset: "gql") { forgotten dataset { identityCount } userErrors { code } } }',
    );
    expect(cleared.body.data.clearDataset).toEqual({ forgotten: 4, dataset: { identityCount: 0 }, userErrors: [] });
    const missing = await t.graphql(
      key,
      'mutation { deleteDataset(dataset: "nope") { deletedDatasetId userErrors { code message } } }',
    );
    expect(missing.body.data.deleteDataset).toEqual({
      deletedDatasetId: null,
      userErrors: [{ code: 'DATASET_NOT_FOUND', message: 'The account has no dataset nope.' }],
    });
  });

  it('MCP: a start with datasetName and onlyNew, list_datasets, get_dataset_rows and delete_dataset', async () => {
    const client = new McpClient({ name: 'datasets-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?tools=all`), {
        requestInit: { headers: { authorization: `Bearer ${key}` } },
      }),
    );
    try {
      type Answer = { isError?: boolean; structuredContent: Record<string, unknown> };
      const call = async (name: string, args: Record<string, unknown>) =>
        (await client.callTool({ name, arguments: args })) as Answer;
      const first = await call('scrape_maps', { ...search(2), datasetName: 'mcp', onlyNew: true, waitSecs: 20 });
      expect(first.isError).toBeFalsy();
      const second = await call('scrape_maps', { ...search(3), datasetName: 'mcp', onlyNew: true, waitSecs: 20 });
      expect(second.structuredContent).toMatchObject({ status: 'SUCCEEDED' });
      const status = await call('check_run_status', { runId: second.structuredContent.runId });
      expect(status.structuredContent).toMatchObject({ datasetName: 'mcp', skippedDelivered: 2 });
      const list = await call('list_datasets', {});
      expect((list.structuredContent.datasets as { name: string }[]).map((d) => d.name)).toContain('mcp');
      const rows = await call('get_dataset_rows', { dataset: 'mcp', limit: 2 });
      expect(rows.structuredContent.rows).toHaveLength(2);
      expect(rows.structuredContent.nextAfter).toEqual(expect.any(String));
      const deleted = await call('delete_dataset', { dataset: 'mcp' });
      expect(deleted.isError).toBeFalsy();
      const gone = await call('get_dataset_rows', { dataset: 'mcp' });
      expect(gone.isError).toBe(true);
    } finally {
      await client.close();
    }
  });
});
