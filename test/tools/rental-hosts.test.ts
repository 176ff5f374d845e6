import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rentalHostsTool } from '../../src/tools/rental-hosts.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';
import { expectValidationError } from '../helpers/assertions.ts';

const PATH = '/api/v1/scrape/rental-host-email';
const PRICE_MICROS = rentalHostsTool.price.unitMicros;

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

/** A rental_listing row with its host's columns, as postgres.js reads it: numeric and bigint columns as text. */
interface Listing {
  id: string;
  listing_url: string;
  host_id: string;
  title: string;
  city: string;
  country: string;
  country_code: string;
  price_per_night: string | null;
  currency: string;
  amenities: string[];
  bedrooms: number | null;
  guests: number | null;
  rating: number | null;
  review_count: number;
  host_key: string;
  host_name: string;
  host_email: string | null;
  host_phone: string | null;
  is_pro: boolean;
  is_superhost: boolean;
  listings_count: number;
}

/** Listings of a city with their hosts, straight from the catalog, in id order. */
async function cityListings(
  city: string,
  countryCode: string,
  options: { limit?: number; where?: (l: Listing) => boolean } = {},
): Promise<Listing[]> {
  const rows = await t.app.core.sql<Listing[]>`
    select l.*, h.host_key, h.name as host_name, h.email as host_email, h.phone as host_phone, h.is_pro, h.is_superhost, h.listings_count
    from rental_listing l join rental_host h on h.id = l.host_id
    where lower(l.city) = lower(${city}) and l.country_code = ${countryCode}
    order by l.id`;
  return rows.filter(options.where ?? (() => true)).slice(0, options.limit ?? 20);
}

async function listingsByUrl(urls: string[]): Promise<Listing[]> {
  const rows = await t.app.core.sql<Listing[]>`
    select l.*, h.host_key, h.name as host_name, h.email as host_email, h.phone as host_phone, h.is_pro, h.is_superhost, h.listings_count
    from rental_listing l join rental_host h on h.id = l.host_id where l.listing_url = any(${urls})`;
  return urls.map((u) => rows.find((r) => r.listing_url === u)!);
}

function rowOf(l: Listing, dates: { checkin?: string; checkout?: string; nights?: number } = {}) {
  const price = l.price_per_night === null ? null : Number(l.price_per_night);
  return {
    host_name: l.host_name,
    host_email: l.host_email,
    host_phone: l.host_phone,
    host_url: l.host_key,
    pro_host: l.is_pro,
    superhost: l.is_superhost,
    host_listings: l.listings_count,
    listing_url: l.listing_url,
    title: l.title,
    city: l.city,
    country: l.country,
    country_code: l.country_code,
    price,
    currency: l.currency,
    checkin: dates.checkin ?? null,
    checkout: dates.checkout ?? null,
    stay_price: dates.nights && price !== null ? Math.round(price * dates.nights * 100) / 100 : null,
    amenities: l.amenities,
    bedrooms: l.bedrooms,
    guests: l.guests,
    rating: l.rating,
    review_count: l.review_count,
  };
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);

describe('rental hosts: city mode', () => {
  it('reads one page of 20 listings per city by default, with every column, and bills 0.019 per result', async () => {
    const { accountId, apiKey } = await t.account();
    const expected = [...(await cityListings('Lisbon', 'PT')), ...(await cityListings('Berlin', 'DE'))].map((l) =>
      rowOf(l),
    );
    expect(expected.length).toBeGreaterThan(20);
    const { start, status, rows } = await t.runTool(apiKey, PATH, { city: ['Lisbon, Portugal', 'berlin, DE'] });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Searching 2 cities (Lisbon, Portugal; berlin, DE), up to 1 page of 20 listings each',
      estimatedCost: 0.76,
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      requested: 40,
      handled: expected.length,
      statusMessage: `Finished: ${expected.length} results`,
    });
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(rentalHostsTool.columns.map((c) => c.key));
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
    const [wallet] = await t.app.core
      .sql`select (plan_micros + purchased_micros)::text as total from wallet where account_id = ${accountId}`;
    expect(BigInt(wallet!.total)).toBe(100_000_000n - BigInt(expected.length) * PRICE_MICROS);
  });

  it('reads maxPages pages of 20 per city, in catalog order, and a repeated city once', async () => {
    const [busiest] = await t.app.core
      .sql`select city, country, country_code from rental_listing group by 1, 2, 3 order by count(*) desc, city limit 1`;
    const all = await cityListings(busiest!.city, busiest!.country_code, { limit: 10_000 });
    expect(all.length).toBeGreaterThan(20);
    const city = `${busiest!.city}, ${busiest!.country}`;
    const { start, status, rows } = await t.runTool(key, PATH, { city: [city, city.toUpperCase()], maxPages: 2 });
    expect(start.estimatedCost).toBe(0.76);
    expect(status).toMatchObject({ requested: 40, handled: Math.min(40, all.length) });
    expect(rows).toEqual(all.slice(0, 40).map((l) => rowOf(l)));
  });

  it('applies the amenity, superhost, price and pro-host filters before paging', async () => {
    const where = (l: Listing) => {
      const amenities = l.amenities.map((a) => a.toLowerCase());
      const price = Number(l.price_per_night);
      return amenities.includes('wifi') && amenities.includes('kitchen') && price >= 50 && price <= 300;
    };
    const base = await cityListings('Paris', 'FR', { where, limit: 10_000 });
    expect(base.length).toBeGreaterThan(0);
    const { rows } = await t.runTool(key, PATH, {
      city: ['Paris, France'],
      amenities: ['WIFI', ' kitchen'],
      minPrice: 50,
      maxPrice: 300,
      maxPages: 5,
    });
    expect(rows).toEqual(base.slice(0, 100).map((l) => rowOf(l)));

    const superhosts = await cityListings('Paris', 'FR', { where: (l) => l.is_superhost, limit: 10_000 });
    const pros = await cityListings('Paris', 'FR', { where: (l) => l.is_pro, limit: 10_000 });
    expect(superhosts.length).toBeGreaterThan(0);
    expect(pros.length).toBeGreaterThan(0);
    expect((await t.runTool(key, PATH, { city: ['Paris, France'], onlySuperhosts: true, maxPages: 5 })).rows).toEqual(
      superhosts.map((l) => rowOf(l)),
    );
    expect((await t.runTool(key, PATH, { city: ['Paris, France'], onlyProHosts: true, maxPages: 5 })).rows).toEqual(
      pros.map((l) => rowOf(l)),
    );
  });

  it('onlyUniqueEmails keeps each host email once and leaves out rows without an email', async () => {
    const listings = [
      ...(await cityListings('Rome', 'IT', { limit: 100 })),
      ...(await cityListings('Florence', 'IT', { limit: 100 })),
    ];
    const seen = new Set<string>();
    const expected = listings.filter((l) => {
      const email = l.host_email?.toLowerCase();
      if (!email || seen.has(email)) return false;
      seen.add(email);
      return true;
    });
    expect(expected.length).toBeLessThan(listings.length);
    const { start, status, rows } = await t.runTool(key, PATH, {
      city: ['Rome, Italy', 'Florence, Italy'],
      maxPages: 5,
      onlyUniqueEmails: true,
    });
    expect(status).toMatchObject({ handled: listings.length });
    expect(rows).toEqual(expected.map((l) => rowOf(l)));
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
  });

  it('records checkin and checkout on each row with the price of the stay', async () => {
    const expected = (await cityListings('Prague', 'CZ', { limit: 5 })).map((l) =>
      rowOf(l, { checkin: '2030-06-01', checkout: '2030-06-04', nights: 3 }),
    );
    const { rows } = await t.runTool(key, PATH, {
      city: ['Prague, Czech Republic'],
      checkin: '2030-06-01',
      checkout: '2030-06-04',
    });
    expect(rows.slice(0, 5)).toEqual(expected);
    expect(rows[0].stay_price).toBe(Math.round(rows[0].price * 3 * 100) / 100);
  });

  it('returns nothing for a European city the catalog does not cover', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, { city: ['Oslo, Norway'] });
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 0 });
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(0n);
  });
});

describe('rental hosts: single and bulk modes', () => {
  it('single mode reads one listing link on any host, ignoring the query', async () => {
    const [listing] = await t.app.core.sql`select listing_url from rental_listing order by id desc limit 1`;
    const [expected] = await listingsByUrl([listing!.listing_url]);
    const roomId = /\/rooms\/(\d+)$/.exec(listing!.listing_url)![1];
    const { start, status, rows } = await t.runTool(key, PATH, {
      mode: 'single',
      listingUrl: `https://rentals.example.de/de/rooms/${roomId}?adults=2#photos`,
    });
    expect(start).toMatchObject({ message: 'Reading 1 listing link', estimatedCost: 0.019 });
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 1, handled: 1 });
    expect(rows).toEqual([rowOf(expected!)]);
  });

  it('bulk mode reads each link once, in order, skipping unknown listings, and onlyProHosts applies', async () => {
    const urls: string[] = (await t.app.core.sql`select listing_url from rental_listing order by id limit 6`).map(
      (r) => r.listing_url,
    );
    const noWww = urls[2]!.replace('://www.', '://');
    const unknown = urls[0]!.replace(/\/rooms\/\d+$/, '/rooms/999999999');
    const body = { mode: 'bulk', bulkListings: [urls[0], urls[1], unknown, noWww, urls[0], urls[3], urls[4], urls[5]] };
    const expected = await listingsByUrl([urls[0]!, urls[1]!, urls[2]!, urls[3]!, urls[4]!, urls[5]!]);
    const { start, status, rows } = await t.runTool(key, PATH, body);
    expect(start).toMatchObject({ message: 'Reading 7 listing links', estimatedCost: 0.133 });
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 7, handled: 7 });
    expect(rows).toEqual(expected.map((l) => rowOf(l)));
    expect(await charged(start.runId)).toBe(6n * PRICE_MICROS);

    const pros = await t.runTool(key, PATH, { ...body, onlyProHosts: true });
    expect(pros.rows).toEqual(expected.filter((l) => l.is_pro).map((l) => rowOf(l)));
  });

  it('cannot be cancelled', async () => {
    const { start } = await t.runTool(key, PATH, {
      mode: 'bulk',
      bulkListings: ['https://www.stayhosts.net/rooms/5000001'],
    });
    const res = await t.request('POST', `/api/v1/scrape/cancel/${start.runId}`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('not_cancellable');
  });
});

describe('rental hosts: refusals', () => {
  const cases: [string, unknown, string, RegExp][] = [
    [
      'a city outside Europe',
      { city: ['Lisbon, Portugal', 'Boston, USA'] },
      'city.1',
      /United States is not in Europe; this tool covers European countries only/,
    ],
    ['a city without a country', { city: ['Paris'] }, 'city.0', /must be "City, Country"/],
    ['an unknown country', { city: ['Paris, Narnia'] }, 'city.0', /unknown country "Narnia"/],
    ['city mode without cities', {}, 'city', /required in city mode/],
    ['single mode without listingUrl', { mode: 'single' }, 'listingUrl', /required in single mode/],
    ['bulk mode without bulkListings', { mode: 'bulk' }, 'bulkListings', /required in bulk mode/],
    ['an unknown mode', { mode: 'map', city: ['Paris, France'] }, 'mode', /city|single|bulk/],
    [
      'listingUrl in city mode',
      { city: ['Paris, France'], listingUrl: 'https://www.stayhosts.net/rooms/5000001' },
      'listingUrl',
      /is for mode "single"/,
    ],
    [
      'cities in bulk mode',
      { mode: 'bulk', bulkListings: ['https://www.stayhosts.net/rooms/5000001'], city: ['Paris, France'] },
      'city',
      /is for mode "city"/,
    ],
    [
      'an amenity filter in single mode',
      { mode: 'single', listingUrl: 'https://www.stayhosts.net/rooms/5000001', amenities: ['Wifi'] },
      'amenities',
      /city mode only/,
    ],
    [
      'a price filter in bulk mode',
      { mode: 'bulk', bulkListings: ['https://www.stayhosts.net/rooms/5000001'], maxPrice: 100 },
      'maxPrice',
      /city mode only/,
    ],
    [
      'a superhost filter in bulk mode',
      { mode: 'bulk', bulkListings: ['https://www.stayhosts.net/rooms/5000001'], onlySuperhosts: true },
      'onlySuperhosts',
      /city mode only/,
    ],
    [
      'maxPrice below minPrice',
      { city: ['Paris, France'], minPrice: 200, maxPrice: 100 },
      'maxPrice',
      /not be below minPrice/,
    ],
    ['a negative price', { city: ['Paris, France'], minPrice: -1 }, 'minPrice', /0 or more/],
    [
      'a listing link without /rooms/<id>',
      { mode: 'single', listingUrl: 'https://www.stayhosts.net/users/show/1000001' },
      'listingUrl',
      /\/rooms\/<id>/,
    ],
    [
      'a bad link among bulk listings',
      { mode: 'bulk', bulkListings: ['https://www.stayhosts.net/rooms/5000001', 'rooms/5'] },
      'bulkListings.1',
      /\/rooms\/<id>/,
    ],
    ['zero pages', { city: ['Paris, France'], maxPages: 0 }, 'maxPages', /at least 1/],
    ['too many pages', { city: ['Paris, France'], maxPages: 101 }, 'maxPages', /at most 100/],
    [
      'a checkin in another format',
      { city: ['Paris, France'], checkin: '01/06/2030', checkout: '2030-06-04' },
      'checkin',
      /YYYY-MM-DD/,
    ],
    [
      'a date that does not exist',
      { city: ['Paris, France'], checkin: '2030-02-30', checkout: '2030-03-04' },
      'checkin',
      /YYYY-MM-DD/,
    ],
    [
      'checkout before checkin',
      { city: ['Paris, France'], checkin: '2030-06-04', checkout: '2030-06-01' },
      'checkout',
      /after checkin/,
    ],
    [
      'checkout on the checkin day',
      { city: ['Paris, France'], checkin: '2030-06-04', checkout: '2030-06-04' },
      'checkout',
      /after checkin/,
    ],
    [
      'checkin without checkout',
      { city: ['Paris, France'], checkin: '2030-06-04' },
      'checkout',
      /required with checkin/,
    ],
    [
      'a checkin in the past',
      { city: ['Paris, France'], checkin: '2020-06-01', checkout: '2020-06-04' },
      'checkin',
      /in the past/,
    ],
    ['onlyProHosts that is not a boolean', { city: ['Paris, France'], onlyProHosts: 'yes' }, 'onlyProHosts', /boolean/],
  ];

  it.each(cases)('%s → 400 validation_failed', async (_, body, path, message) => {
    const [before] = await t.app.core.sql`select count(*)::int as n from run`;
    expectValidationError(await t.request('POST', PATH, { key, body }), path, message);
    const [after] = await t.app.core.sql`select count(*)::int as n from run`;
    expect(after!.n).toBe(before!.n);
  });
});

describe('rental hosts: GraphQL', () => {
  it('startRentalHostsScrape starts a city-mode run', async () => {
    const Start = graphql(`
      mutation RentalHostsStart($input: StartRentalHostsScrapeInput!) { startRentalHostsScrape(input: $input) { run { id status } message } }
    `);
    const res = await t.graphql(key, Start, {
      input: { mode: 'city', city: ['Vienna, Austria'], onlyUniqueEmails: false },
    });
    expect(res.body.errors).toBeUndefined();
    const out = res.body.data!.startRentalHostsScrape;
    expect(out).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Searching 1 city (Vienna, Austria), up to 1 page of 20 listings each',
    });
    await t.waitForRun(key, out.run!.id);
    const rows = await t.request('GET', `/api/downloads/${out.run!.id}?format=json`, { key });
    expect(rows.body).toEqual((await cityListings('Vienna', 'AT')).map((l) => rowOf(l)));
  });
});
