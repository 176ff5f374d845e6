import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { boxAround } from '../../src/shared/geo.ts';
import { parseMapLink, placeLink } from '../../src/tools/lib/map-links.ts';
import { mapsTool } from '../../src/tools/maps.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';
import { expectOnlyValidationError } from '../helpers/assertions.ts';

const PATH = '/api/v1/scrape/maps';
const PRICE_MICROS = mapsTool.price.unitMicros;
const DENVER_LINK = 'https://www.google.com/maps/search/dentists+in+Denver,+CO/@39.74,-104.99,12z';

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

interface Where {
  words: string;
  city?: string;
  state?: string;
  box?: { lat1: number; lng1: number; lat2: number; lng2: number };
  limit?: number;
}

/** The places a search should return, read straight from the catalog, as result rows. */
async function expectedRows({ words, city, state, box, limit = 10_000 }: Where, searchTerm = words) {
  const sql = t.app.core.sql;
  const rows = await sql<Place[]>`
    select * from local_business
    where search_text @@ plainto_tsquery('english', ${words})
      ${city ? sql`and lower(city) = lower(${city})` : sql``}
      ${state ? sql`and state = ${state}` : sql``}
      ${box ? sql`and lat between ${Math.min(box.lat1, box.lat2)} and ${Math.max(box.lat1, box.lat2)} and lng between ${Math.min(box.lng1, box.lng2)} and ${Math.max(box.lng1, box.lng2)}` : sql``}
    order by id limit ${limit}`;
  return rows.map((r) => rowOf(r, searchTerm));
}

/** A local_business row as postgres.js reads it (the columns a result row is made of). */
interface Place {
  place_id: string;
  name: string;
  category: string;
  street: string | null;
  city: string;
  state: string | null;
  postal_code: string | null;
  country_code: string;
  lat: number;
  lng: number;
  phone: string | null;
  website: string | null;
  emails: string[];
  rating: number | null;
  review_count: number;
  opening_hours: string[] | null;
}

function rowOf(r: Place, searchTerm: string) {
  return {
    name: r.name,
    category: r.category,
    address: [r.street, r.city, [r.state, r.postal_code].filter(Boolean).join(' ')].filter(Boolean).join(', '),
    street: r.street,
    city: r.city,
    state: r.state,
    postal_code: r.postal_code,
    country_code: r.country_code,
    phone: r.phone,
    website: r.website,
    emails: r.emails,
    rating: r.rating,
    review_count: r.review_count,
    hours: r.opening_hours,
    latitude: r.lat,
    longitude: r.lng,
    place_id: r.place_id,
    url: `https://www.google.com/maps/place/?q=place_id:${r.place_id}`,
    search_term: searchTerm,
  };
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);

describe('maps: a map-search url', () => {
  it("runs the link's words in the link's place, reports it in search_translation, and bills 0.0099 per business", async () => {
    const expected = await expectedRows({ words: 'dentists', city: 'Denver', state: 'CO' }, 'dentists');
    expect(expected.length).toBeGreaterThan(1);
    const { accountId, apiKey } = await t.account();
    const { start, status, rows } = await t.runTool(apiKey, PATH, { url: DENVER_LINK, maxCrawledPlacesPerSearch: 500 });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Searching 1 term, up to 500 places each',
      estimatedCost: 4.95,
      search_translation: {
        url: DENVER_LINK,
        kind: 'search',
        keywords: ['dentists'],
        keywordsFrom: 'link',
        location: 'Denver, CO',
        boundingBox: null,
        locationFrom: 'link',
        placeId: null,
      },
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      handled: expected.length,
      requested: 500,
      statusMessage: `Finished: ${expected.length} businesses`,
    });
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(mapsTool.columns.map((c) => c.key));
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
    const [wallet] = await t.app.core
      .sql`select (plan_micros + purchased_micros)::text as total from wallet where account_id = ${accountId}`;
    expect(BigInt(wallet!.total)).toBe(100_000_000n - BigInt(expected.length) * PRICE_MICROS);
  });

  it('searches the map area of a link that names no place', async () => {
    const link = 'https://www.google.com/maps/search/dentist/@39.74,-104.99,12z';
    const box = boxAround(39.74, -104.99, 12);
    const expected = await expectedRows({ words: 'dentist', box });
    expect(expected.length).toBeGreaterThan(0);
    const { start, rows } = await t.runTool(key, PATH, { url: link });
    expect(start.search_translation).toEqual({
      url: link,
      kind: 'search',
      keywords: ['dentist'],
      keywordsFrom: 'link',
      location: null,
      boundingBox: box,
      locationFrom: 'map area',
      placeId: null,
    });
    expect(rows).toEqual(expected.slice(0, 100));
    for (const row of rows) {
      expect(row.latitude).toBeGreaterThanOrEqual(box.lat1);
      expect(row.latitude).toBeLessThanOrEqual(box.lat2);
    }
  });

  it('lets searchStringsArray and locationQuery replace the words and the place of the link', async () => {
    const expected = await expectedRows({ words: 'plumber', city: 'Austin', state: 'TX' });
    expect(expected.length).toBeGreaterThan(0);
    const { start, rows } = await t.runTool(key, PATH, {
      url: DENVER_LINK,
      searchStringsArray: ['plumber'],
      locationQuery: 'Austin, TX',
    });
    expect(start.search_translation).toMatchObject({
      keywords: ['plumber'],
      keywordsFrom: 'searchStringsArray',
      location: 'Austin, TX',
      locationFrom: 'locationQuery',
      boundingBox: null,
    });
    expect(rows).toEqual(expected.slice(0, 100));
  });

  it('lets customGeolocation replace the place of the link, keeping its words', async () => {
    const box = { lat1: 47.7, lng1: -122.2, lat2: 47.5, lng2: -122.45 };
    const expected = await expectedRows({ words: 'dentists', box });
    expect(expected.length).toBeGreaterThan(0);
    const { start, rows } = await t.runTool(key, PATH, { url: DENVER_LINK, customGeolocation: box });
    expect(start.search_translation).toMatchObject({
      keywords: ['dentists'],
      keywordsFrom: 'link',
      location: null,
      boundingBox: box,
      locationFrom: 'customGeolocation',
    });
    expect(rows).toEqual(expected.slice(0, 100));
    for (const row of rows) expect(row.city).toBe('Seattle');
  });

  it('refuses a link with a map area but no words, unless searchStringsArray comes with it', async () => {
    const link = 'https://www.google.com/maps/search/@39.74,-104.99,12z';
    expectOnlyValidationError(
      await t.request('POST', PATH, { key, body: { url: link } }),
      'url',
      /no search words; send searchStringsArray/,
    );
    const { start, rows } = await t.runTool(key, PATH, {
      url: link,
      searchStringsArray: ['bakery'],
      maxCrawledPlacesPerSearch: 5,
    });
    expect(start.search_translation).toMatchObject({
      keywords: ['bakery'],
      keywordsFrom: 'searchStringsArray',
      locationFrom: 'map area',
    });
    expect(rows).toEqual(await expectedRows({ words: 'bakery', box: boxAround(39.74, -104.99, 12), limit: 5 }));
  });

  it('refuses a place link with a malformed place id', async () => {
    const res = await t.request('POST', PATH, {
      key,
      body: { url: 'https://www.google.com/maps/place/?q=place_id:no%20spaces' },
    });
    expectOnlyValidationError(res, 'url', /malformed place id/);
  });
});

describe('maps: single places', () => {
  it("finds each place link's one place (by place id, or by name nearest the link's point), once, and bills one business each", async () => {
    const sql = t.app.core.sql;
    const [a, b] = await sql<
      Place[]
    >`select * from local_business where city = 'Boston' and category = 'Bakery' order by id limit 2`;
    const byName = `https://www.google.com/maps/place/${encodeURIComponent(b!.name).replace(/%20/g, '+')}/@${b!.lat},${b!.lng},17z`;
    const missing = placeLink('ChIJdoesNotExist0000000000');
    const { start, status, rows } = await t.runTool(key, PATH, {
      startUrls: [placeLink(a!.place_id), byName, missing, placeLink(b!.place_id)],
    });
    expect(start.message).toBe('Searching 4 place links');
    expect(start.estimatedCost).toBe(0.0396);
    expect(start.search_translation).toBeUndefined();
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 4, handled: 2 });
    expect(rows).toEqual([rowOf(a!, a!.place_id), rowOf(b!, b!.name)]);
    expect(await charged(start.runId)).toBe(2n * PRICE_MICROS);
  });

  it('finds the place of a `url` place link, exact point first, and the url column links back to it', async () => {
    const [place] = await t.app.core.sql<
      Place[]
    >`select * from local_business where city = 'Chicago' and category = 'Florist' order by id desc limit 1`;
    // The view is centred away from the place; the data's !3d!4d point is the place itself.
    const link = `https://maps.example.org/maps/place/${encodeURIComponent(place!.name)}/@${place!.lat + 0.002},${place!.lng - 0.002},16z/data=!4m5!3m4!8m2!3d${place!.lat}!4d${place!.lng}`;
    const { start, rows } = await t.runTool(key, PATH, { url: link });
    expect(start.search_translation).toMatchObject({
      kind: 'place',
      keywords: [place!.name],
      locationFrom: 'map area',
      placeId: null,
    });
    expect(rows).toEqual([rowOf(place!, place!.name)]);
    expect(parseMapLink(rows[0].url)).toEqual({ kind: 'place', placeId: place!.place_id });
  });

  it('mixes place links and search links in startUrls, each place once', async () => {
    const [place] = await t.app.core.sql<
      Place[]
    >`select * from local_business where city = 'Denver' and state = 'CO' and category = 'Dentist' order by id limit 1`;
    const expected = await expectedRows({ words: 'dentists', city: 'Denver', state: 'CO', limit: 3 });
    const { rows } = await t.runTool(key, PATH, {
      startUrls: [placeLink(place!.place_id), 'https://www.google.com/maps/search/dentists+in+Denver,+CO'],
      maxCrawledPlacesPerSearch: 3,
    });
    // The first dentist came from the place link; the search skips it and still returns three new ones.
    const more = await expectedRows({ words: 'dentists', city: 'Denver', state: 'CO', limit: 4 });
    expect(expected[0]!.place_id).toBe(place!.place_id);
    expect(rows).toEqual([rowOf(place!, place!.place_id), ...more.slice(1)]);
  });
});

describe('maps: result columns', () => {
  it('has name, address, phone, website, rating, hours and review count, plus category, coordinates, place id and link, in the CSV too', async () => {
    const headers = mapsTool.columns.map((c) => c.header);
    for (const name of [
      'name',
      'address',
      'phone',
      'website',
      'rating',
      'hours',
      'review_count',
      'category',
      'latitude',
      'longitude',
      'place_id',
      'url',
    ]) {
      expect(headers).toContain(name);
    }
    const { start, rows } = await t.runTool(key, PATH, {
      searchStringsArray: ['coffee shop'],
      locationQuery: 'Seattle, WA',
      maxCrawledPlacesPerSearch: 3,
    });
    expect(rows).toEqual(await expectedRows({ words: 'coffee shop', city: 'Seattle', state: 'WA', limit: 3 }));
    expect(rows[0].hours).toEqual(expect.arrayContaining([expect.stringMatching(/^Monday: /)]));
    const csv = await t.request('GET', `/api/downloads/${start.runId}?format=csv`, { key });
    const records: string[][] = parse(csv.text);
    expect(records[0]).toEqual(headers);
    expect(records[1]![headers.indexOf('hours')]).toBe(rows[0].hours.join('; '));
    expect(records[1]![headers.indexOf('url')]).toBe(rows[0].url);
  });
});

describe('maps: GraphQL', () => {
  it('startMapsScrape reports the search_translation in details', async () => {
    const Start = graphql(`
      mutation MapsStartFromLink($input: StartMapsScrapeInput!) {
        startMapsScrape(input: $input) { run { id status } message searchTranslation { keywords location locationFrom } }
      }
    `);
    const res = await t.graphql(key, Start, {
      input: { url: DENVER_LINK, locationQuery: 'Boston, MA', maxCrawledPlacesPerSearch: 2 },
    });
    expect(res.body.errors).toBeUndefined();
    const out = res.body.data!.startMapsScrape;
    expect(out.run!.status).toBe('RUNNING');
    expect(out.message).toBe('Searching 1 term, up to 2 places each');
    expect(out.searchTranslation).toMatchObject({
      keywords: ['dentists'],
      location: 'Boston, MA',
      locationFrom: 'locationQuery',
    });
    await t.waitForRun(key, out.run!.id);
    const rows = await t.request('GET', `/api/downloads/${out.run!.id}?format=json`, { key });
    expect(rows.body).toEqual(await expectedRows({ words: 'dentists', city: 'Boston', state: 'MA', limit: 2 }));
  });
});
