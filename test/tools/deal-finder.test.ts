import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { dealFinderTool } from '../../src/tools/deal-finder.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/deal-finder';
const PRICE_MICROS = dealFinderTool.price.unitMicros;

let t: TestApp;
let key: string;

interface Area {
  city?: string;
  state?: string;
  zip?: string;
}

interface Filters {
  minDiscountPercent: number;
  minPrice?: number;
  maxPrice?: number;
  propertyTypes?: string[];
  minBeds?: number;
  maxBeds?: number;
}

beforeAll(async () => {
  ({ t, key } = await appWithAccount({ account: { creditsMicros: 1_000_000_000n } }));
  const sql = t.app.core.sql;
  // The seed lists homes at their estimated value; spread list prices 0–30% below it (ties included).
  await sql`update property set list_price = estimated_value * (70 + (id % 7) * 5) / 100 where listing_status = 'for_sale'`;
  // Cheap pending and off-market homes must never show up.
  await sql`update property set list_price = estimated_value / 2 where listing_status = 'pending'`;
  await sql`update property set list_price = estimated_value / 2 where listing_status = 'off_market' and id % 10 = 0`;
  // Enough deals in one zip to page several times, with many equal discounts.
  await sql`
    insert into property (address_key, street, city, state, zip, property_type, beds, baths, sqft, estimated_value, listing_status, list_price, days_on_market)
    select lower(g || ' test st|testville|nv|89999'), g || ' Test St', 'Testville', 'NV', '89999', 'condo', 1 + g % 4, 2, 1000 + g,
      400000, 'for_sale', 400000 - (g % 9) * 12000, g % 60
    from generate_series(1, 460) g`;
  await sql`insert into property (address_key, street, city, state, zip, listing_status, list_price) values ('1 no value st|testville|nv|89999', '1 No Value St', 'Testville', 'NV', '89999', 'for_sale', 1000)`;
});
afterAll(() => t?.stop());

/** The deals a search should return, read straight from the catalog table: largest discount first, then id. */
async function expectedRows(area: Area, filters: Filters, limit: number) {
  const sql = t.app.core.sql;
  const rows = await sql`
    select street, city, state, zip, property_type, beds, baths, sqft, year_built, list_price::float8, estimated_value::float8,
      days_on_market, last_sold_date::text, last_sold_price::float8, lat, lng
    from property
    where listing_status = 'for_sale' and estimated_value > 0
      and list_price <= estimated_value * (1 - ${filters.minDiscountPercent}::float8 / 100)
      ${area.city ? sql`and lower(city) = lower(${area.city})` : sql``}
      ${area.state ? sql`and state = ${area.state}` : sql``}
      ${area.zip ? sql`and zip = ${area.zip}` : sql``}
      ${filters.minPrice !== undefined ? sql`and list_price >= ${filters.minPrice}` : sql``}
      ${filters.maxPrice !== undefined ? sql`and list_price <= ${filters.maxPrice}` : sql``}
      ${filters.propertyTypes ? sql`and property_type = any(${filters.propertyTypes})` : sql``}
      ${filters.minBeds !== undefined ? sql`and beds >= ${filters.minBeds}` : sql``}
      ${filters.maxBeds !== undefined ? sql`and beds <= ${filters.maxBeds}` : sql``}
    order by (estimated_value - list_price)::float8 / estimated_value desc, id
    limit ${limit}`;
  return rows.map((r) => ({
    address: `${r.street}, ${r.city}, ${r.state} ${r.zip}`,
    street: r.street,
    city: r.city,
    state: r.state,
    zip: r.zip,
    property_type: r.property_type,
    beds: r.beds,
    baths: r.baths,
    sqft: r.sqft,
    year_built: r.year_built,
    list_price: r.list_price,
    estimated_value: r.estimated_value,
    discount_amount: r.estimated_value - r.list_price,
    discount_percent: Math.round(((r.estimated_value - r.list_price) / r.estimated_value) * 1000) / 10,
    price_per_sqft: r.sqft ? Math.round(r.list_price / r.sqft) : null,
    days_on_market: r.days_on_market,
    last_sold_date: r.last_sold_date,
    last_sold_price: r.last_sold_price,
    latitude: r.lat,
    longitude: r.lng,
  }));
}

async function charged(runId: string) {
  const [row] = await t.app.core
    .sql`select charged_micros::bigint as charged, billed_units from run where id = ${runId}`;
  return { charged: BigInt(row!.charged), units: row!.billed_units as number };
}

/** The seeded city with the most for-sale homes at least 10% below value. */
async function busiestCity() {
  const [row] = await t.app.core.sql`
    select city, state, count(*)::int as n from property
    where listing_status = 'for_sale' and list_price <= estimated_value * 0.9 and state <> 'NV'
    group by city, state order by n desc, city limit 1`;
  return row as unknown as { city: string; state: string; n: number };
}

describe('a deal finder run', () => {
  it('finds homes for sale at least 10% below value in a city, best deals first, billing 0.05 per property', async () => {
    const { city, state, n } = await busiestCity();
    expect(n).toBeGreaterThan(2);
    const location = `${city}, ${state}`;
    const { start, status, rows } = await t.runTool(key, PATH, { location });
    expect(start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: `Looking for homes for sale in ${location} listed at least 10% below their estimated value, up to 100`,
      estimatedCost: 5,
    });
    const expected = await expectedRows({ city, state }, { minDiscountPercent: 10 }, 100);
    expect(expected).toHaveLength(n);
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(dealFinderTool.columns.map((c) => c.key));
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      handled: n,
      requested: 100,
      statusMessage: `Finished: ${n} properties`,
    });
    expect(rows.every((r) => r.discount_percent >= 10)).toBe(true);
    expect(await charged(start.runId)).toEqual({ charged: BigInt(n) * PRICE_MICROS, units: n });
  });

  it('includes the exact margin and pages through many ties in order', async () => {
    const { start, rows } = await t.runTool(key, PATH, { location: '89999', minDiscountPercent: 12, maxItems: 10_000 });
    const expected = await expectedRows({ zip: '89999' }, { minDiscountPercent: 12 }, 10_000);
    // Steps of 3% (12,000 of 400,000), 51 homes each: 12% to 24% is 5 steps, 12% itself included.
    expect(expected).toHaveLength(255);
    expect(rows).toEqual(expected);
    expect(rows.filter((r) => r.discount_percent === 12)).toHaveLength(51);
    expect(new Set(rows.map((r) => r.street)).size).toBe(255);
    expect(await charged(start.runId)).toEqual({ charged: 255n * PRICE_MICROS, units: 255 });
  });

  it('pages past the page size up to maxItems', async () => {
    const { rows, status } = await t.runTool(key, PATH, {
      location: 'Testville, Nevada',
      minDiscountPercent: 0,
      maxItems: 333,
    });
    expect(rows).toEqual(await expectedRows({ city: 'Testville', state: 'NV' }, { minDiscountPercent: 0 }, 333));
    expect(rows).toHaveLength(333);
    expect(status).toMatchObject({ handled: 333, requested: 333 });
    expect(rows.map((r) => r.street)).not.toContain('1 No Value St');
  });

  it('applies price, type and bedroom filters within a state', async () => {
    const [row] = await t.app.core.sql`
      select state from property where listing_status = 'for_sale' and state <> 'NV' group by state order by count(*) desc, state limit 1`;
    const state = row!.state as string;
    const filters = {
      minDiscountPercent: 5,
      minPrice: 200_000,
      maxPrice: 2_500_000,
      propertyTypes: ['single_family', 'townhouse'],
      minBeds: 2,
      maxBeds: 5,
    };
    const { rows } = await t.runTool(key, PATH, { location: state, ...filters });
    const expected = await expectedRows({ state }, filters, 100);
    expect(expected.length).toBeGreaterThan(0);
    expect(rows).toEqual(expected);
    for (const r of rows) {
      expect(r.list_price).toBeGreaterThanOrEqual(200_000);
      expect(['single_family', 'townhouse']).toContain(r.property_type);
      expect(r.beds).toBeGreaterThanOrEqual(2);
    }
  });

  it('never returns pending or off-market homes, however cheap', async () => {
    const { rows } = await t.runTool(key, PATH, { location: 'Texas', minDiscountPercent: 40, maxItems: 1000 });
    expect(rows).toEqual([]);
    const [cheap] = await t.app.core
      .sql`select count(*)::int as n from property where state = 'TX' and listing_status <> 'for_sale' and list_price <= estimated_value * 0.6`;
    expect(cheap!.n).toBeGreaterThan(0);
  });

  it('succeeds with no rows and no charge when nothing qualifies', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, { location: 'Denver, CO', minDiscountPercent: 95 });
    expect(rows).toEqual([]);
    expect(status).toMatchObject({ status: 'SUCCEEDED', statusMessage: 'Finished: 0 properties' });
    expect(await charged(start.runId)).toEqual({ charged: 0n, units: 0 });
  });

  it('downloads a CSV with the deal columns', async () => {
    const { start } = await t.runTool(key, PATH, { location: '89999', maxItems: 3, fileName: 'nv deals' });
    const res = await t.request('GET', `/api/downloads/${start.runId}?format=csv`, { key });
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="nv_deals.csv"');
    const records = parse(res.text) as string[][];
    expect(records[0]).toEqual(dealFinderTool.columns.map((c) => c.header));
    expect(records).toHaveLength(4);
    expect(records[1]![records[0]!.indexOf('discount_percent')]).toBe('24');
  });

  it('is started through GraphQL too', async () => {
    const Start = graphql(`
      mutation DealFinderStart($input: StartDealFinderInput!) { startDealFinder(input: $input) { run { id status } message estimatedCost } }
    `);
    const res = await t.graphql(key, Start, {
      input: { location: '89999', minDiscountPercent: 20, propertyTypes: ['condo'], maxItems: 7 },
    });
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data!.startDealFinder;
    expect(started).toMatchObject({
      run: { status: 'RUNNING' },
      estimatedCost: '0.35',
      message: expect.stringContaining('at least 20% below'),
    });
    await t.waitForRun(key, started.run!.id);
    const rows = (await t.request('GET', `/api/downloads/${started.run!.id}?format=json`, { key })).body;
    expect(rows).toEqual(await expectedRows({ zip: '89999' }, { minDiscountPercent: 20, propertyTypes: ['condo'] }, 7));
    expect(await charged(started.run!.id)).toEqual({ charged: 7n * PRICE_MICROS, units: 7 });
  });
});

describe('cancelling', () => {
  it("is refused: the deal finder is not in the spec's cancellable list", async () => {
    const { start } = await t.runTool(key, PATH, { location: '89999', maxItems: 1 });
    const res = await t.request('POST', `/api/v1/scrape/cancel/${start.runId}`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('not_cancellable');
  });
});

describe('bad input', () => {
  it.each([
    [{}, 'location'],
    [{ location: '' }, 'location'],
    [{ location: 'Portland' }, 'location'],
    [{ location: 'Springfield, Narnia' }, 'location'],
    [{ location: '89999', minDiscountPercent: 150 }, 'minDiscountPercent'],
    [{ location: '89999', minDiscountPercent: '10' }, 'minDiscountPercent'],
    [{ location: '89999', minPrice: 500_000, maxPrice: 100_000 }, 'maxPrice'],
    [{ location: '89999', minBeds: 4, maxBeds: 2 }, 'maxBeds'],
    [{ location: '89999', propertyTypes: ['castle'] }, 'propertyTypes.0'],
    [{ location: '89999', propertyTypes: [] }, 'propertyTypes'],
    [{ location: '89999', maxItems: 0 }, 'maxItems'],
    [{ location: '89999', maxItems: 10_001 }, 'maxItems'],
  ])('%j is refused naming %s', async (body, path) => {
    const res = await t.request('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect([...new Set(res.body.error.details.map((d: { path: string }) => d.path))]).toEqual([path]);
  });

  it('refuses a start the wallet cannot pay for one property', async () => {
    const { apiKey } = await t.account({ creditsMicros: PRICE_MICROS - 1n });
    const res = await t.request('POST', PATH, { key: apiKey, body: { location: '89999' } });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_funds');
  });
});
