import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { HOME_SERVICE_CATEGORIES } from '../../db/tables/home-services.ts';
import { homeServicesTool } from '../../src/tools/home-services.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { chargedMicros, runColumns } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';
import { expectValidationError } from '../helpers/assertions.ts';

const PATH = '/api/v1/scrape/homeservices-scraper';
const PRICE_MICROS = homeServicesTool.price.unitMicros;

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

/** The rows a search should return, read straight from the catalog table, in id order. */
async function expectedRows(category: string, zipCodes: string[] = [], limit = 1_000_000) {
  const pros = await t.app.core.sql`
    select id, profile_url, name, category, grade, phone, email, website, street, city, state, zip, hours, licensed, insured,
           years_in_business, service_zips, rating, review_count
    from home_service_pro
    where category = ${category} ${zipCodes.length ? t.app.core.sql`and service_zips && ${t.app.core.sql.array(zipCodes)}::text[]` : t.app.core.sql``}
    order by id limit ${limit}`;
  return pros.map((p) => ({
    name: p.name,
    category: p.category,
    grade: p.grade,
    rating: p.rating,
    review_count: p.review_count,
    phone: p.phone,
    email: p.email,
    website: p.website,
    address: [p.street, p.city, `${p.state} ${p.zip}`].filter(Boolean).join(', '),
    street: p.street,
    city: p.city,
    state: p.state,
    zip: p.zip,
    hours: p.hours,
    licensed: p.licensed,
    insured: p.insured,
    years_in_business: p.years_in_business,
    service_areas: p.service_zips,
    matched_zip_codes: zipCodes.filter((z) => (p.service_zips as string[]).includes(z)),
    profile_url: p.profile_url,
  }));
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);
/** The run's input as stored (after defaults and caps). */
const storedInput = async (runId: string) => (await runColumns(t.app.core.sql, runId, ['input'])).input;

describe('home services: a nationwide search', () => {
  it('answers with the spec start shape, finishes, returns every column from the catalog and bills 0.0099 per listing', async () => {
    const { accountId, apiKey } = await t.account();
    const before = await t.walletMicros(accountId);
    const expected = await expectedRows('plumbing');
    expect(expected.length).toBeGreaterThan(0);

    const { start, status, rows } = await t.runTool(apiKey, PATH, { keyword: 'plumbing' });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Searching "plumbing" pros nationwide, up to 100 listings',
      estimatedCost: 0.99,
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      handled: expected.length,
      requested: 100,
      statusMessage: `Finished: ${expected.length} listings`,
    });
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(homeServicesTool.columns.map((c) => c.key));
    for (const row of rows) {
      expect(['A', 'B', 'C', 'D', 'F', null]).toContain(row.grade);
      expect(row.hours.length).toBeGreaterThan(0);
      expect(typeof row.licensed).toBe('boolean');
      expect(typeof row.insured).toBe('boolean');
    }

    const run = { input: await storedInput(start.runId), charged: await charged(start.runId) };
    expect(run.input).toEqual({ keyword: 'plumbing', zipCodes: [], maxItems: 100 });
    expect(run.charged).toBe(BigInt(expected.length) * PRICE_MICROS);
    expect(await t.walletMicros(accountId)).toBe(before - run.charged);
  });

  it('downloads a CSV with a header of the tool columns and lists joined', async () => {
    const { start } = await t.runTool(key, PATH, { keyword: 'hvac' });
    const expected = await expectedRows('hvac');
    const res = await t.request('GET', `/api/downloads/${start.runId}`, { key });
    expect(res.status).toBe(200);
    const records: string[][] = parse(res.text);
    expect(records[0]).toEqual(homeServicesTool.columns.map((c) => c.header));
    expect(records).toHaveLength(expected.length + 1);
    const header = records[0]!;
    expect(records[1]![header.indexOf('service_areas')]).toBe(expected[0]!.service_areas.join('; '));
    expect(records[1]![header.indexOf('licensed')]).toBe(String(expected[0]!.licensed));
  });

  it('normalises case and spaces of the keyword', async () => {
    const { start, rows } = await t.runTool(key, PATH, { keyword: '  Air Duct Cleaning ' });
    expect(await storedInput(start.runId)).toMatchObject({ keyword: 'air-duct-cleaning' });
    expect(rows).toEqual(await expectedRows('air-duct-cleaning'));
  });

  it('accepts every one of the 167 slugs of the spec', async () => {
    expect(HOME_SERVICE_CATEGORIES).toHaveLength(167);
    for (const keyword of HOME_SERVICE_CATEGORIES)
      expect(homeServicesTool.input.safeParse({ keyword }).success, keyword).toBe(true);
  });
});

describe('home services: ZIP codes', () => {
  it('returns only pros serving any of the ZIP codes, says which ones matched, and each pro once', async () => {
    const [pro] = await t.app.core
      .sql`select service_zips from home_service_pro where category = 'roofing' order by id limit 1`;
    const served: string[] = pro!.service_zips;
    const zipCodes = [served[0]!, served.at(-1)!, '00000'];
    const expected = await expectedRows('roofing', [...new Set(zipCodes)]);
    expect(expected.length).toBeGreaterThan(0);

    const { start, status, rows } = await t.runTool(key, PATH, {
      keyword: 'roofing',
      zipCodes: [...zipCodes, `${served[0]}-1234`],
    });
    expect(start.message).toMatch(/^Searching "roofing" pros serving any of \d ZIP codes, up to 100 listings$/);
    expect(status.status).toBe('SUCCEEDED');
    expect(rows).toEqual(expected);
    expect(rows[0].matched_zip_codes.length).toBeGreaterThan(0);
    for (const row of rows) for (const zip of row.matched_zip_codes) expect(row.service_areas).toContain(zip);
    // ZIP+4 is cut to 5 digits and repeats are dropped.
    expect((await storedInput(start.runId)).zipCodes).toEqual([...new Set(zipCodes)]);
  });

  it('finds nothing, and bills nothing, for a ZIP code no pro serves', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, { keyword: 'roofing', zipCodes: ['00000'] });
    expect(start.message).toBe('Searching "roofing" pros serving ZIP 00000, up to 100 listings');
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 0, statusMessage: 'Finished: 0 listings' });
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(0n);
  });
});

describe('home services: maxItems', () => {
  const bulk = 450;

  beforeAll(async () => {
    // Enough welders to span several pages of the runner.
    await t.app.core.sql`
      insert into home_service_pro (profile_url, name, category, grade, city, state, zip, hours, licensed, insured, years_in_business, service_zips, rating, review_count)
      select 'https://www.homepros.net/welding/extra-' || g, 'Extra Welding ' || g, 'welding', 'B', 'Denver', 'CO', '80202',
             array['Monday: 8 AM–5 PM'], g % 2 = 0, true, g % 30, array['80202', '80203'], 4.5, g
      from generate_series(1, ${bulk}) g`;
  });

  it('stops at maxItems across pages, keeping catalog order, and bills only what it returned', async () => {
    const expected = await expectedRows('welding', [], 250);
    const { start, status, rows } = await t.runTool(key, PATH, { keyword: 'welding', maxItems: 250 });
    expect(start.estimatedCost).toBe(2.475);
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 250, requested: 250 });
    expect(rows).toEqual(expected);
    expect(await charged(start.runId)).toBe(250n * PRICE_MICROS);
  });

  it('returns every listing with maxItems 0', async () => {
    const expected = await expectedRows('welding');
    expect(expected.length).toBeGreaterThan(bulk);
    const { start, status, rows } = await t.runTool(key, PATH, { keyword: 'welding', maxItems: 0 });
    expect(start.message).toBe('Searching "welding" pros nationwide, every listing');
    // 100,000 listings would cost 990 USD; the wallet holds less, so that is what is held.
    expect(start.uncappedCost).toBe(990);
    expect(start.estimatedCost).toBeLessThan(990);
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: expected.length, requested: 100_000 });
    expect(rows).toEqual(expected);
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
  });

  it('returns the same rows for the same request (deterministic)', async () => {
    const first = await t.runTool(key, PATH, { keyword: 'welding', zipCodes: ['80203'], maxItems: 30 });
    const second = await t.runTool(key, PATH, { keyword: 'welding', zipCodes: ['80203'], maxItems: 30 });
    expect(first.rows).toHaveLength(30);
    expect(second.rows).toEqual(first.rows);
    expect(first.rows).toEqual(await expectedRows('welding', ['80203'], 30));
  });
});

describe('home services: refusals', () => {
  it('is cancellable: cancelling a finished run answers run_finished, not not_cancellable', async () => {
    const { start } = await t.runTool(key, PATH, { keyword: 'plumbing', maxItems: 1 });
    const res = await t.request('POST', `/api/v1/scrape/cancel/${start.runId}`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_finished');
  });

  it('refuses an unknown keyword naming the field and suggesting the closest slug', async () => {
    const res = await t.request('POST', PATH, { key, body: { keyword: 'plumber' } });
    expectValidationError(res, 'keyword', /"plumber" is not one of the 167 category slugs; did you mean "plumbing"\?/);
    expect(res.body.error.message).toMatch(/^keyword: /);
    const painting = await t.request('POST', PATH, { key, body: { keyword: 'painting' } });
    expectValidationError(painting, 'keyword', /did you mean "interior-painting" or "exterior-painting"\?/);
    const typo = await t.request('POST', PATH, { key, body: { keyword: 'locksmith' } });
    expectValidationError(typo, 'keyword', /did you mean "locksmiths"\?/);
    const nothingClose = await t.request('POST', PATH, { key, body: { keyword: 'qqqqqqqq' } });
    expectValidationError(nothingClose, 'keyword', /not one of the 167 category slugs \(the list is in docs\/tools.md/);
  });

  it('refuses a missing or empty keyword', async () => {
    expectValidationError(await t.request('POST', PATH, { key, body: {} }), 'keyword', /required/);
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: '  ' } }),
      'keyword',
      /must not be empty/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 42 } }),
      'keyword',
      /must be a category slug as a string/,
    );
  });

  it('refuses ZIP codes that are not 5 digits, or numbers', async () => {
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 'hvac', zipCodes: ['8020'] } }),
      'zipCodes.0',
      /5-digit ZIP code/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 'hvac', zipCodes: ['80202', 80203] } }),
      'zipCodes.1',
      /as a string/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 'hvac', zipCodes: '80202' } }),
      'zipCodes',
      /list of ZIP codes/,
    );
  });

  it('refuses a negative, fractional or too large maxItems', async () => {
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 'hvac', maxItems: -1 } }),
      'maxItems',
      /0 \(unlimited\) or more/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 'hvac', maxItems: 2.5 } }),
      'maxItems',
      /whole number/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { keyword: 'hvac', maxItems: 100_001 } }),
      'maxItems',
      /at most 100000/,
    );
  });

  it('answers 402 when the wallet cannot pay for one listing, and stops when the hold is used up', async () => {
    const empty = await t.account({ creditsMicros: 0n });
    const refused = await t.request('POST', PATH, { key: empty.apiKey, body: { keyword: 'plumbing' } });
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_funds');

    const small = await t.account({ creditsMicros: 20_000n }); // pays for 2 listings
    const { start, status, rows } = await t.runTool(small.apiKey, PATH, { keyword: 'welding' });
    expect(status.status).toBe('SUCCEEDED');
    expect(status.statusMessage).toMatch(/^Stopped after 2 listings: the 0\.02 USD held for this run is used up/);
    expect(rows).toEqual(await expectedRows('welding', [], 2));
    expect(await charged(start.runId)).toBe(2n * PRICE_MICROS);
    expect(await t.walletMicros(small.accountId)).toBe(20_000n - 2n * PRICE_MICROS);
  });
});

describe('home services over GraphQL', () => {
  it('startHomeServicesScrape starts the same run', async () => {
    const Start = graphql(`
      mutation HomeServicesStart {
        startHomeServicesScrape(input: { keyword: "Garage Doors", zipCodes: [], maxItems: 2 }) { run { id status } message estimatedCost }
      }
    `);
    const res = await t.graphql(key, Start);
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data!.startHomeServicesScrape;
    expect(started).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Searching "garage-doors" pros nationwide, up to 2 listings',
      estimatedCost: '0.0198',
    });
    const finished = await t.waitForRun(key, started.run!.id);
    expect(finished).toMatchObject({ status: 'SUCCEEDED', handled: 2 });
    const rows = await t.request('GET', `/api/downloads/${started.run!.id}?format=json`, { key });
    expect(rows.body).toEqual(await expectedRows('garage-doors', [], 2));
  });

  it('refuses a bad keyword with VALIDATION_FAILED', async () => {
    const Start = graphql(
      `mutation HomeServicesMisspelled { startHomeServicesScrape(input: { keyword: "plumbr" }) { run { id } userErrors { code field message } } }`,
    );
    const res = await t.graphql(key, Start);
    expect(res.body.data!.startHomeServicesScrape).toEqual({
      run: null,
      userErrors: [
        {
          code: 'VALIDATION_FAILED',
          field: ['input', 'keyword'],
          message: expect.stringContaining('did you mean "plumbing"'),
        },
      ],
    });
  });
});
