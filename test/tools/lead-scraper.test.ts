import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { LEAD_COLUMNS, leadScraperTool } from '../../src/tools/lead-scraper.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { runCount } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';

let t: TestApp;
let key: string;
let accountId: string;

const BASE = 'https://app.apollo.io/#/people';
const US_ENGINEERS = `${BASE}?personTitles[]=engineer&personLocations[]=United%20States&uniqueUrlId=a1b2c3&page=2`;
const US = `${BASE}?personLocations[]=United%20States`;
const PATH = '/api/v1/scrape/leadplatform';

beforeAll(async () => {
  ({ t, key, accountId } = await appWithAccount());
});
afterAll(() => t?.stop());

/** Ids of the people a filter selects, in id order, straight from the tables. */
async function idsWhere(condition: string): Promise<number[]> {
  const rows = await t.app.core.sql.unsafe(
    `select p.id::int as id from person p left join company c on c.id = p.company_id where ${condition} order by p.id`,
  );
  return rows.map((r) => r.id as number);
}

const chargedMicros = async (runId: string) => {
  const [row] = await t.app.core
    .sql`select charged_micros::bigint as charged, billed_units from run where id = ${runId}`;
  return { charged: BigInt(row!.charged), units: row!.billed_units as number };
};

const post = (body: unknown, k = key) => t.request('POST', PATH, { key: k, body });

/** A lead row of a download (LEAD_COLUMNS), with the columns the suite reads by name. */
interface LeadRow {
  id: number;
  title: string;
  country: string;
  company_website: string;
  [column: string]: unknown;
}

describe('a lead scrape through the real worker', () => {
  let runId: string;
  let rows: LeadRow[];
  let expected: number[];

  it('starts with runId and message, reports search_translation, and returns the first count matches in id order', async () => {
    expected = await idsWhere(`p.title ilike '%engineer%' and lower(p.country) = 'united states'`);
    expect(expected.length).toBeGreaterThan(500);
    const result = await t.runTool(key, PATH, { url: US_ENGINEERS, count: 500, fileName: 'us engineers' });
    runId = result.start.runId;
    rows = result.rows;
    expect(result.start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: expect.stringMatching(/^Scraping up to 500 leads .*capped at your wallet balance plus 1\.00 USD/),
      estimatedCost: 1.95,
      search_translation: {
        applied: [
          { parameter: 'personTitles[]', value: 'engineer', filter: 'title' },
          { parameter: 'personLocations[]', value: 'United States', filter: 'countries=United States' },
        ],
        broadened: [],
        unsupported: [],
        ignored: ['page'],
        overridden: [],
      },
    });
    expect(JSON.stringify(result.start)).not.toContain('uniqueUrlId');
    expect(result.status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: 'Finished: 500 leads',
      handled: 500,
      requested: 500,
    });
    expect(rows.map((r) => r.id)).toEqual(expected.slice(0, 500));
  });

  it('returns the lead record fields with the person’s and the company’s data', async () => {
    expect(Object.keys(rows[0]!)).toEqual(LEAD_COLUMNS.map((c) => c.key));
    const ids = rows.map((r) => r.id);
    const db = await t.app.core.sql`
      select p.id::int, p.first_name, p.last_name, p.title, p.seniority, p.department, p.email, p.email_status, p.phone, p.mobile, p.linkedin_url,
             p.city, p.state, p.country, c.name as company_name, c.domain, c.industry, c.size_band, c.employees_count, c.annual_revenue::float8 as revenue,
             c.city as c_city, c.state as c_state, c.country as c_country, c.keywords, c.technologies, c.founded
      from person p left join company c on c.id = p.company_id where p.id = any(${ids}::bigint[]) order by p.id`;
    for (const [i, p] of db.entries()) {
      const row = rows[i]!;
      expect(row).toMatchObject({
        id: p.id,
        first_name: p.first_name,
        last_name: p.last_name,
        full_name: `${p.first_name} ${p.last_name}`,
        title: p.title,
        seniority: p.seniority,
        department: p.department,
        email: p.email,
        email_status: p.email_status,
        phone: p.phone,
        mobile: p.mobile,
        linkedin_url: p.linkedin_url,
        city: p.city,
        state: p.state,
        country: p.country,
        company_name: p.company_name,
        company_domain: p.domain,
        company_website: `https://${p.domain}`,
        company_industry: p.industry,
        company_size: p.size_band,
        employees_count: p.employees_count,
        company_annual_revenue: p.revenue,
        company_city: p.c_city,
        company_state: p.c_state,
        company_country: p.c_country,
        keywords: p.keywords.length ? p.keywords : null,
        company_technologies: p.technologies.length ? p.technologies : null,
        company_founded: p.founded,
      });
      expect(row.title).toMatch(/engineer/i);
      expect(row.country).toBe('United States');
    }
  });

  it('bills 0.0039 USD per lead', async () => {
    expect(await chargedMicros(runId)).toEqual({ charged: 500n * 3_900n, units: 500 });
  });

  it('names the CSV after fileName, with one column per lead field', async () => {
    const res = await t.request('GET', `/api/downloads/${runId}`, { key });
    expect(res.headers.get('content-disposition')).toBe('attachment; filename="us_engineers.csv"');
    const records: string[][] = parse(res.text);
    expect(records[0]).toEqual(LEAD_COLUMNS.map((c) => c.header));
    expect(records).toHaveLength(501);
    expect(records[1]![records[0]!.indexOf('company_website')]).toBe(rows[0]!.company_website);
  });
});

describe('count', () => {
  it('defaults to 1,000', async () => {
    const expected = await idsWhere(`lower(p.country) = 'united states'`);
    const { start, status, rows } = await t.runTool(key, PATH, { url: US });
    expect(start.estimatedCost).toBe(3.9);
    expect(status).toMatchObject({ status: 'SUCCEEDED', requested: 1000, handled: 1000 });
    expect(rows.map((r) => r.id)).toEqual(expected.slice(0, 1000));
  });

  it('is read in chunks: 2,500 leads come back whole, in order, without repeats', async () => {
    const expected = await idsWhere(`lower(p.country) = 'united states'`);
    const { start, status, rows } = await t.runTool(key, PATH, { url: US, count: 2500 });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: 'Finished: 2500 leads',
      handled: 2500,
      requested: 2500,
    });
    const ids = rows.map((r) => r.id);
    expect(new Set(ids).size).toBe(2500);
    expect(ids).toEqual(expected.slice(0, 2500));
    expect((await chargedMicros(start.runId)).charged).toBe(2500n * 3_900n);
  });

  it('returns every match, billed, when fewer leads match than count; the total agrees with the lead database API', async () => {
    const url = `${BASE}?personTitles[]=engineer&personLocations[]=United%20States&organizationNumEmployeesRanges[]=11,50`;
    const expected = await idsWhere(
      `p.title ilike '%engineer%' and lower(p.country) = 'united states' and c.employees_count between 11 and 50`,
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(expected.length).toBeLessThan(500);
    const { start, status, rows } = await t.runTool(key, PATH, { url, count: 500 });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage: `Finished: ${expected.length} leads`,
      handled: expected.length,
    });
    expect(rows.map((r) => r.id)).toEqual(expected);
    expect((await chargedMicros(start.runId)).charged).toBe(BigInt(expected.length) * 3_900n);
    const database = await t.request('GET', `/api/v1/database/leads?url=${encodeURIComponent(url)}&limit=1`, { key });
    expect(database.status, database.text).toBe(200);
    expect(database.body.pagination.total).toBe(expected.length);
    expect(database.body.search_translation).toEqual(start.search_translation);
  });

  it.each([
    [499, 'must be at least 500'],
    [50_001, 'must be at most 50000 per run'],
    [1000.5, 'must be a whole number'],
    ['1000', 'must be a number'],
  ])('refuses count %j with validation_failed', async (count, message) => {
    const res = await post({ url: US, count });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ path: 'count', message }] });
  });
});

describe('the wallet cap', () => {
  it('stops at the wallet balance plus 1 USD, keeps and bills what it got, and says so', async () => {
    const { apiKey, accountId: capped } = await t.account({ creditsMicros: 1_000_000n }); // 1.00 USD
    const expected = await idsWhere(`lower(p.country) = 'united states'`);
    const { start, status, rows } = await t.runTool(apiKey, PATH, { url: US, count: 1000 });
    // 2.00 USD held: 512 leads cost 1.9968 USD, a 513th would pass it.
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      statusMessage:
        'Stopped after 512 leads: the 2.00 USD held for this run (the wallet balance plus 1.00 USD) is used up. Buy credits to get more.',
      handled: 512,
    });
    expect(rows.map((r) => r.id)).toEqual(expected.slice(0, 512));
    expect(await chargedMicros(start.runId)).toEqual({ charged: 512n * 3_900n, units: 512 });
    const [wallet] = await t.app.core
      .sql`select (plan_micros + purchased_micros)::bigint as total from wallet where account_id = ${capped}`;
    expect(BigInt(wallet!.total)).toBe(1_000_000n - 512n * 3_900n);
    // Below zero now: the next scrape can only be refused.
    const again = await post({ url: US }, apiKey);
    expect(again.status).toBe(402);
    expect(again.body.error.code).toBe('insufficient_funds');
  });
});

describe('refusals', () => {
  const runsOf = () => runCount(t.app.core.sql, accountId);

  it('refuses the newer format without brackets with 400 unsupported_url_format, explaining the older one', async () => {
    const before = await runsOf();
    const res = await post({ url: `${BASE}?personTitles=ceo&personLocations=United%20States&page=1` });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('unsupported_url_format');
    expect(res.body.error.message).toMatch(/newer format/);
    expect(res.body.error.message).toMatch(/personTitles\[\]=/);
    expect(await runsOf()).toBe(before);
  });

  it('refuses a URL without any filter the lead database can use', async () => {
    const res = await post({ url: `${BASE}?sortByField=name&page=2&uniqueUrlId=x&somethingElse[]=1` });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('no_usable_filters');
    // details name each parameter found, in the one {path, message} shape; the translation is beside the error.
    expect(res.body.error.details).toEqual([
      { path: 'url', message: expect.stringMatching(/^somethingElse\[\]=1: /) },
      { path: 'url', message: 'sortByField: ignored (paging, sorting or view)' },
      { path: 'url', message: 'page: ignored (paging, sorting or view)' },
    ]);
    expect(res.body.search_translation.unsupported).toEqual([
      { parameter: 'somethingElse[]', value: '1', note: expect.any(String) },
    ]);
  });

  it.each([
    [{}, 'url', 'url is required: a people-search URL in the bracket format'],
    [{ url: 'not a link' }, 'url', 'is not a URL'],
    [{ url: 42 }, 'url', 'must be a string'],
    [{ url: US, fileName: 'x'.repeat(51) }, 'fileName', 'must be at most 50 characters'],
    [{ url: US, fileName: '  ' }, 'fileName', 'must not be empty'],
  ])('refuses %j naming the field', async (body, path, message) => {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'validation_failed', details: [{ path, message }] });
  });

  it('fails a search with company filters while company data is being prepared, billing nothing', async () => {
    await t.app.core.sql`update dataset_state set ready = false where dataset = 'companies'`;
    try {
      const { start, status, rows } = await t.runTool(key, PATH, { url: `${BASE}?qOrganizationKeywordTags[]=saas` });
      expect(status.status).toBe('FAILED');
      expect(status.statusMessage).toMatch(
        /^Company data is still being prepared, so these filters cannot be applied yet: keywords\./,
      );
      expect(rows).toEqual([]);
      expect((await chargedMicros(start.runId)).charged).toBe(0n);
    } finally {
      await t.app.core.sql`update dataset_state set ready = true where dataset = 'companies'`;
    }
  });

  it('is not cancellable', () => {
    expect(leadScraperTool.cancellable).toBe(false);
  });
});

describe('status and GraphQL', () => {
  it('GET /api/v1/apollo-status reports the url-based mode the scraper enforces', async () => {
    const res = await t.request('GET', '/api/v1/apollo-status', { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: 'url-based',
      message: expect.stringMatching(/older bracket format/),
      timestamp: expect.any(String),
    });
  });

  it('startLeadScrape starts the same scrape', async () => {
    const Start = graphql(`
      mutation LeadScrapeStart($input: StartLeadScrapeInput!) {
        startLeadScrape(input: $input) { run { id status } message estimatedCost searchTranslation { applied { parameter value filter } } }
      }
    `);
    const res = await t.graphql(key, Start, { input: { url: US_ENGINEERS, count: 500 } });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startLeadScrape;
    expect(payload).toMatchObject({
      run: { id: expect.any(String), status: 'RUNNING' },
      message: expect.stringMatching(/^Scraping up to 500 leads/),
      estimatedCost: '1.95',
    });
    expect(payload.searchTranslation!.applied).toHaveLength(2);
    const done = await t.waitForRun(key, payload.run!.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', handled: 500 });

    const Refused = graphql(
      `mutation LeadScrapeRefused($input: StartLeadScrapeInput!) { startLeadScrape(input: $input) { run { id } userErrors { code } } }`,
    );
    const refused = await t.graphql(key, Refused, { input: { url: `${BASE}?personTitles=ceo` } });
    expect(refused.body.data!.startLeadScrape).toEqual({ run: null, userErrors: [{ code: 'UNSUPPORTED_URL_FORMAT' }] });
  });
});
