import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { US_STATES } from '../../src/shared/geo.ts';
import { matchIndustries, parseBusinessLink } from '../../src/tools/lib/listings/business-links.ts';
import { businessForSaleTool } from '../../src/tools/business-for-sale.ts';
import { appWithAccount, type ErrorBody, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/bizforsale-scraper';
const UNIT = businessForSaleTool.price.unitMicros;
const HOST = 'https://www.bizlistings.net';

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

/** A business_listing row as postgres.js reads it: bigint columns as text, dates as text. */
interface Listing {
  id: string;
  listing_url: string;
  title: string;
  category: string | null;
  city: string | null;
  state: string | null;
  country: string;
  asking_price: string | null;
  revenue: string | null;
  ebitda: string | null;
  cash_flow: string | null;
  established: number | null;
  employees: number | null;
  description: string | null;
  broker_name: string | null;
  broker_company: string | null;
  broker_phone: string | null;
  broker_email: string | null;
  listed_at: string | null;
}

/** How the start answer reads each start URL (the tool's startDetails). */
interface StartDetails {
  url_translation: {
    url: string;
    kind: 'listing' | 'search';
    listingId?: string;
    filters?: object;
    ignored?: string[];
  }[];
}

/** Listings read straight from the catalog table, in id order. */
async function listings(
  where: (sql: TestApp['app']['core']['sql']) => postgres.Fragment,
  limit = 1_000_000,
): Promise<Listing[]> {
  const sql = t.app.core.sql;
  return sql<Listing[]>`select * from business_listing where ${where(sql)} order by id limit ${limit}`;
}

/** The row a listing should become. */
function rowOf(l: Listing, startUrl: string) {
  return {
    listing_id: String(/(\d+)\/$/.exec(l.listing_url)![1]),
    title: l.title,
    industry: l.category,
    location: `${l.city}, ${l.state}`,
    city: l.city,
    state: l.state,
    country: l.country,
    asking_price: Number(l.asking_price),
    revenue: Number(l.revenue),
    ebitda: Number(l.ebitda),
    cash_flow: Number(l.cash_flow),
    established: l.established,
    employees: l.employees,
    description: l.description,
    broker_name: l.broker_name,
    broker_firm: l.broker_company,
    broker_phone: l.broker_phone,
    broker_email: l.broker_email,
    listed_at: l.listed_at,
    listing_url: l.listing_url,
    start_url: startUrl,
  };
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);

function expectInvalid(res: { status: number; body: ErrorBody }, path: string, message?: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  const detail = res.body.error.details?.find((d) => d.path === path);
  expect(detail, JSON.stringify(res.body.error.details)).toBeDefined();
  if (message) expect(detail?.message).toMatch(message);
}

const slug = (text: string) =>
  text
    .toLowerCase()
    .replace(/&/g, 'and')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

describe('business-for-sale links', () => {
  it('reads search pages, single listings and their query filters on any host', () => {
    expect(
      parseBusinessLink(
        'https://biz.example.org/businesses-for-sale/denver-co/restaurants-food?price_min=250k&cash_flow_max=1,000,000&utm_source=mail&foo=1',
      ),
    ).toEqual({
      kind: 'search',
      url: 'https://biz.example.org/businesses-for-sale/denver-co/restaurants-food?price_min=250k&cash_flow_max=1,000,000&utm_source=mail&foo=1',
      filters: {
        city: 'denver',
        state: 'CO',
        industry: 'restaurants-food',
        askingPrice: { min: 250_000 },
        cashFlow: { max: 1_000_000 },
      },
      ignored: ['foo'],
    });
    expect(parseBusinessLink(`${HOST}/businesses-for-sale/new-york`)).toMatchObject({ filters: { state: 'NY' } });
    expect(parseBusinessLink(`${HOST}/businesses-for-sale/retail`)).toMatchObject({ filters: { industry: 'retail' } });
    expect(
      parseBusinessLink(`${HOST}/businesses-for-sale?location=Salt%20Lake%20City,%20UT&revenueMin=100000`),
    ).toMatchObject({
      filters: { city: 'salt lake city', state: 'UT', revenue: { min: 100_000 } },
    });
    expect(parseBusinessLink('http://other.example/business-opportunity/any-slug/123456')).toEqual({
      kind: 'listing',
      url: 'http://other.example/business-opportunity/any-slug/123456',
      listingId: '123456',
    });
    expect(() => parseBusinessLink(`${HOST}/business-opportunity/no-id/`)).toThrow(/without a listing id/);
    expect(() => parseBusinessLink(`${HOST}/businesses-for-sale/a/b/c`)).toThrow(/too many path segments/);
  });

  it('matches industries by their words, ignoring case, "&", "and" and plurals', () => {
    const categories = [
      'Restaurants & Food',
      'Retail',
      'Service Businesses',
      'Health Care & Fitness',
      'Franchise Resales',
    ];
    expect(matchIndustries('restaurants-and-food', categories)).toEqual(['Restaurants & Food']);
    expect(matchIndustries('Restaurant', categories)).toEqual(['Restaurants & Food']);
    expect(matchIndustries('health-care', categories)).toEqual(['Health Care & Fitness']);
    expect(matchIndustries('service', categories)).toEqual(['Service Businesses']);
    expect(matchIndustries('franchises', categories)).toEqual(['Franchise Resales']);
    expect(matchIndustries('mining', categories)).toEqual([]);
  });
});

describe('business-for-sale: search pages', () => {
  it('answers with runId and estimated cost, finishes, returns every column from the catalog and bills 0.0099 per listing', async () => {
    const { accountId, apiKey } = await t.account();
    const before = await t.walletMicros(accountId);
    const url = `${HOST}/businesses-for-sale/colorado`;
    const expected = await listings((sql) => sql`state = 'CO'`, 100);
    expect(expected.length).toBeGreaterThan(1);

    const { start, status, rows } = await t.runTool(apiKey, PATH, { startUrls: [url] });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Extracting up to 100 listings from 1 URL',
      estimatedCost: 0.99,
      url_translation: [{ url, kind: 'search', filters: { state: 'CO' }, ignored: [] }],
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: `Finished: ${expected.length} listings`,
      handled: expected.length,
      requested: 100,
    });
    expect(Object.keys(rows[0])).toEqual(businessForSaleTool.columns.map((c) => c.key));
    expect(rows).toEqual(expected.map((l) => rowOf(l, url)));
    expect(rows[0]).toMatchObject({
      ebitda: expect.any(Number),
      cash_flow: expect.any(Number),
      broker_email: expect.stringContaining('@'),
    });

    expect(await charged(start.runId)).toBe(BigInt(expected.length) * UNIT);
    expect(await t.walletMicros(accountId)).toBe(before - BigInt(expected.length) * UNIT);
  });

  it('scopes a state and industry page, and a city page with price and cash-flow bounds from the query', async () => {
    const [top] = await t.app.core
      .sql`select state, category from business_listing group by 1, 2 order by count(*) desc, 1, 2 limit 1`;
    const stateUrl = `https://another-host.example/businesses-for-sale/${slug(US_STATES[top!.state]!)}/${slug(top!.category)}`;
    const byIndustry = await listings((sql) => sql`state = ${top!.state} and category = ${top!.category}`);
    expect(byIndustry.length).toBeGreaterThan(1);
    const first = await t.runTool(key, PATH, { startUrls: [stateUrl] });
    expect(first.rows).toEqual(byIndustry.map((l) => rowOf(l, stateUrl)));

    const prices = (await listings((sql) => sql`city = 'Denver' and state = 'CO'`))
      .map((l) => Number(l.asking_price))
      .sort((a, b) => a - b);
    const [low, high] = [prices[Math.floor(prices.length / 4)]!, prices[Math.floor((prices.length * 3) / 4)]!];
    const cityUrl = `${HOST}/businesses-for-sale/denver-co?price_min=${low}&price_max=${high.toLocaleString('en-US')}&cash_flow_min=1`;
    const bounded = await listings(
      (sql) => sql`city = 'Denver' and state = 'CO' and asking_price between ${low} and ${high} and cash_flow >= 1`,
    );
    expect(bounded.length).toBeGreaterThan(0);
    const second = await t.runTool<StartDetails>(key, PATH, { startUrls: [cityUrl] });
    expect(second.start.url_translation[0]!.filters).toEqual({
      city: 'denver',
      state: 'CO',
      askingPrice: { min: low, max: high },
      cashFlow: { min: 1 },
    });
    expect(second.rows).toEqual(bounded.map((l) => rowOf(l, cityUrl)));
  });

  it('finishes with no rows and no charge when no industry matches', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, {
      startUrls: [`${HOST}/businesses-for-sale/all/underwater-basket-weaving`],
    });
    expect(status).toMatchObject({ status: 'SUCCEEDED', statusMessage: 'Finished: 0 listings' });
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(0n);
  });
});

describe('business-for-sale: single listings', () => {
  it('finds listings by their id on any host or slug, in the order given and once each; a missing one yields nothing and costs nothing', async () => {
    const [a, b] = await listings((sql) => sql`id in (3, 7)`);
    const otherHost = `https://mirror.example.com/business-opportunity/some-other-slug/${/(\d+)\/$/.exec(b!.listing_url)![1]}`;
    const missing = `${HOST}/business-opportunity/gone/999999999/`;
    const { start, status, rows } = await t.runTool<StartDetails>(key, PATH, {
      startUrls: [otherHost, a!.listing_url, missing, b!.listing_url],
    });
    expect(start.url_translation.map((u) => u.kind)).toEqual(['listing', 'listing', 'listing', 'listing']);
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 3, handled: 2 });
    expect(rows).toEqual([rowOf(b!, otherHost), rowOf(a!, a!.listing_url)]);
    expect(await charged(start.runId)).toBe(2n * UNIT);
  });
});

describe('business-for-sale: maxItems', () => {
  const all = `${HOST}/businesses-for-sale`;

  it('defaults to 100 and honours a smaller count', async () => {
    const hundred = await t.runTool(key, PATH, { startUrls: [all] });
    expect(hundred.rows.map((r) => r.listing_url)).toEqual(
      (await listings((sql) => sql`true`, 100)).map((l) => l.listing_url),
    );
    const five = await t.runTool(key, PATH, { startUrls: [all], maxItems: 5 });
    expect(five.rows).toEqual((await listings((sql) => sql`true`, 5)).map((l) => rowOf(l, all)));
    expect(five.status.requested).toBe(5);
    expect(await charged(five.start.runId)).toBe(5n * UNIT);
  });

  it('extracts every available listing with 99999', async () => {
    const [{ n }] = await t.app.core.sql<[{ n: number }]>`select count(*)::int as n from business_listing`;
    const { start, status, rows } = await t.runTool(key, PATH, { startUrls: [all], maxItems: 99_999 });
    expect(start.message).toBe('Extracting all available listings from 1 URL');
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 99_999, handled: n });
    expect(rows).toHaveLength(n);
    expect(new Set(rows.map((r) => r.listing_url)).size).toBe(n);
    expect(await charged(start.runId)).toBe(BigInt(n) * UNIT);
  });

  it('counts over every URL and delivers a listing reached twice only once, from the first URL', async () => {
    const state = `${HOST}/businesses-for-sale/co`;
    const city = `${HOST}/businesses-for-sale/denver-co`;
    const colorado = await listings((sql) => sql`state = 'CO'`);
    const denver = await listings((sql) => sql`state = 'CO' and city = 'Denver'`);
    const texas = await listings((sql) => sql`state = 'TX'`);
    expect(denver.length).toBeGreaterThan(0);
    const both = await t.runTool(key, PATH, {
      startUrls: [state, city, `${HOST}/businesses-for-sale/texas`],
      maxItems: colorado.length + 2,
    });
    expect(both.rows).toEqual([
      ...colorado.map((l) => rowOf(l, state)),
      ...texas.slice(0, 2).map((l) => rowOf(l, `${HOST}/businesses-for-sale/texas`)),
    ]);
    expect(await charged(both.start.runId)).toBe(BigInt(colorado.length + 2) * UNIT);
  });
});

describe('business-for-sale: billing at the limit of the wallet', () => {
  it('holds what the wallet has, stops when it is used up and bills only the listings delivered', async () => {
    const { accountId, apiKey } = await t.account({ creditsMicros: 1_000_000n });
    const { start, status, rows } = await t.runTool(apiKey, PATH, {
      startUrls: [`${HOST}/businesses-for-sale`],
      maxItems: 99_999,
    });
    const affordable = Number(1_000_000n / UNIT);
    expect(status.status).toBe('SUCCEEDED');
    expect(status.statusMessage).toMatch(
      new RegExp(`^Stopped after ${affordable} listings: the 1\\.00 USD held for this run is used up`),
    );
    expect(rows.map((r) => r.listing_url)).toEqual(
      (await listings((sql) => sql`true`, affordable)).map((l) => l.listing_url),
    );
    expect(await charged(start.runId)).toBe(BigInt(affordable) * UNIT);
    expect(await t.walletMicros(accountId)).toBe(1_000_000n - BigInt(affordable) * UNIT);
  });
});

describe('business-for-sale: datasetName', () => {
  it("skips listings an earlier run of the account's dataset delivered, without billing them", async () => {
    const all = `${HOST}/businesses-for-sale`;
    const first20 = (await listings((sql) => sql`true`, 20)).map((l) => l.listing_url);
    const body = { startUrls: [all], maxItems: 10, datasetName: 'weekly' };

    const one = await t.runTool(key, PATH, body);
    expect(one.rows.map((r) => r.listing_url)).toEqual(first20.slice(0, 10));
    const two = await t.runTool(key, PATH, body);
    expect(two.rows.map((r) => r.listing_url)).toEqual(first20.slice(10, 20));
    expect(two.status.statusMessage).toBe('Finished: 10 listings');
    expect(await charged(two.start.runId)).toBe(10n * UNIT);

    // Other dataset names, no dataset, and other accounts are not affected.
    const other = await t.runTool(key, PATH, { ...body, datasetName: 'monthly' });
    expect(other.rows.map((r) => r.listing_url)).toEqual(first20.slice(0, 10));
    const none = await t.runTool(key, PATH, { startUrls: [all], maxItems: 10 });
    expect(none.rows.map((r) => r.listing_url)).toEqual(first20.slice(0, 10));
    const { apiKey: otherKey } = await t.account();
    const otherAccount = await t.runTool(otherKey, PATH, body);
    expect(otherAccount.rows.map((r) => r.listing_url)).toEqual(first20.slice(0, 10));

    // A listing already in the dataset is skipped on its own too, at no charge.
    const again = await t.runTool(key, PATH, { startUrls: [first20[0]], datasetName: 'weekly' });
    expect(again.rows).toEqual([]);
    expect(await charged(again.start.runId)).toBe(0n);
  });
});

describe('business-for-sale: refusals', () => {
  const good = `${HOST}/businesses-for-sale`;
  it.each([
    ['no startUrls', {}, 'startUrls', /expected array/],
    ['an empty startUrls', { startUrls: [] }, 'startUrls', /at least one URL/],
    [
      'a link of another kind',
      { startUrls: ['https://example.com/about'] },
      'startUrls.0',
      /\/businesses-for-sale.*\/business-opportunity\/<slug>\/<listing id>/,
    ],
    ['a second URL that is no URL', { startUrls: [good, 'restaurants in denver'] }, 'startUrls.1', /not a URL/],
    ['an unknown location', { startUrls: [`${good}/narnia/retail`] }, 'startUrls.0', /"narnia" is not a location/],
    [
      'a bad price',
      { startUrls: [`${good}?price_min=cheap`] },
      'startUrls.0',
      /price_min must be an amount in dollars/,
    ],
    [
      'bounds the wrong way round',
      { startUrls: [`${good}?price_min=500000&price_max=100000`] },
      'startUrls.0',
      /minimum 500000 is above the maximum 100000/,
    ],
    ['maxItems 0', { startUrls: [good], maxItems: 0 }, 'maxItems', /at least 1/],
    ['maxItems above 99999', { startUrls: [good], maxItems: 100_000 }, 'maxItems', /at most 99999/],
    ['a fractional maxItems', { startUrls: [good], maxItems: 2.5 }, 'maxItems', /whole number/],
    ['an empty datasetName', { startUrls: [good], datasetName: ' ' }, 'datasetName', /must not be empty/],
  ])('400 validation_failed for %s', async (_, body, path, message) => {
    expectInvalid(await t.request('POST', PATH, { key, body }), path, message);
  });
});

describe('business-for-sale: GraphQL', () => {
  it('startBusinessForSaleScrape starts the same run', async () => {
    const url = `${HOST}/businesses-for-sale/denver-co`;
    const Start = graphql(`
      mutation BusinessForSaleStart($input: StartBusinessForSaleScrapeInput!) {
        startBusinessForSaleScrape(input: $input) { run { id status } message urlTranslation { url kind } userErrors { code } }
      }
    `);
    const res = await t.graphql(key, Start, { input: { startUrls: [url], maxItems: 3 } });
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data!.startBusinessForSaleScrape;
    expect(started).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Extracting up to 3 listings from 1 URL',
      urlTranslation: [{ url, kind: 'search' }],
      userErrors: [],
    });
    await t.waitForRun(key, started.run!.id);
    const rows = await t.request('GET', `/api/downloads/${started.run!.id}?format=json`, { key });
    expect(rows.body).toEqual(
      (await listings((sql) => sql`city = 'Denver' and state = 'CO'`, 3)).map((l) => rowOf(l, url)),
    );
  });
});
