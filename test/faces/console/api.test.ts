import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TypedDocumentNode } from '@graphql-typed-document-node/core';
import { TOOLS } from '../../../src/tools/index.ts';
import { DENVER_DENTISTS, startTestApp, type TestApp } from '../../helpers/app.ts';
import { graphql } from '../../helpers/gql/index.ts';

/**
 * What the console needs from the API, asked with a key as any client may: the tools with their
 * forms and columns, a dry run of a start (its estimate and refusals, nothing written), today's
 * allowances, runs by tool, a credit purchase's quote, and signed download links that open one file
 * of one run for a few minutes without a key.
 */

const Tools = graphql(`
  query ConsoleApiTools {
    tools { name title priceText plan available mutation inputType inputFields { name type kind required options } columns { key field header leaf } }
  }
`);
const StartMaps = graphql(`
  mutation ConsoleApiStartMaps($input: StartMapsScrapeInput!, $dryRun: Boolean) {
    startMapsScrape(input: $input, dryRun: $dryRun) { run { id } estimatedCost message webhookSecret userErrors { code field message } }
  }
`);
const AccountAndRuns = graphql(`
  query ConsoleApiAccountAndRuns {
    viewer { allowancesToday { kind limit used remaining } }
    maps: runs(tool: MAPS) { totalCount nodes { tool } }
    email: runs(tool: EMAIL_VALIDATOR) { totalCount }
    quote: creditQuote(amount: "149") { originalAmount amount wasAdjusted bonusPercent bonus credited }
  }
`);
const SmallQuote = graphql(`query ConsoleApiSmallQuote { creditQuote(amount: "5") { amount } }`);
const DownloadUrls = graphql(
  `query ConsoleApiDownloadUrls($id: ID!) { run(id: $id) { csv: downloadUrl(format: CSV) json: downloadUrl(format: JSON) } }`,
);
const StartRunning = graphql(`
  mutation ConsoleApiStartRunning { startMapsScrape(input: { searchStringsArray: ["dentist"], locationQuery: "Denver, CO" }) { run { downloadUrl(format: CSV) } } }
`);

let t: TestApp;
let key: string;
let accountId: string;

beforeAll(async () => {
  t = await startTestApp();
  ({ apiKey: key, accountId } = await t.account({ plan: 'growth' }));
});
afterAll(() => t?.stop());

const gql = async <TData, TVariables>(
  document: TypedDocumentNode<TData, TVariables>,
  variables?: NoInfer<TVariables>,
  as = key,
) => {
  const res = await t.graphql(as, document, variables);
  expect(res.status).toBe(200);
  return res.body;
};

const counts = async () => {
  const [row] = await t.app.core.sql`select (select count(*)::int from run where account_id = ${accountId}) as runs,
    (select count(*)::int from ledger_entry where account_id = ${accountId}) as entries`;
  return { ...row, wallet: await t.walletMicros(accountId) };
};

describe('tools', () => {
  it('lists every startable tool with its price, plan, mutation, input fields from the schema, and columns', async () => {
    const data = (await gql(Tools)).data!;
    const startable = TOOLS.filter((tool) => !tool.linkedOnly);
    expect(data.tools.map((tool) => tool.title)).toEqual(startable.map((tool) => tool.title));
    const maps = data.tools.find((tool) => tool.name === 'MAPS')!;
    expect(maps).toMatchObject({
      mutation: 'startMapsScrape',
      inputType: 'StartMapsScrapeInput',
      available: true,
      plan: null,
    });
    expect(maps.priceText).toBe(TOOLS.find((tool) => tool.name === 'maps')!.price.text);
    expect(maps.inputFields).toContainEqual({
      name: 'searchStringsArray',
      type: '[String!]',
      kind: 'TEXT_LIST',
      required: false,
      options: [],
    });
    expect(maps.inputFields).toContainEqual({
      name: 'maxCrawledPlacesPerSearch',
      type: 'Int',
      kind: 'INT',
      required: false,
      options: [],
    });
    expect(maps.inputFields).toContainEqual(expect.objectContaining({ name: 'customGeolocation', kind: 'OBJECT' }));
    expect(maps.columns.length).toBe(TOOLS.find((tool) => tool.name === 'maps')!.columns.length);
    expect(maps.columns.filter((c) => c.leaf).length).toBeGreaterThan(5);
    // A tool above the account's plan is listed as not available.
    const gated = startable.find((tool) => tool.plan === 'scale');
    if (gated) expect(data.tools.find((tool) => tool.title === gated.title)!.available).toBe(false);
  });
});

describe('dry runs', () => {
  it('answers the estimate a start would hold, and writes nothing', async () => {
    const before = await counts();
    const data = (await gql(StartMaps, { input: DENVER_DENTISTS, dryRun: true })).data!;
    expect(data.startMapsScrape.userErrors).toEqual([]);
    expect(data.startMapsScrape.run).toBeNull();
    expect(data.startMapsScrape.webhookSecret).toBeNull();
    expect(Number(data.startMapsScrape.estimatedCost)).toBeGreaterThan(0);
    expect(data.startMapsScrape.message).toBeTruthy();
    expect(await counts()).toEqual(before);
    // The real start holds exactly that estimate.
    const real = (await gql(StartMaps, { input: DENVER_DENTISTS })).data!;
    expect(real.startMapsScrape.estimatedCost).toBe(data.startMapsScrape.estimatedCost);
    expect(real.startMapsScrape.run!.id).toBeTruthy();
    await t.waitForRun(key, real.startMapsScrape.run!.id);
  });

  it('answers a start’s refusals at their fields, and writes nothing', async () => {
    const before = await counts();
    const data = (await gql(StartMaps, { input: { ...DENVER_DENTISTS, maxCrawledPlacesPerSearch: -1 }, dryRun: true }))
      .data!;
    expect(data.startMapsScrape.run).toBeNull();
    expect(data.startMapsScrape.userErrors).toContainEqual(
      expect.objectContaining({ code: 'VALIDATION_FAILED', field: ['input', 'maxCrawledPlacesPerSearch'] }),
    );
    // A wallet that cannot pay refuses the dry run as it would the start.
    const { apiKey: poor } = await t.account({ plan: 'growth', creditsMicros: 0n });
    const broke = await gql(StartMaps, { input: DENVER_DENTISTS, dryRun: true }, poor);
    expect(broke.data!.startMapsScrape.userErrors).toContainEqual(
      expect.objectContaining({ code: 'INSUFFICIENT_FUNDS' }),
    );
    expect(await counts()).toEqual(before);
  });
});

describe('account and runs', () => {
  it('reads today’s allowances, runs by tool, and a credit purchase’s quote', async () => {
    await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
    const search = await t.request('POST', '/api/v1/database/search', { key, body: { limit: 3 } });
    const data = (await gql(AccountAndRuns)).data!;
    const database = data.viewer.allowancesToday.find((a) => a.kind === 'DATABASE')!;
    expect(database.limit).toBe(t.app.core.config.dailyDatabaseRecords);
    if (search.status === 200) expect(database.used).toBeGreaterThan(0);
    expect(database.used + database.remaining).toBe(database.limit);
    expect(data.maps.totalCount).toBeGreaterThanOrEqual(1);
    expect(data.maps.nodes.every((run) => run.tool === 'MAPS')).toBe(true);
    expect(data.email.totalCount).toBe(0);
    // 149 clashes with a subscription price: 148 is charged; growth adds 10 %.
    const quote = Object.fromEntries(
      Object.entries(data.quote).map(([k, v]) => [k, typeof v === 'string' ? Number(v) : v]),
    );
    expect(quote).toEqual({
      originalAmount: 149,
      amount: 148,
      wasAdjusted: true,
      bonusPercent: 10,
      bonus: 14.8,
      credited: 162.8,
    });
    const bad = await gql(SmallQuote);
    expect(bad.errors?.[0]?.extensions?.code).toBe('VALIDATION_FAILED');
  });
});

describe('signed download links', () => {
  it('open one file of one finished run without a key, for minutes; any change to the link is refused', async () => {
    const { start } = await t.runTool(key, '/api/v1/scrape/maps', DENVER_DENTISTS);
    const run = (await gql(DownloadUrls, { id: start.runId })).data!.run!;
    const link = new URL(run.csv!);
    expect(link.origin).toBe(new URL(t.url).origin);
    const signed = await fetch(link);
    expect(signed.status).toBe(200);
    const byKey = await t.request('GET', `/api/downloads/${start.runId}?format=csv`, { key });
    expect(await signed.text()).toBe(byKey.text);
    expect((await fetch(run.json!)).headers.get('content-type')).toMatch(/json/);

    const tampered = (change: (params: URLSearchParams) => void) => {
      const url = new URL(link);
      change(url.searchParams);
      return fetch(url).then((res) => res.status);
    };
    expect(await tampered((p) => p.set('format', 'json'))).toBe(401);
    expect(await tampered((p) => p.set('expires', String(Number(p.get('expires')) + 60)))).toBe(401);
    expect(await tampered((p) => p.set('signature', `${p.get('signature')!.slice(0, -2)}AA`))).toBe(401);
    const other = await t.account();
    expect(await tampered((p) => p.set('account', other.accountId))).toBe(401);
    // Another route does not take a signature for a key.
    expect((await fetch(`${t.url}/api/v1/scrape/status/${start.runId}?${link.searchParams}`)).status).toBe(401);
    // A run still in flight has no link yet.
    const running = await gql(StartRunning);
    expect(running.data!.startMapsScrape.run!.downloadUrl).toBeNull();
  });
});
