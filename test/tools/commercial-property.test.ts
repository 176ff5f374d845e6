import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCommercialLink, mapViewRefusal } from '../../src/tools/lib/listings/commercial-links.ts';
import { commercialPropertyTool, splitLicence } from '../../src/tools/commercial-property.ts';
import { appWithAccount, type ErrorBody, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/cre-scraper';
const UNIT = commercialPropertyTool.price.unitMicros;
const HOST = 'https://www.crelistings.net';

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

/** A commercial_property row as postgres.js reads it: bigint columns as text. */
interface Property {
  id: string;
  listing_url: string;
  title: string;
  property_type: string;
  listing_type: string;
  street: string | null;
  city: string;
  state: string;
  zip: string | null;
  market: string;
  lat: number;
  lng: number;
  price: string | null;
  size_sqft: number | null;
  broker_name: string | null;
  broker_company: string | null;
  broker_phone: string | null;
  broker_email: string | null;
  broker_licence: string | null;
}

/** How the start answer reads each start URL (the tool's startDetails). */
interface StartDetails {
  url_translation: {
    url: string;
    form: 'properties' | 'search' | 'broker-directory';
    filters?: object;
    ignored?: string[];
  }[];
}

/** Properties read straight from the catalog table, in id order. */
async function properties(
  where: (sql: TestApp['app']['core']['sql']) => postgres.Fragment,
  limit = 200,
): Promise<Property[]> {
  const sql = t.app.core.sql;
  return sql<Property[]>`select * from commercial_property where ${where(sql)} order by id limit ${limit}`;
}

/** The row a property should become. */
function rowOf(p: Property, startUrl: string, form: string) {
  const price = Number(p.price);
  const licence = /^([A-Z]{2}) #(\d+)$/.exec(p.broker_licence!)!;
  return {
    property_id: /(\d+)\/$/.exec(p.listing_url)![1],
    title: p.title,
    property_type: p.property_type,
    listing_type: p.listing_type,
    address: `${p.street}, ${p.city}, ${p.state} ${p.zip}`,
    street: p.street,
    city: p.city,
    state: p.state,
    zip: p.zip,
    market: p.market,
    latitude: p.lat,
    longitude: p.lng,
    price,
    size_sqft: p.size_sqft,
    price_per_sqft: Math.round((price / p.size_sqft!) * 100) / 100,
    broker_name: p.broker_name,
    broker_company: p.broker_company,
    broker_phone: p.broker_phone,
    broker_email: p.broker_email,
    broker_licence: p.broker_licence,
    broker_licence_state: licence[1],
    broker_licence_number: licence[2],
    listing_url: p.listing_url,
    start_url: startUrl,
    start_url_form: form,
  };
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);

async function runCount(accountId: string): Promise<number> {
  const [r] = await t.app.core.sql`select count(*)::int as n from run where account_id = ${accountId}`;
  return r!.n;
}

function expectInvalid(res: { status: number; body: ErrorBody }, path: string, message?: RegExp) {
  expect(res.status).toBe(400);
  expect(res.body.error.code).toBe('validation_failed');
  const detail = res.body.error.details?.find((d) => d.path === path);
  expect(detail, JSON.stringify(res.body.error.details)).toBeDefined();
  if (message) expect(detail?.message).toMatch(message);
}

describe('commercial property links', () => {
  it('reads the three forms, their path and query filters, on any host', () => {
    expect(
      parseCommercialLink(
        'https://cre.example.org/properties?types[]=Office&types[]=Retail&listingType=sale&priceMin=1m&sizeMax=50,000&page=2&foo=bar',
      ),
    ).toEqual({
      url: 'https://cre.example.org/properties?types[]=Office&types[]=Retail&listingType=sale&priceMin=1m&sizeMax=50,000&page=2&foo=bar',
      form: 'properties',
      filters: {
        propertyTypes: ['office', 'retail'],
        listingType: 'sale',
        price: { min: 1_000_000 },
        sizeSqft: { max: 50_000 },
      },
      mapView: false,
      ignored: ['foo'],
    });
    expect(parseCommercialLink(`${HOST}/search/office-space/salt-lake-city-ut/for-lease`)).toMatchObject({
      form: 'search',
      filters: { propertyTypes: ['office'], city: 'salt lake city', state: 'UT', listingType: 'lease' },
    });
    expect(parseCommercialLink(`${HOST}/search?location=Denver`).filters).toEqual({ place: 'denver' });
    expect(parseCommercialLink(`${HOST}/lease/properties/colorado`).filters).toEqual({
      listingType: 'lease',
      state: 'CO',
    });
    expect(parseCommercialLink(`${HOST}/resources/find-a-broker/austin-tx?name=smith&licence=TX%201234`)).toMatchObject(
      {
        form: 'broker-directory',
        filters: { city: 'austin', state: 'TX', brokerName: 'smith', brokerLicence: 'TX 1234' },
      },
    );
  });

  it('tells map views without a city or market from scoped searches', () => {
    const refused = (url: string) => mapViewRefusal(parseCommercialLink(url));
    expect(refused(`${HOST}/search?mapCenter=39.7,-104.9&mapZoom=11`)).toMatch(
      /map view with no city or market chosen: choose a specific city or market/,
    );
    expect(refused(`${HOST}/search`)).toBeDefined();
    expect(refused(`${HOST}/search?location=Colorado`)).toBeDefined();
    expect(refused(`${HOST}/properties?bbox=-105,39,-104,40`)).toBeDefined();
    expect(refused(`${HOST}/properties/@39.7,-104.9,11z`)).toBeDefined();
    expect(refused(`${HOST}/search?bbox=-105,39,-104,40&market=Denver`)).toBeUndefined();
    expect(refused(`${HOST}/search?zip=80202&view=map`)).toBeUndefined();
    expect(refused(`${HOST}/properties`)).toBeUndefined();
    expect(refused(`${HOST}/resources/find-a-broker/`)).toBeUndefined();
  });

  it('splits a licence into its state and number when it names a state', () => {
    expect(splitLicence('CO #01234567')).toEqual({ state: 'CO', number: '01234567' });
    expect(splitLicence('DRE 01234567')).toEqual({ state: null, number: 'DRE 01234567' });
    expect(splitLicence(null)).toEqual({ state: null, number: null });
  });
});

describe('commercial property: city and market searches', () => {
  it('answers with runId and estimated cost, scopes /search to the city, returns every column and bills 0.029 per property', async () => {
    const { accountId, apiKey } = await t.account();
    const before = await t.walletMicros(accountId);
    const url = `${HOST}/search?location=Denver%2C%20CO`;
    const expected = await properties((sql) => sql`city = 'Denver' and state = 'CO'`);
    expect(expected.length).toBeGreaterThan(1);

    const { start, status, rows } = await t.runTool(apiKey, PATH, { startUrls: [url] });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Scraping 1 URL, up to 200 properties each',
      estimatedCost: 5.8,
      url_translation: [
        { url, form: 'search', filters: { city: 'denver', state: 'CO' }, ignored: [], maxProperties: 200 },
      ],
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: `Finished: ${expected.length} properties`,
      handled: expected.length,
      requested: 200,
    });
    expect(Object.keys(rows[0])).toEqual(commercialPropertyTool.columns.map((c) => c.key));
    expect(rows).toEqual(expected.map((p) => rowOf(p, url, 'search')));
    expect(rows[0]).toMatchObject({
      latitude: expect.any(Number),
      longitude: expect.any(Number),
      broker_licence_state: 'CO',
    });

    expect(await charged(start.runId)).toBe(BigInt(expected.length) * UNIT);
    expect(await t.walletMicros(accountId)).toBe(before - BigInt(expected.length) * UNIT);
  });

  it('scopes to a market, and reads type, city and sale or lease from the path', async () => {
    const market = `${HOST}/search?market=Austin`;
    const austin = await properties((sql) => sql`lower(market) = 'austin'`);
    expect(austin.length).toBeGreaterThan(0);
    const byMarket = await t.runTool(key, PATH, { startUrls: [market] });
    expect(byMarket.rows).toEqual(austin.map((p) => rowOf(p, market, 'search')));

    const [top] = await t.app.core.sql`
      select city, state, property_type, listing_type from commercial_property group by 1, 2, 3, 4 order by count(*) desc, 1, 2, 3, 4 limit 1`;
    const citySlug = `${top!.city.toLowerCase().replace(/ /g, '-')}-${top!.state.toLowerCase()}`;
    const pathUrl = `https://another-host.example/search/${top!.property_type.replace('_', '-')}-space/${citySlug}/for-${top!.listing_type}`;
    const expected = await properties(
      (sql) =>
        sql`city = ${top!.city} and state = ${top!.state} and property_type = ${top!.property_type} and listing_type = ${top!.listing_type}`,
    );
    expect(expected.length).toBeGreaterThan(1);
    const byPath = await t.runTool(key, PATH, { startUrls: [pathUrl] });
    expect(byPath.rows).toEqual(expected.map((p) => rowOf(p, pathUrl, 'search')));
  });

  it('accepts map parameters beside a city or market, scoping to the place and listing them as ignored', async () => {
    const url = `${HOST}/search?location=Denver%2C%20CO&bbox=-105.2,39.5,-104.6,40.0&mapZoom=11`;
    const { start, rows } = await t.runTool<StartDetails>(key, PATH, { startUrls: [url] });
    expect(start.url_translation[0]).toMatchObject({
      filters: { city: 'denver', state: 'CO' },
      ignored: ['bbox', 'mapZoom'],
    });
    expect(rows.map((r) => r.listing_url)).toEqual(
      (await properties((sql) => sql`city = 'Denver' and state = 'CO'`)).map((p) => p.listing_url),
    );
  });
});

describe('commercial property: /properties searches', () => {
  it('filters by type, sale or lease, price and size nationwide', async () => {
    const url = `${HOST}/properties?types[]=Office&types[]=Industrial&listingType=sale&priceMin=1000000&sizeMin=5000`;
    const expected = await properties(
      (sql) =>
        sql`property_type in ('office', 'industrial') and listing_type = 'sale' and price >= 1000000 and size_sqft >= 5000`,
    );
    expect(expected.length).toBeGreaterThan(1);
    const { rows } = await t.runTool(key, PATH, { startUrls: [url] });
    expect(rows).toEqual(expected.map((p) => rowOf(p, url, 'properties')));
  });

  it('yields at most 200 properties per URL and bills only those', async () => {
    const [{ n }] = await t.app.core.sql<[{ n: number }]>`select count(*)::int as n from commercial_property`;
    expect(n).toBeGreaterThan(200);
    const url = `${HOST}/properties`;
    const { start, status, rows } = await t.runTool(key, PATH, { startUrls: [url] });
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 200, requested: 200 });
    expect(rows.map((r) => r.listing_url)).toEqual(
      (await properties((sql) => sql`true`, 200)).map((p) => p.listing_url),
    );
    expect(await charged(start.runId)).toBe(200n * UNIT);
  });

  it('runs several URLs in order, never repeating a property', async () => {
    const denver = `${HOST}/search?location=Denver%2C%20CO`;
    const austin = `${HOST}/search/austin-tx`;
    const denverAgain = `${HOST}/search?market=Denver`;
    const expectedDenver = await properties((sql) => sql`city = 'Denver' and state = 'CO'`);
    const expectedAustin = await properties((sql) => sql`city = 'Austin' and state = 'TX'`);
    const { start, status, rows } = await t.runTool(key, PATH, { startUrls: [denver, austin, denverAgain] });
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 600 });
    expect(rows).toEqual([
      ...expectedDenver.map((p) => rowOf(p, denver, 'search')),
      ...expectedAustin.map((p) => rowOf(p, austin, 'search')),
    ]);
    expect(await charged(start.runId)).toBe(BigInt(rows.length) * UNIT);
  });
});

describe('commercial property: broker directory', () => {
  it("yields the properties of the brokers matching the directory's name and location", async () => {
    const [broker] = await t.app.core.sql`select broker_name, city, state from commercial_property order by id limit 1`;
    const last = broker!.broker_name.split(' ').at(-1)!;
    const url = `${HOST}/resources/find-a-broker/?name=${encodeURIComponent(last.toUpperCase())}&location=${encodeURIComponent(`${broker!.city}, ${broker!.state}`)}`;
    const expected = await properties(
      (sql) => sql`broker_name ilike ${`%${last}%`} and city = ${broker!.city} and state = ${broker!.state}`,
    );
    expect(expected.length).toBeGreaterThan(0);
    const { rows } = await t.runTool(key, PATH, { startUrls: [url] });
    expect(rows).toEqual(expected.map((p) => rowOf(p, url, 'broker-directory')));
  });

  it('finds a broker by licence, ignoring spaces and punctuation', async () => {
    const [one] = await properties((sql) => sql`id = 11`);
    const url = `${HOST}/resources/find-a-broker/?license=${encodeURIComponent(one!.broker_licence!.replace(/[ #]/g, ''))}`;
    const { rows } = await t.runTool(key, PATH, { startUrls: [url] });
    expect(rows).toEqual(
      (await properties((sql) => sql`broker_licence = ${one!.broker_licence}`)).map((p) =>
        rowOf(p, url, 'broker-directory'),
      ),
    );
  });
});

describe('commercial property: refusals', () => {
  it('refuses a map view with no city or market with 400 map_view_not_allowed, asking for one, and starts nothing', async () => {
    const { accountId, apiKey } = await t.account();
    for (const url of [
      `${HOST}/search?mapCenter=39.7,-104.9&mapZoom=11`,
      `${HOST}/search`,
      `${HOST}/properties?bbox=-105,39,-104,40`,
    ]) {
      const res = await t.request('POST', PATH, { key: apiKey, body: { startUrls: [url] } });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('map_view_not_allowed');
      expect(res.body.error.message).toMatch(/choose a specific city or market/);
      expect(res.body.error.details).toEqual([
        { path: 'startUrls.0', message: expect.stringMatching(/no city or market chosen/) },
      ]);
    }
    const second = await t.request('POST', PATH, {
      key: apiKey,
      body: { startUrls: [`${HOST}/properties`, `${HOST}/search?zoom=9&lat=30&lng=-97`] },
    });
    expect(second.body.error).toMatchObject({
      code: 'map_view_not_allowed',
      details: [{ path: 'startUrls.1', message: expect.any(String) }],
    });
    expect(await runCount(accountId)).toBe(0);
  });

  const good = `${HOST}/properties`;
  it.each([
    ['no startUrls', {}, 'startUrls', /expected array/],
    ['an empty startUrls', { startUrls: [] }, 'startUrls', /at least one URL/],
    [
      'a link of another kind',
      { startUrls: ['https://example.com/listing/123'] },
      'startUrls.0',
      /\/properties.*\/search.*\/resources\/find-a-broker\//,
    ],
    ['a second URL that is no URL', { startUrls: [good, 'offices in denver'] }, 'startUrls.1', /not a URL/],
    [
      'an unknown property type',
      { startUrls: [`${good}?types=castle`] },
      'startUrls.0',
      /property type "castle" is not one of office, retail/,
    ],
    [
      'an unknown path segment',
      { startUrls: [`${good}/123456/some-building`] },
      'startUrls.0',
      /path segment "123456"/,
    ],
    ['a bad listing type', { startUrls: [`${good}?listingType=swap`] }, 'startUrls.0', /must be sale or lease/],
    ['too many URLs', { startUrls: Array.from({ length: 51 }, () => good) }, 'startUrls', /at most 50 URLs/],
  ])('400 validation_failed for %s', async (_, body, path, message) => {
    expectInvalid(await t.request('POST', PATH, { key, body }), path, message);
  });
});

describe('commercial property: GraphQL', () => {
  const Start = graphql(`
    mutation CommercialPropertyStart($input: StartCommercialPropertyScrapeInput!) {
      startCommercialPropertyScrape(input: $input) { run { id status } message urlTranslation { url form } userErrors { code field message } }
    }
  `);

  it('startCommercialPropertyScrape starts the same run', async () => {
    const url = `${HOST}/search?market=Denver`;
    const res = await t.graphql(key, Start, { input: { startUrls: [url] } });
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data!.startCommercialPropertyScrape;
    expect(started).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Scraping 1 URL, up to 200 properties each',
      urlTranslation: [{ url, form: 'search' }],
      userErrors: [],
    });
    await t.waitForRun(key, started.run!.id);
    const rows = await t.request('GET', `/api/downloads/${started.run!.id}?format=json`, { key });
    expect(rows.body).toEqual(
      (await properties((sql) => sql`lower(market) = 'denver'`)).map((p) => rowOf(p, url, 'search')),
    );
  });

  it('answers a map view with the same code', async () => {
    const res = await t.graphql(key, Start, { input: { startUrls: [`${HOST}/search?bbox=-105,39,-104,40`] } });
    const [refusal] = res.body.data!.startCommercialPropertyScrape.userErrors;
    expect(refusal).toMatchObject({ code: 'MAP_VIEW_NOT_ALLOWED', field: ['input', 'startUrls', '0'] });
    expect(refusal!.message).toMatch(/choose a specific city or market/);
  });
});
