import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../helpers/app.ts';
import { graphql } from '../helpers/gql/index.ts';

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await startTestApp({ worker: false });
  ({ apiKey: key } = await t.account({ plan: 'growth' }));
});
afterAll(() => t?.stop());

const ids = (list: { id: number }[]) => list.map((x) => x.id);

const BostonBakeries = graphql(`
  query CatalogBostonBakeries {
    localBusinesses(filter: { category: ["Bakery"], city: ["Boston"] }, first: 3) {
      totalCount
      pageInfo { hasNextPage }
      edges { node { id databaseId name category city } }
    }
  }
`);
const WooCommerceStores = graphql(`
  query CatalogWooCommerceStores {
    stores(filter: { platform: "woocommerce" }, first: 2) { totalCount edges { node { platform domain socialProfiles { instagram facebook } } } }
  }
`);
const EnrichLeads = graphql(`
  mutation CatalogEnrichLeads($rows: [LeadEnrichmentInput!]!) { enrichLeads(rows: $rows) { rows { matchStatus matchedBy lead { email } } userErrors { code } } }
`);
const EnrichOnePhone = graphql(`
  mutation CatalogEnrichOnePhone { enrichLocalBusinesses(rows: [{ phone: "3035550100" }]) { rows { matchStatus } userErrors { code field } } }
`);
const EnrichLocalBusinesses = graphql(`
  mutation CatalogEnrichLocalBusinesses($rows: [LocalBusinessEnrichmentInput!]!) {
    enrichLocalBusinesses(rows: $rows) {
      rows { matchStatus matchedBy business { name phone city reviews { rating } } }
      summary { total matched notFound }
      userErrors { code }
    }
  }
`);
const Stores = graphql(`
  query CatalogStores($f: StoreFilter, $after: String) {
    stores(filter: $f, first: 5, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { databaseId } } }
  }
`);
// Valid documents whose filter values the service refuses.
const RatingAboveFive = graphql(
  `query CatalogRatingAboveFive { localBusinesses(filter: { minRating: 7 }) { totalCount } }`,
);
const VisitsAndAlias = graphql(
  `query CatalogVisitsAndAlias { stores(filter: { visitsMin: 10, minEstimatedMonthlyVisits: 20 }) { totalCount } }`,
);

describe('GET/POST /api/v1/database/local-businesses', () => {
  it('filters by category, city, rating and presence of contact data, with the total', async () => {
    const all = (await t.app.core
      .sql`select id::int, category, city, state, rating, review_count, phone, website, emails from local_business order by id`) as unknown as {
      id: number;
      category: string;
      city: string;
      state: string;
      rating: number | null;
      review_count: number;
      phone: string | null;
      website: string | null;
      emails: string[];
    }[];
    const expected = all.filter(
      (b) =>
        b.category === 'Dentist' &&
        ['Denver', 'Austin'].includes(b.city) &&
        (b.rating ?? 0) >= 4 &&
        b.phone !== null &&
        b.website !== null,
    );
    const res = await t.request(
      'GET',
      '/api/v1/database/local-businesses?category=dentist&city=Denver,Austin&minRating=4&hasPhone=true&hasWebsite=true&limit=100',
      { key },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(expected.length);
    expect(ids(res.body.businesses)).toEqual(expected.map((b) => b.id));
    expect(res.body.businesses[0]).toMatchObject({ category: 'Dentist', place_id: expect.any(String) });
    const post = await t.request('POST', '/api/v1/database/local-businesses', {
      key,
      body: {
        category: ['Dentist'],
        city: ['Denver', 'Austin'],
        minRating: 4,
        hasPhone: true,
        hasWebsite: true,
        limit: 100,
      },
    });
    expect(ids(post.body.businesses)).toEqual(ids(res.body.businesses));
  });

  it('searches words of name and category, by state name, and pages by cursor', async () => {
    const res = await t.request(
      'GET',
      '/api/v1/database/local-businesses?keyword=coffee&state=Colorado&after=0&limit=5',
      { key },
    );
    expect(res.body.businesses.every((b: { state: string }) => b.state === 'CO')).toBe(true);
    const next = await t.request(
      'GET',
      `/api/v1/database/local-businesses?keyword=coffee&state=Colorado&after=${res.body.pagination.next_after}&limit=5`,
      { key },
    );
    const page2 = await t.request(
      'GET',
      '/api/v1/database/local-businesses?keyword=coffee&state=Colorado&page=2&limit=5',
      { key },
    );
    expect(ids(next.body.businesses)).toEqual(ids(page2.body.businesses));
    expect(next.body.pagination.total).toBe(res.body.pagination.total);
  });

  it('refuses unknown parameters and starter accounts', async () => {
    expect((await t.request('GET', '/api/v1/database/local-businesses?colour=red', { key })).status).toBe(400);
    const starter = await t.account({ plan: 'starter' });
    expect((await t.request('GET', '/api/v1/database/local-businesses', { key: starter.apiKey })).body.error.code).toBe(
      'plan_required',
    );
  });
});

describe('GET/POST /api/v1/database/stores', () => {
  it('applies the store-leads filters, aliases included', async () => {
    const all = (await t.app.core
      .sql`select id::int, platform, country_code, plan_tier, instagram_url, emails, estimated_monthly_visits as visits, technologies from store order by id`) as unknown as {
      id: number;
      platform: string;
      country_code: string;
      plan_tier: string;
      instagram_url: string | null;
      emails: string[];
      visits: number;
      technologies: string[];
    }[];
    const expected = all.filter(
      (s) =>
        s.platform === 'shopify' &&
        s.country_code === 'US' &&
        s.plan_tier !== 'plus' &&
        s.instagram_url !== null &&
        s.emails.length > 0 &&
        s.visits >= 5000 &&
        s.technologies.includes('Klaviyo'),
    );
    const res = await t.request(
      'GET',
      '/api/v1/database/stores?platform=Shopify&countryCode=us&planExclude=PLUS&instagram=true&emails=true&visitsMin=5000&technologies=Klaviyo&limit=100',
      { key },
    );
    expect(res.status, res.text).toBe(200);
    expect(res.body.pagination.total).toBe(expected.length);
    expect(ids(res.body.stores)).toEqual(expected.slice(0, 100).map((s) => s.id));
    const long = await t.request(
      'GET',
      '/api/v1/database/stores?platform=shopify&countryCode=US&planExclude=plus&instagram=true&emails=true&minEstimatedMonthlyVisits=5000&technologies=Klaviyo&limit=100',
      { key },
    );
    expect(long.body.pagination.total).toBe(expected.length);
  });

  it('counts returned records against the daily allowance', async () => {
    const { apiKey, accountId } = await t.account({ plan: 'growth' });
    await t.request('GET', '/api/v1/database/stores?limit=7', { key: apiKey });
    const [row] = await t.app.core
      .sql`select used from daily_usage where account_id = ${accountId} and kind = 'database'`;
    expect(row!.used).toBe(7);
  });
});

describe('GraphQL catalog queries and enrichment mutations', () => {
  it('answers like REST', async () => {
    const rest = await t.request('GET', '/api/v1/database/local-businesses?category=Bakery&city=Boston&limit=3', {
      key,
    });
    const gql = await t.graphql(key, BostonBakeries);
    expect(gql.body.errors).toBeUndefined();
    expect(gql.body.data!.localBusinesses!.totalCount).toBe(rest.body.pagination.total);
    expect(gql.body.data!.localBusinesses!.edges.map((e) => Number(e.node.databaseId))).toEqual(
      ids(rest.body.businesses),
    );

    const stores = await t.graphql(key, WooCommerceStores);
    expect(stores.body.data!.stores!.edges.every((e) => e.node.platform === 'woocommerce')).toBe(true);

    const [p] = await t.app.core.sql`select email from person where email is not null limit 1`;
    const enriched = await t.graphql(key, EnrichLeads, { rows: [{ email: p!.email }] });
    expect(enriched.body.data!.enrichLeads).toEqual({
      rows: [{ matchStatus: 'MATCHED', matchedBy: 'EMAIL', lead: { email: p!.email } }],
      userErrors: [],
    });
    const refused = await t.graphql(key, EnrichOnePhone);
    expect(refused.body.data!.enrichLocalBusinesses).toEqual({
      rows: null,
      userErrors: [{ code: 'PLAN_REQUIRED', field: null }],
    });
    const scale = await t.account({ plan: 'scale' });
    const [place] = await t.app.core
      .sql`select name, phone, city from local_business where phone is not null order by id limit 1`;
    const places = await t.graphql(scale.apiKey, EnrichLocalBusinesses, {
      rows: [{ phone: place!.phone }, { name: 'No Such Place Anywhere', city: 'Nowhere' }],
    });
    expect(places.body.errors).toBeUndefined();
    expect(places.body.data!.enrichLocalBusinesses).toMatchObject({
      rows: [
        {
          matchStatus: 'MATCHED',
          matchedBy: 'PHONE',
          business: { name: place!.name, phone: place!.phone, city: place!.city, reviews: expect.any(Array) },
        },
        { matchStatus: 'NOT_FOUND', matchedBy: null, business: null },
      ],
      summary: { total: 2, matched: 1, notFound: 1 },
      userErrors: [],
    });
  });

  it('takes typed filters checked by the same rules as REST', async () => {
    const rest = await t.request('POST', '/api/v1/database/stores', {
      key,
      body: { platform: ['shopify'], countryCode: ['US'], emails: true, visitsMin: 1000, limit: 5 },
    });
    const typed = await t.graphql(key, Stores, {
      f: { platform: ['shopify'], countryCode: ['US'], emails: true, visitsMin: 1000 },
    });
    expect(typed.body.errors).toBeUndefined();
    expect(typed.body.data!.stores!.totalCount).toBe(rest.body.pagination.total);
    expect(typed.body.data!.stores!.edges.map((e) => Number(e.node.databaseId))).toEqual(ids(rest.body.stores));
    const next = await t.graphql(key, Stores, {
      f: { platform: ['shopify'], countryCode: ['US'], emails: true, visitsMin: 1000 },
      after: typed.body.data!.stores!.pageInfo.endCursor,
    });
    const restNext = await t.request('POST', '/api/v1/database/stores', {
      key,
      body: {
        platform: ['shopify'],
        countryCode: ['US'],
        emails: true,
        visitsMin: 1000,
        limit: 5,
        after: rest.body.pagination.next_after,
      },
    });
    expect(next.body.data!.stores!.edges.map((e) => Number(e.node.databaseId))).toEqual(ids(restNext.body.stores));

    // Values the service refuses keep their REST code and path.
    const range = await t.graphql(key, RatingAboveFive);
    expect(range.body.errors![0]!.extensions!.code).toBe('VALIDATION_FAILED');
    expect(range.body.errors![0]!.extensions!.details).toEqual([{ path: 'minRating', message: 'must be at most 5' }]);
    const alias = await t.graphql(key, VisitsAndAlias);
    expect(alias.body.errors![0]!.extensions!.code).toBe('VALIDATION_FAILED');
    expect(alias.body.errors![0]!.extensions!.details).toMatchObject([
      { path: 'visitsMin', message: expect.stringMatching(/alias/) },
    ]);
    // Unknown filters and wrong types are refused by the schema before anything runs (strings: they do not validate).
    const unknown = await t.graphql(key, '{ stores(filter: {colour: "red"}) { totalCount } }');
    expect(unknown.body.errors[0].message).toMatch(/colour/);
    expect(unknown.body.data).toBeUndefined();
    expect(unknown.body.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    const paging = await t.graphql(key, '{ localBusinesses(filter: {page: 2}) { totalCount } }');
    expect(paging.body.errors[0].message).toMatch(/page/);
  });
});
