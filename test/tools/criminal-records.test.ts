import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { criminalRecordsTool, SOURCE_NAMES } from '../../src/tools/criminal-records.ts';
import type { Sql } from '../../db/client.ts';
import { US_STATES } from '../../src/shared/geo.ts';
import { appWithAccount, type ErrorBody, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/criminal-records';
const COLUMNS = criminalRecordsTool.columns.map((c) => c.key);
const PRICE_MICROS = criminalRecordsTool.price.unitMicros;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

let t: TestApp;
let key: string;
let accountId: string;

/** A name the seeded catalog holds in at least two states. */
let spread: { first: string; last: string; states: string[] };
/** A seeded record with a date of birth, and how many records share its name. */
let dated: { first: string; last: string; dob: string; sameName: number };

interface RecordRow {
  id: number;
  record_key: string;
  first_name: string;
  middle_name: string | null;
  last_name: string;
  dob: string | null;
  state: string;
  county: string | null;
  source: string;
  case_number: string | null;
  offense: string;
  offense_date: string | null;
  disposition: string | null;
}

/** The rows a search should return, read straight from the table. */
async function expected(where: (sql: Sql) => postgres.Fragment) {
  const sql = t.app.core.sql;
  const records = await sql<RecordRow[]>`
    select id::int, record_key, first_name, middle_name, last_name, to_char(date_of_birth, 'YYYY-MM-DD') as dob, state, county, source,
           case_number, offense, to_char(offense_date, 'YYYY-MM-DD') as offense_date, disposition
    from criminal_record where ${where(sql)} order by id`;
  return records.map((r) => ({
    name: [r.first_name, r.middle_name, r.last_name].filter(Boolean).join(' '),
    first_name: r.first_name,
    middle_name: r.middle_name,
    last_name: r.last_name,
    dob: r.dob,
    state: r.state,
    county: r.county,
    source: r.source,
    source_name: SOURCE_NAMES[r.source],
    offense: r.offense,
    offense_date: r.offense_date,
    disposition: r.disposition,
    case_number: r.case_number,
    record_id: r.record_key,
  }));
}

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);
const balance = async () =>
  (await t.request('GET', '/api/v1/wallet', { key })).body.wallet.total_balance_dollars as string;

/** An account whose users acknowledged the permissible use of the tools about individuals. */
async function account(input?: Parameters<TestApp['account']>[0]) {
  const created = await t.account(input);
  const acknowledged = await t.request('POST', '/api/v1/permissible-use', { key: created.apiKey });
  expect(acknowledged.status, acknowledged.text).toBe(200);
  return created;
}

beforeAll(async () => {
  ({ t, key, accountId } = await appWithAccount());
  expect((await t.request('POST', '/api/v1/permissible-use', { key })).status).toBe(200);
  const sql = t.app.core.sql;
  const [s] = await sql`
    select min(first_name) as first, min(last_name) as last, array_agg(distinct state order by state) as states
    from criminal_record group by lower(first_name), lower(last_name)
    having count(distinct state) >= 2 order by count(*) desc, lower(last_name), lower(first_name) limit 1`;
  spread = s as typeof spread;
  const [d] = await sql`
    select r.first_name as first, r.last_name as last, to_char(r.date_of_birth, 'YYYY-MM-DD') as dob,
           (select count(*)::int from criminal_record o where lower(o.first_name) = lower(r.first_name) and lower(o.last_name) = lower(r.last_name)) as "sameName"
    from criminal_record r where r.date_of_birth is not null order by r.id limit 1`;
  dated = d as typeof dated;
  // Records for the name rules; ids far above the seeded ones.
  await sql`
    insert into criminal_record (id, record_key, first_name, middle_name, last_name, date_of_birth, state, county, source, case_number, offense, offense_date, disposition)
    values
      (900001, 'court:CO:T-1', 'Zelda', 'Quinn', 'Farnsworth', '1971-07-04', 'CO', 'Adams County', 'court', 'T-1', 'Forgery', '2001-02-03', 'Convicted'),
      (900002, 'arrest:CO:T-2', 'Zelda', null, 'Farnsworth', null, 'CO', 'Adams County', 'arrest', 'T-2', 'DUI', '2005-06-07', 'Dismissed'),
      (900003, 'court:TX:T-3', 'Zelda', 'Rose', 'Farnsworth', '1980-01-02', 'TX', 'Clay County', 'court', 'T-3', 'Vandalism', '2010-11-12', 'Pending'),
      (900004, 'sex_offender_registry:NM:T-4', 'Maria', null, 'De La Cruz', '1966-05-05', 'NM', 'Lincoln County', 'sex_offender_registry', 'T-4', 'Failure to register', '1999-09-09', 'Registered')`;
});
afterAll(() => t?.stop());

describe('criminal records search: happy path', () => {
  it('starts with {runId, name, state, message, note}, returns every record of the name and charges 1.00 USD', async () => {
    const before = await balance();
    const name = `${spread.first} ${spread.last}`;
    const { start, status, rows } = await t.runTool(key, PATH, { name });
    expect(Object.keys(start).sort()).toEqual(['estimatedCost', 'message', 'name', 'note', 'runId', 'state', 'status']);
    expect(start).toMatchObject({ runId: expect.any(String), status: 'RUNNING', name, state: null, estimatedCost: 1 });
    expect(start.message).toContain('in all states');
    expect(start.note).toMatch(/not for employment or tenant screening or any other regulated purpose/i);
    expect(start.note).toContain('FCRA');

    const want = await expected(
      (sql) =>
        sql`lower(first_name) = ${spread.first.toLowerCase()} and lower(last_name) = ${spread.last.toLowerCase()}`,
    );
    expect(want.length).toBeGreaterThanOrEqual(2);
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      handled: 1,
      requested: 1,
      statusMessage: `Finished: ${want.length} records`,
    });
    expect(rows).toEqual(want);
    expect(Object.keys(rows[0])).toEqual(COLUMNS);
    expect(new Set(rows.map((r) => r.state))).toEqual(new Set(spread.states));

    expect(await charged(start.runId)).toBe(PRICE_MICROS);
    expect(Number(before) - Number(await balance())).toBeCloseTo(1, 6);
  });

  it('downloads the records as CSV with a header row of the columns', async () => {
    const { start } = await t.runTool(key, PATH, { name: `${spread.first} ${spread.last}` });
    const csv = await t.request('GET', `/api/downloads/${start.runId}`, { key });
    const records: string[][] = parse(csv.text);
    expect(records[0]).toEqual(criminalRecordsTool.columns.map((c) => c.header));
    const want = await expected(
      (sql) =>
        sql`lower(first_name) = ${spread.first.toLowerCase()} and lower(last_name) = ${spread.last.toLowerCase()}`,
    );
    expect(records.slice(1).map((r) => r[records[0]!.indexOf('record_id')])).toEqual(want.map((w) => w.record_id));
  });

  it('starts through GraphQL with the same start fields in details', async () => {
    const Start = graphql(`
      mutation CriminalRecordsStart($input: StartCriminalRecordsSearchInput!) {
        startCriminalRecordsSearch(input: $input) { run { id status } message estimatedCost name state note }
      }
    `);
    const res = await t.graphql(key, Start, { input: { name: 'Zelda Farnsworth', state: 'colorado' } });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startCriminalRecordsSearch;
    expect(payload.run!.status).toBe('RUNNING');
    expect(payload.estimatedCost).toBe('1.00');
    expect(payload).toMatchObject({
      name: 'Zelda Farnsworth',
      state: 'CO',
      note: expect.stringContaining('tenant screening'),
    });
    expect((await t.waitForRun(key, payload.run!.id)).status).toBe('SUCCEEDED');
    const rows = (
      await t.request<{ record_id: string }[]>('GET', `/api/downloads/${payload.run!.id}?format=json`, { key })
    ).body;
    expect(rows.map((r) => r.record_id)).toEqual(['court:CO:T-1', 'arrest:CO:T-2']);
  });
});

describe('criminal records search: state', () => {
  it('normalises a code or a full name in any case to the abbreviation and returns only that state', async () => {
    const state = spread.states[0]!;
    const want = await expected(
      (sql) =>
        sql`lower(first_name) = ${spread.first.toLowerCase()} and lower(last_name) = ${spread.last.toLowerCase()} and state = ${state}`,
    );
    const fullName = US_STATES[state]!;
    const runs = await Promise.all(
      [state.toLowerCase(), fullName.toUpperCase(), ` ${fullName.toLowerCase()} `].map((s) =>
        t.runTool(key, PATH, { name: `${spread.first} ${spread.last}`, state: s }),
      ),
    );
    for (const { start, rows } of runs) {
      expect(start.state).toBe(state);
      expect(start.message).toContain(`in ${state}`);
      expect(rows).toEqual(want);
    }
  });

  it('refuses a state that is not a US state, naming state', async () => {
    const res = await t.request('POST', PATH, { key, body: { name: 'John Smith', state: 'Ontario' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([{ path: 'state', message: expect.stringContaining('not a US state') }]);
  });
});

describe('criminal records search: date of birth', () => {
  it('reads slash, ISO and long forms alike and returns only exact date-of-birth matches', async () => {
    const [y, m, d] = dated.dob.split('-').map(Number) as [number, number, number];
    const forms = [dated.dob, `${m}/${d}/${y}`, `${MONTHS[m - 1]} ${d}, ${y}`, `${d} ${MONTHS[m - 1]} ${y}`];
    const want = await expected(
      (sql) =>
        sql`lower(first_name) = ${dated.first.toLowerCase()} and lower(last_name) = ${dated.last.toLowerCase()} and date_of_birth = ${dated.dob}`,
    );
    expect(want.length).toBeGreaterThanOrEqual(1);
    const runs = await Promise.all(
      forms.map((dob) => t.runTool(key, PATH, { name: `${dated.first} ${dated.last}`, dob })),
    );
    for (const { start, rows } of runs) {
      expect(rows).toEqual(want);
      expect(start.message).toContain(`born ${dated.dob}`);
      expect(await charged(start.runId)).toBe(PRICE_MICROS);
    }
  });

  it('leaves out records without a date of birth and those born another day, and is free when none remain', async () => {
    const before = await balance();
    const other = await t.runTool(key, PATH, { name: 'Zelda Farnsworth', dob: '1999-12-31' });
    expect(other.status.status).toBe('SUCCEEDED');
    expect(other.rows).toEqual([]);
    expect(await charged(other.start.runId)).toBe(0n);
    expect(await balance()).toBe(before);

    const exact = await t.runTool(key, PATH, { name: 'Zelda Farnsworth', dob: 'July 4th, 1971' });
    expect(exact.rows.map((r) => r.record_id)).toEqual(['court:CO:T-1']);
    expect(exact.rows[0]).toMatchObject({ dob: '1971-07-04', source: 'court', source_name: 'Court records' });
  });

  it.each([
    ['2/30/1980', 'is not a date'],
    ['13/13/1980', 'is not a date'],
    ['3/5/80', 'is not a date'],
    ['yesterday', 'is not a date'],
    ['2999-01-01', 'must not be in the future'],
    ['1850-01-01', 'must be 1900 or later'],
  ])('refuses dob %s naming dob', async (dob, message) => {
    const res = await t.request('POST', PATH, { key, body: { name: 'John Smith', dob } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details).toEqual([{ path: 'dob', message: expect.stringContaining(message) }]);
  });
});

describe('criminal records search: names', () => {
  it('matches ignoring case, in "Last, First" order, with periods and a suffix', async () => {
    const want = ['court:CO:T-1', 'arrest:CO:T-2', 'court:TX:T-3'];
    const runs = await Promise.all(
      ['zELDA farnsWORTH', 'Farnsworth, Zelda', 'Zelda Farnsworth Jr.'].map((name) => t.runTool(key, PATH, { name })),
    );
    for (const { rows } of runs) expect(rows.map((r) => r.record_id)).toEqual(want);
  });

  it('narrows by a middle name or initial, keeping records without a middle name', async () => {
    const [full, initial, other] = await Promise.all(
      ['Zelda Quinn Farnsworth', 'Zelda Q. Farnsworth', 'Zelda Mae Farnsworth'].map((name) =>
        t.runTool(key, PATH, { name }),
      ),
    );
    expect(full!.rows.map((r) => r.record_id)).toEqual(['court:CO:T-1', 'arrest:CO:T-2']);
    expect(initial!.rows.map((r) => r.record_id)).toEqual(['court:CO:T-1', 'arrest:CO:T-2']);
    expect(other!.rows.map((r) => r.record_id)).toEqual(['arrest:CO:T-2']);
    expect(full!.rows[0]).toMatchObject({ name: 'Zelda Quinn Farnsworth', middle_name: 'Quinn' });
  });

  it('finds a compound last name written "Last, First"; without the comma the last word is the last name', async () => {
    const comma = await t.runTool(key, PATH, { name: 'De La Cruz, Maria' });
    expect(comma.rows).toEqual(await expected((sql) => sql`id = 900004`));
    expect(comma.rows[0]).toMatchObject({
      source: 'sex_offender_registry',
      source_name: 'Sex offender registry',
      disposition: 'Registered',
    });
    const plain = await t.runTool(key, PATH, { name: 'Maria De La Cruz' });
    expect(plain.rows).toEqual([]);
    expect(await charged(plain.start.runId)).toBe(0n);
  });

  it.each([
    [{}, 'name'],
    [{ name: '' }, 'name'],
    [{ name: 'Cher' }, 'name'],
    [{ name: 42 }, 'name'],
    [{ name: `${'x'.repeat(201)} y` }, 'name'],
  ])('refuses %j naming name', async (body, path) => {
    const res = await t.request<ErrorBody>('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details?.map((d) => d.path)).toEqual([path]);
  });
});

describe('criminal records search: billing', () => {
  it('is free when nothing is found', async () => {
    const before = await balance();
    const { start, status, rows } = await t.runTool(key, PATH, { name: 'Nobody Nowhereman' });
    expect(status).toMatchObject({ status: 'SUCCEEDED', handled: 1 });
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(0n);
    expect(await balance()).toBe(before);
  });

  it('needs 1.00 USD in the wallet to start (402 below it)', async () => {
    const poor = await account({ creditsMicros: 999_999n });
    const res = await t.request('POST', PATH, { key: poor.apiKey, body: { name: 'Zelda Farnsworth' } });
    expect(res.status).toBe(402);
    expect(res.body.error).toMatchObject({
      code: 'insufficient_funds',
      message: expect.stringContaining('one search (1.00 USD)'),
    });
    const enough = await account({ creditsMicros: PRICE_MICROS });
    const { start, rows } = await t.runTool(enough.apiKey, PATH, { name: 'Zelda Farnsworth' });
    expect(rows).toHaveLength(3);
    expect(await charged(start.runId)).toBe(PRICE_MICROS);
    expect((await t.request('GET', '/api/v1/wallet', { key: enough.apiKey })).body.wallet.total_balance_dollars).toBe(
      '0.00',
    );
  });

  it('charges one search however many records it returns', async () => {
    const [row] = await t.app.core
      .sql`select count(*)::int as n, coalesce(sum(charged_micros), 0)::bigint as c from run where account_id = ${accountId} and status = 'SUCCEEDED' and item_count > 0`;
    expect(BigInt(row!.c)).toBe(BigInt(row!.n) * PRICE_MICROS);
  });
});

describe('criminal records search: permissible use', () => {
  it('is refused on every face until someone in the account acknowledges the notice, recorded once', async () => {
    const fresh = await t.account({ creditsMicros: 5_000_000n }, { acknowledged: false });
    const body = { name: 'Zelda Farnsworth', state: 'CO' };
    const rest = await t.request<ErrorBody>('POST', '/api/v1/scrape/criminal-records', { key: fresh.apiKey, body });
    expect(rest.status).toBe(403);
    expect(rest.body.error.code).toBe('permissible_use_required');
    expect(rest.body.error.message).toContain('tenant screening');
    expect(rest.body.error.message).toContain('POST /api/v1/permissible-use');

    const Start = graphql(`
      mutation CriminalRecordsRefused($input: StartCriminalRecordsSearchInput!) {
        startCriminalRecordsSearch(input: $input) { run { id } userErrors { code message } }
      }
    `);
    const refused = (await t.graphql(fresh.apiKey, Start, { input: body })).body.data!.startCriminalRecordsSearch;
    expect(refused.run).toBeNull();
    expect(refused.userErrors[0]?.code).toBe('PERMISSIBLE_USE_REQUIRED');
    expect(refused.userErrors[0]?.message).toContain('acknowledgePermissibleUse');
    expect(refused.userErrors[0]?.message).not.toMatch(/\/api\/|POST|403/);

    const mcp = new Client({ name: 'permissible-use-test', version: '1.0.0' });
    await mcp.connect(
      new StreamableHTTPClientTransport(new URL(`${t.url}/mcp?tools=all`), {
        requestInit: { headers: { authorization: `Bearer ${fresh.apiKey}` } },
      }),
    );
    try {
      const answer = await mcp.callTool({ name: 'search_criminal_records', arguments: body });
      expect(answer.isError).toBe(true);
      const text = JSON.stringify(answer.content);
      expect(text).toContain('acknowledge_permissible_use');
      expect(text).not.toMatch(/\/api\/|POST|403/);

      expect((await t.request('GET', '/api/v1/permissible-use', { key: fresh.apiKey })).body).toMatchObject({
        acknowledged: false,
        acknowledgedAt: null,
        notice: expect.stringContaining('Fair Credit Reporting Act'),
      });
      const acknowledged = await mcp.callTool({ name: 'acknowledge_permissible_use', arguments: {} });
      expect(acknowledged.isError).toBeFalsy();
    } finally {
      await mcp.close();
    }
    const Acknowledge = graphql(`
      mutation CriminalRecordsAcknowledge {
        acknowledgePermissibleUse { permissibleUse { acknowledged acknowledgedAt } userErrors { code } }
      }
    `);
    const again = (await t.graphql(fresh.apiKey, Acknowledge)).body.data!.acknowledgePermissibleUse;
    expect(again.userErrors).toEqual([]);
    expect(again.permissibleUse).toMatchObject({ acknowledged: true, acknowledgedAt: expect.any(String) });
    const events = await t.app.core.sql`select actor_type, details from audit_event
      where account_id = ${fresh.accountId} and action = 'account.permissible_use_acknowledged'`;
    expect(events).toEqual([{ actor_type: 'api_key', details: { notice: expect.stringContaining('FCRA') } }]);

    const started = await t.request('POST', '/api/v1/scrape/criminal-records', { key: fresh.apiKey, body });
    expect(started.status, started.text).toBe(200);
  });
});
