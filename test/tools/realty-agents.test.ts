import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { AGENT_SPECIALTIES, LANGUAGES } from '../../db/seed/reference.ts';
import { realtyAgentsTool } from '../../src/tools/realty-agents.ts';
import { appWithAccount, type TestApp } from '../helpers/app.ts';
import { chargedMicros, runColumns } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';
import { expectValidationError } from '../helpers/assertions.ts';

const PATH = '/api/v1/scrape/realty-agents';
const PRICE_MICROS = realtyAgentsTool.price.unitMicros;
const SPECIALTY = new Map(AGENT_SPECIALTIES);

let t: TestApp;
let key: string;

beforeAll(async () => ({ t, key } = await appWithAccount()));
afterAll(() => t?.stop());

interface Filter {
  city?: string;
  state?: string;
  zip?: string;
  specialty?: string;
  language?: string;
}

/** The agents a search should return, read straight from the catalog table, in id order. */
async function expectedRows(filter: Filter, limit: number) {
  const sql = t.app.core.sql;
  const agents = await sql`
    select * from real_estate_agent
    where true
      ${filter.city ? sql`and lower(city) = lower(${filter.city})` : sql``}
      ${filter.state ? sql`and state = ${filter.state}` : sql``}
      ${filter.zip ? sql`and zip = ${filter.zip}` : sql``}
      ${filter.specialty ? sql`and ${filter.specialty} = any(specialties)` : sql``}
      ${filter.language ? sql`and ${filter.language} = any(languages)` : sql``}
    order by id limit ${limit}`;
  return agents.map((a) => ({
    name: a.name,
    brokerage: a.brokerage,
    license_number: a.license_number,
    phone: a.phone,
    email: a.email,
    city: a.city,
    state: a.state,
    zip: a.zip,
    specialties: (a.specialties as string[]).map((code) => SPECIALTY.get(code)),
    specialty_codes: a.specialties,
    languages: a.languages,
    years_experience: a.years_experience,
    rating: a.rating,
    review_count: a.review_count,
    sales_last_12_months: a.sales_last_12_months,
    price_range_min: a.price_range_min === null ? null : Number(a.price_range_min),
    price_range_max: a.price_range_max === null ? null : Number(a.price_range_max),
    profile_url: a.profile_url,
  }));
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);
/** The run's input as stored (after defaults and caps). */
const storedInput = async (runId: string) => (await runColumns(t.app.core.sql, runId, ['input'])).input;

describe('real estate agents: a city search', () => {
  it('answers with the spec start shape, returns 10 agents by default with every column, and bills 0.029 per agent', async () => {
    const { accountId, apiKey } = await t.account();
    const before = await t.walletMicros(accountId);
    const expected = await expectedRows({ city: 'Denver', state: 'CO' }, 10);
    expect(expected).toHaveLength(10);

    const { start, status, rows } = await t.runTool(apiKey, PATH, { location: 'Denver, CO' });
    expect(start).toEqual({
      runId: expect.stringMatching(/^[A-Za-z0-9]{17}$/),
      status: 'RUNNING',
      message: 'Searching agents in Denver, CO, up to 10 agents',
      estimatedCost: 0.29,
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      handled: 10,
      requested: 10,
      statusMessage: 'Finished: 10 agents',
    });
    expect(rows).toEqual(expected);
    expect(Object.keys(rows[0])).toEqual(realtyAgentsTool.columns.map((c) => c.key));
    for (const row of rows) {
      expect(row.specialty_codes.some((c: string) => c === '1001' || c === '1002')).toBe(true);
      expect(row.specialties).not.toContain(undefined);
    }

    const run = { input: await storedInput(start.runId), charged: await charged(start.runId) };
    expect(run.input).toEqual({ location: 'Denver, CO', searchLimit: 10 });
    expect(run.charged).toBe(10n * PRICE_MICROS);
    expect(await t.walletMicros(accountId)).toBe(before - 10n * PRICE_MICROS);
  });

  it('reads "City, State", "City ST" and any case the same way', async () => {
    const expected = await expectedRows({ city: 'Salt Lake City', state: 'UT' }, 5);
    for (const location of ['Salt Lake City, Utah', 'salt lake city ut', 'Salt Lake City, UT, USA']) {
      const { start, rows } = await t.runTool(key, PATH, { location, searchLimit: 5 });
      expect(start.message.toLowerCase()).toBe('searching agents in salt lake city, ut, up to 5 agents');
      expect(rows).toEqual(expected);
    }
  });

  it('downloads a CSV with the tool columns, lists joined', async () => {
    const { start, rows } = await t.runTool(key, PATH, { location: 'Austin, TX', searchLimit: 3 });
    const res = await t.request('GET', `/api/downloads/${start.runId}`, { key });
    const records: string[][] = parse(res.text);
    expect(records[0]).toEqual(realtyAgentsTool.columns.map((c) => c.header));
    expect(records).toHaveLength(4);
    expect(records[1]![records[0]!.indexOf('specialties')]).toBe(rows[0].specialties.join('; '));
  });
});

describe('real estate agents: ZIP codes', () => {
  it('returns the agents of a ZIP code and bills only the agents found', async () => {
    const [top] = await t.app.core
      .sql`select zip, count(*)::int as n from real_estate_agent group by zip order by n desc, zip limit 1`;
    const expected = await expectedRows({ zip: top!.zip }, 50);
    expect(expected.length).toBe(top!.n);
    expect(expected.length).toBeLessThan(50);

    const { start, status, rows } = await t.runTool(key, PATH, { location: top!.zip, searchLimit: 50 });
    expect(start.message).toBe(`Searching agents in ZIP ${top!.zip}, up to 50 agents`);
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: expected.length, requested: 50 });
    expect(rows).toEqual(expected);
    expect(await charged(start.runId)).toBe(BigInt(expected.length) * PRICE_MICROS);
  });

  it('lets a ZIP code after the city decide', async () => {
    const [agent] = await t.app.core.sql`select city, state, zip from real_estate_agent order by id limit 1`;
    const { rows } = await t.runTool(key, PATH, {
      location: `${agent!.city}, ${agent!.state} ${agent!.zip}-0001`,
      searchLimit: 20,
    });
    expect(rows).toEqual(await expectedRows({ zip: agent!.zip }, 20));
  });

  it('finds nothing, and bills nothing, where no agent works', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, { location: 'Springfield, IL' });
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 0 });
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(0n);
  });
});

describe('real estate agents: specialty and language', () => {
  it('filters by specialty code and by language in any case', async () => {
    const [pick] = await t.app.core.sql`
      select city, state, lang, count(*)::int as n
      from real_estate_agent, unnest(languages) as lang
      where lang <> 'English' and '1001' = any(specialties)
      group by city, state, lang order by n desc, city, lang limit 1`;
    const filter = { city: pick!.city, state: pick!.state, specialty: '1001', language: pick!.lang };
    const expected = await expectedRows(filter, 100);
    expect(expected.length).toBe(pick!.n);

    const { start, rows } = await t.runTool(key, PATH, {
      location: `${pick!.city}, ${pick!.state}`,
      specialty: '1001',
      language: String(pick!.lang).toUpperCase(),
      searchLimit: 100,
    });
    expect(start.message).toBe(
      `Searching agents in ${pick!.city}, ${pick!.state}, buyer's agent (1001), speaking ${pick!.lang}, up to 100 agents`,
    );
    expect(rows).toEqual(expected);
    for (const row of rows) {
      expect(row.specialty_codes).toContain('1001');
      expect(row.specialties).toContain("Buyer's agent");
      expect(row.languages).toContain(pick!.lang);
    }
    expect(await storedInput(start.runId)).toMatchObject({ specialty: '1001', language: pick!.lang });
  });

  it('accepts a specialty by name and runs it as its code', async () => {
    const expected = await expectedRows({ city: 'Chicago', state: 'IL', specialty: '1002' }, 10);
    expect(expected.length).toBeGreaterThan(0);
    const { start, rows } = await t.runTool(key, PATH, { location: 'Chicago, IL', specialty: 'Listing Agent' });
    expect(await storedInput(start.runId)).toMatchObject({ specialty: '1002' });
    expect(rows).toEqual(expected);
  });

  it('knows 40+ specialty codes and 40+ languages, all of them valid input', () => {
    expect(AGENT_SPECIALTIES.length).toBeGreaterThanOrEqual(42);
    expect(LANGUAGES.length).toBeGreaterThanOrEqual(40);
    for (const [code, name] of AGENT_SPECIALTIES) {
      expect(realtyAgentsTool.input.parse({ location: '80202', specialty: code }).specialty).toBe(code);
      expect(realtyAgentsTool.input.parse({ location: '80202', specialty: name.toLowerCase() }).specialty).toBe(code);
    }
    for (const language of LANGUAGES)
      expect(realtyAgentsTool.input.parse({ location: '80202', language: language.toLowerCase() }).language).toBe(
        language,
      );
  });
});

describe('real estate agents: searchLimit', () => {
  beforeAll(async () => {
    await t.app.core.sql`
      insert into real_estate_agent (profile_url, name, brokerage, city, state, zip, specialties, languages, years_experience, rating, review_count)
      select 'https://www.agentfinder.net/agent/extra-' || g, 'Extra Agent ' || g, 'Extra Realty', 'Boise', 'ID', '83702',
             array['1001', '1007'], array['English', 'Spanish'], g % 30, 4.8, g
      from generate_series(1, 620) g`;
  });

  it('returns at most 500 agents across pages, in catalog order', async () => {
    const expected = await expectedRows({ city: 'Boise', state: 'ID' }, 500);
    const { start, status, rows } = await t.runTool(key, PATH, { location: 'Boise, Idaho', searchLimit: 500 });
    expect(start.estimatedCost).toBe(14.5);
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 500, requested: 500 });
    expect(rows).toHaveLength(500);
    expect(rows).toEqual(expected);
    expect(await charged(start.runId)).toBe(500n * PRICE_MICROS);
  });

  it('stops when the hold is used up, keeping and billing what it found', async () => {
    const small = await t.account({ creditsMicros: 100_000n }); // pays for 3 agents
    const { start, status, rows } = await t.runTool(small.apiKey, PATH, { location: '83702', searchLimit: 20 });
    expect(status.statusMessage).toMatch(/^Stopped after 3 agents: the 0\.10 USD held for this run is used up/);
    expect(rows).toEqual(await expectedRows({ zip: '83702' }, 3));
    expect(await charged(start.runId)).toBe(3n * PRICE_MICROS);
    expect(await t.walletMicros(small.accountId)).toBe(100_000n - 3n * PRICE_MICROS);
  });
});

describe('real estate agents: refusals', () => {
  it('is cancellable: cancelling a finished run answers run_finished, not not_cancellable', async () => {
    const { start } = await t.runTool(key, PATH, { location: 'Denver, CO', searchLimit: 1 });
    const res = await t.request('POST', `/api/v1/scrape/cancel/${start.runId}`, { key });
    expect(res.status).toBe(409);
    expect(res.body.error.code).toBe('run_finished');
  });

  it('refuses a missing location, a city without state and a state alone', async () => {
    expectValidationError(
      await t.request('POST', PATH, { key, body: {} }),
      'location',
      /required: a city and state or a ZIP code/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Denver' } }),
      'location',
      /"Denver" has no state/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Colorado' } }),
      'location',
      /a state alone is too wide/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: '' } }),
      'location',
      /5-digit ZIP code/,
    );
  });

  it('refuses an unknown specialty or language, suggesting the closest', async () => {
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Denver, CO', specialty: '9999' } }),
      'specialty',
      /codes run from 1001 to 1042/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Denver, CO', specialty: 'luxury' } }),
      'specialty',
      /did you mean 1007 \(Luxury homes\)\?/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Denver, CO', specialty: 1001 } }),
      'specialty',
      /must be a string/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Denver, CO', language: 'Spansh' } }),
      'language',
      /did you mean "Spanish"\?/,
    );
    expectValidationError(
      await t.request('POST', PATH, { key, body: { location: 'Denver, CO', language: 'Klingon' } }),
      'language',
      /not one of the 42 languages/,
    );
  });

  it('refuses a searchLimit outside 1 to 500', async () => {
    for (const searchLimit of [0, 501, 2.5, '10']) {
      const res = await t.request('POST', PATH, { key, body: { location: 'Denver, CO', searchLimit } });
      expectValidationError(res, 'searchLimit');
    }
    const [run] = await t.app.core.sql`select count(*)::int as n from run where input->>'searchLimit' in ('0', '501')`;
    expect(run!.n).toBe(0);
  });
});

describe('real estate agents over GraphQL', () => {
  it('startRealtyAgentsScrape starts the same run', async () => {
    const Start = graphql(`
      mutation RealtyAgentsStart {
        startRealtyAgentsScrape(input: { location: "Seattle, WA", specialty: "1002", language: "english", searchLimit: 4 }) { run { id status } message estimatedCost }
      }
    `);
    const res = await t.graphql(key, Start);
    expect(res.body.errors).toBeUndefined();
    const started = res.body.data!.startRealtyAgentsScrape;
    expect(started).toMatchObject({
      run: { status: 'RUNNING' },
      message: 'Searching agents in Seattle, WA, listing agent (1002), speaking English, up to 4 agents',
      estimatedCost: '0.116',
    });
    await t.waitForRun(key, started.run!.id);
    const rows = await t.request('GET', `/api/downloads/${started.run!.id}?format=json`, { key });
    expect(rows.body).toEqual(
      await expectedRows({ city: 'Seattle', state: 'WA', specialty: '1002', language: 'English' }, 4),
    );
  });

  it('refuses a bad location with validation_failed naming the field', async () => {
    const Start = graphql(
      `mutation RealtyAgentsNoState { startRealtyAgentsScrape(input: { location: "Seattle" }) { run { id } userErrors { code field message } } }`,
    );
    const res = await t.graphql(key, Start);
    expect(res.body.data!.startRealtyAgentsScrape.userErrors).toEqual([
      { code: 'VALIDATION_FAILED', field: ['input', 'location'], message: expect.stringContaining('has no state') },
    ]);
  });
});
