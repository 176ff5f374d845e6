import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { placeLink } from '../../src/tools/lib/map-links.ts';
import { localReviewsTool } from '../../src/tools/local-reviews.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';
import { expectOnlyValidationError } from '../helpers/assertions.ts';

const PATH = '/api/v1/scrape/localreviews-scraper';
const PRICE_MICROS = localReviewsTool.price.unitMicros;

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

/** The local_business columns the expected rows are made of, as postgres.js reads them. */
interface Business {
  id: string;
  place_id: string;
  name: string;
  category: string;
  street: string | null;
  city: string;
  state: string | null;
  postal_code: string | null;
  lat: number;
  lng: number;
  phone: string | null;
  website: string | null;
  rating: number | null;
  review_count: number;
}
type Origin = { search_term: string | null; location: string | null; direct_url: string | null };

/** Businesses of a search, straight from the catalog, in id order. */
async function businessesOf(words: string, city: string, state: string, limit: number): Promise<Business[]> {
  return t.app.core.sql<Business[]>`
    select * from local_business
    where search_text @@ plainto_tsquery('english', ${words}) and lower(city) = lower(${city}) and state = ${state}
    order by id limit ${limit}`;
}

/** The review rows of these businesses: newest first, at most `perBusiness` each. */
async function reviewRows(found: { business: Business; origin: Origin }[], perBusiness = 20) {
  const rows: Record<string, unknown>[] = [];
  for (const { business: b, origin } of found) {
    const reviews = await t.app.core.sql`
      select review_key, author, rating, text, published_at::text as date from local_business_review
      where business_id = ${b.id} order by published_at desc, id desc limit ${perBusiness}`;
    for (const r of reviews) {
      rows.push({
        review_id: r.review_key,
        author: r.author,
        rating: r.rating,
        text: r.text,
        date: r.date,
        business_name: b.name,
        business_category: b.category,
        business_address: [b.street, b.city, [b.state, b.postal_code].filter(Boolean).join(' ')]
          .filter(Boolean)
          .join(', '),
        business_phone: b.phone,
        business_website: b.website,
        business_rating: b.rating,
        business_review_count: b.review_count,
        place_id: b.place_id,
        business_url: placeLink(b.place_id),
        ...origin,
      });
    }
  }
  return rows;
}

const search = (term: string, location: string) => (business: Business) => ({
  business,
  origin: { search_term: term, location, direct_url: null },
});
const direct = (url: string) => (business: Business) => ({
  business,
  origin: { search_term: null, location: null, direct_url: url },
});

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);

describe('local reviews: searchTerms × locations', () => {
  it('reads the reviews of searchLimit businesses per combination, terms first, and bills 0.0099 per review row', async () => {
    const { accountId, apiKey } = await t.account();
    const found = [
      ...(await businessesOf('dentist', 'Denver', 'CO', 3)).map(search('dentist', 'Denver, CO')),
      ...(await businessesOf('dentist', 'Austin', 'TX', 3)).map(search('dentist', 'Austin, TX')),
      ...(await businessesOf('bakery', 'Denver', 'CO', 3)).map(search('bakery', 'Denver, CO')),
      ...(await businessesOf('bakery', 'Austin', 'TX', 3)).map(search('bakery', 'Austin, TX')),
    ];
    expect(found).toHaveLength(12);
    const expected = await reviewRows(found);
    expect(expected.length).toBeGreaterThan(0);

    const { start, status, rows } = await t.runTool(apiKey, PATH, {
      searchTerms: ['dentist', 'bakery'],
      locations: ['Denver, CO', 'Austin, TX'],
      searchLimit: 3,
    });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Reading up to 20 reviews of up to 3 businesses for each of 4 search combinations',
      // 4 combinations × 3 businesses × 20 reviews × 0.0099
      estimatedCost: 2.376,
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      requested: 12,
      handled: 12,
      statusMessage: `Finished: ${expected.length} reviews`,
    });
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(localReviewsTool.columns.map((c) => c.key));
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
    const [wallet] = await t.app.core
      .sql`select (plan_micros + purchased_micros)::text as total from wallet where account_id = ${accountId}`;
    expect(BigInt(wallet!.total)).toBe(100_000_000n - BigInt(expected.length) * PRICE_MICROS);
  });

  it('defaults searchLimit to 10 businesses and caps the reviews per business with maxReviewsPerBusiness', async () => {
    const businesses = await businessesOf('plumber', 'Seattle', 'WA', 10);
    const expected = await reviewRows(businesses.map(search('plumber', 'Seattle, WA')), 1);
    const { start, status, rows } = await t.runTool(key, PATH, {
      searchTerms: ['plumber'],
      locations: ['Seattle, WA'],
      maxReviewsPerBusiness: 1,
    });
    expect(start.estimatedCost).toBe(0.099);
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 10, handled: businesses.length });
    expect(rows).toEqual(expected);
    expect(new Set(rows.map((r) => r.place_id)).size).toBe(rows.length);
  });

  it('returns a business found by two combinations once, and repeated terms or locations run once', async () => {
    // "dentist" and "dentists" find the same businesses: the second combination skips them and reads the next ones.
    const all = await businessesOf('dentist', 'Boston', 'MA', 4);
    const expected = await reviewRows([
      ...all.slice(0, 2).map(search('dentist', 'Boston, MA')),
      ...all.slice(2, 4).map(search('dentists', 'Boston, MA')),
    ]);
    const { status, rows } = await t.runTool(key, PATH, {
      searchTerms: ['dentist', 'dentists', 'Dentist'],
      locations: ['Boston, MA', 'boston, ma'],
      searchLimit: 2,
    });
    expect(status).toMatchObject({ requested: 4, handled: 4 });
    expect(rows).toEqual(expected);
  });

  it('is cancellable (a finished run answers run_finished)', async () => {
    const { start } = await t.runTool(key, PATH, {
      searchTerms: ['florist'],
      locations: ['Chicago, IL'],
      searchLimit: 1,
    });
    const res = await t.request('POST', `/api/v1/scrape/cancel/${start.runId}`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_finished');
  });
});

describe('local reviews: directUrls', () => {
  it('reads the business of a place link, a website URL and a named place link; unknown and repeated URLs give no rows', async () => {
    const sql = t.app.core.sql;
    const [a, b, c] = await sql<Business[]>`
      select * from local_business b where website is not null
        and (select count(*) from local_business_review r where r.business_id = b.id) >= 2
      order by id limit 3`;
    const byId = placeLink(a!.place_id);
    const host = new URL(b!.website!).hostname.replace(/^www\./, '');
    const byWebsite = `http://${host.toUpperCase()}/contact?ref=1`;
    const byName = `https://www.google.com/maps/place/${encodeURIComponent(c!.name)}/@${c!.lat},${c!.lng},17z`;
    const unknown = 'https://www.no-such-business.example/';
    const urls = [byId, byWebsite, unknown, byName, byId];
    const expected = await reviewRows([direct(byId)(a!), direct(byWebsite)(b!), direct(byName)(c!)]);

    const { start, status, rows } = await t.runTool(key, PATH, { directUrls: urls });
    expect(start).toMatchObject({
      message: 'Reading up to 20 reviews of each of 5 business URLs',
      estimatedCost: 0.99,
    });
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 5, handled: 5 });
    expect(rows).toEqual(expected);
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
  });

  it('gives no rows, and bills nothing, for a business without reviews', async () => {
    const [quiet] = await t.app.core.sql`
      select place_id from local_business b where not exists (select 1 from local_business_review r where r.business_id = b.id) order by id limit 1`;
    const { start, status, rows } = await t.runTool(key, PATH, { directUrls: [placeLink(quiet!.place_id)] });
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 1, statusMessage: 'Finished: 0 reviews' });
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(0n);
  });
});

describe('local reviews: refusals', () => {
  const cases: [string, unknown, string, RegExp][] = [
    [
      'directUrls with searchTerms',
      { directUrls: ['https://www.example.com'], searchTerms: ['dentist'], locations: ['Denver, CO'] },
      'directUrls',
      /either directUrls, or searchTerms with locations; not both/,
    ],
    [
      'directUrls with locations only',
      { directUrls: ['https://www.example.com'], locations: ['Denver, CO'] },
      'directUrls',
      /not both/,
    ],
    ['neither', { searchLimit: 5 }, '', /send either directUrls, or searchTerms with locations/],
    ['searchTerms without locations', { searchTerms: ['dentist'] }, 'locations', /required with searchTerms/],
    ['locations without searchTerms', { locations: ['Denver, CO'] }, 'searchTerms', /required with locations/],
    [
      'searchLimit over 50',
      { searchTerms: ['dentist'], locations: ['Denver, CO'], searchLimit: 51 },
      'searchLimit',
      /at most 50 per search-term and location combination/,
    ],
    [
      'searchLimit of 0',
      { searchTerms: ['dentist'], locations: ['Denver, CO'], searchLimit: 0 },
      'searchLimit',
      /at least 1/,
    ],
    ['an empty location', { searchTerms: ['dentist'], locations: [' '] }, 'locations.0', /must not be empty/],
    [
      'a map search link as a business',
      { directUrls: ['https://www.google.com/maps/search/dentists+in+Denver,+CO'] },
      'directUrls.0',
      /map search link, not a business/,
    ],
    ['a directUrl that is not a URL', { directUrls: ['Summit Dental'] }, 'directUrls.0', /not a URL/],
    [
      'a directUrl without a website host',
      { directUrls: ['http://localhost/dentist'] },
      'directUrls.0',
      /no website host/,
    ],
    [
      'maxReviewsPerBusiness of 0',
      { directUrls: ['https://www.example.com'], maxReviewsPerBusiness: 0 },
      'maxReviewsPerBusiness',
      /at least 1/,
    ],
  ];

  it.each(cases)('%s → 400 validation_failed', async (_, body, path, message) => {
    const [before] = await t.app.core.sql`select count(*)::int as n from run`;
    expectOnlyValidationError(await t.request('POST', PATH, { key, body }), path, message);
    const [after] = await t.app.core.sql`select count(*)::int as n from run`;
    expect(after!.n).toBe(before!.n);
  });

  it('accepts exactly 50 businesses per combination', async () => {
    const res = await t.request('POST', PATH, {
      key,
      body: { searchTerms: ['gym'], locations: ['Denver, CO'], searchLimit: 50, maxReviewsPerBusiness: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.body.estimatedCost).toBe(0.495);
    await t.waitForRun(key, res.body.runId);
  });
});

describe('local reviews: GraphQL', () => {
  it('startLocalReviewsScrape starts the same run', async () => {
    const Start = graphql(`
      mutation LocalReviewsStart($input: StartLocalReviewsScrapeInput!) { startLocalReviewsScrape(input: $input) { run { id status } message } }
    `);
    const res = await t.graphql(key, Start, {
      input: { searchTerms: ['yoga'], locations: ['Austin, TX'], searchLimit: 2 },
    });
    expect(res.body.errors).toBeUndefined();
    const out = res.body.data!.startLocalReviewsScrape;
    expect(out).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Reading up to 20 reviews of up to 2 businesses for each of 1 search combination',
    });
    await t.waitForRun(key, out.run!.id);
    const rows = await t.request('GET', `/api/downloads/${out.run!.id}?format=json`, { key });
    expect(rows.body).toEqual(
      await reviewRows((await businessesOf('yoga', 'Austin', 'TX', 2)).map(search('yoga', 'Austin, TX'))),
    );
  });

  it('refuses both inputs with the same validation code', async () => {
    const Start = graphql(`
      mutation LocalReviewsBothInputs($input: StartLocalReviewsScrapeInput!) { startLocalReviewsScrape(input: $input) { run { id } userErrors { code } } }
    `);
    const res = await t.graphql(key, Start, {
      input: { directUrls: ['https://www.example.com'], searchTerms: ['yoga'], locations: ['Austin, TX'] },
    });
    expect(res.body.data!.startLocalReviewsScrape.userErrors[0]!.code).toBe('VALIDATION_FAILED');
  });
});
