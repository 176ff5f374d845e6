import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { addressKey } from '../../db/tables/properties.ts';
import { peopleFinderTool } from '../../src/tools/people-finder.ts';
import { appWithAccount, type ErrorBody, type TestApp } from '../helpers/app.ts';
import { chargedMicros } from '../helpers/runs.ts';
import { graphql } from '../helpers/gql/index.ts';

const PATH = '/api/v1/scrape/people-finder';
const PRICE = peopleFinderTool.price.unitMicros;

let t: TestApp;
let key: string;
let employer: string;

const MAILING = '77 Fixture Ln, Denver, CO 80210';

/** Properties for the rules: a family at one mailing address, an absentee owner, an LLC, middle names. */
const PROPERTIES = [
  {
    id: 9_000_001,
    street: '77 Fixture Ln',
    city: 'Denver',
    state: 'CO',
    zip: '80210',
    owner: 'Quentin Zabriskie',
    mailing: MAILING,
    phones: ['+1 303-555-0101'],
    emails: ['quentin.z@example.net'],
  },
  {
    id: 9_000_002,
    street: '900 Rental Ave',
    city: 'Austin',
    state: 'TX',
    zip: '78702',
    owner: 'Quentin Zabriskie',
    mailing: MAILING,
    phones: ['+1 303-555-0101', '+1 512-555-0102'],
    emails: ['QZ.Rentals@example.net'],
  },
  {
    id: 9_000_003,
    street: '12 Other Rd',
    city: 'Denver',
    state: 'CO',
    zip: '80211',
    owner: 'Ramona Zabriskie',
    mailing: MAILING,
    phones: ['+1 303-555-0103'],
    emails: [],
  },
  {
    id: 9_000_004,
    street: '5 Vault St',
    city: 'Denver',
    state: 'CO',
    zip: '80212',
    owner: 'Zabriskie Holdings LLC',
    mailing: MAILING,
    phones: ['+1 303-555-0104'],
    emails: [],
  },
  {
    id: 9_000_005,
    street: '31 N Elm St',
    city: 'Boulder',
    state: 'CO',
    zip: '80301',
    owner: 'Ulysses K Vandermeer',
    mailing: '31 N Elm St, Boulder, CO 80301',
    phones: [],
    emails: [],
  },
  {
    id: 9_000_006,
    street: '44 Birch Rd',
    city: 'Boulder',
    state: 'CO',
    zip: '80302',
    owner: 'Ulysses Vandermeer',
    mailing: '44 Birch Rd, Boulder, CO 80302',
    phones: [],
    emails: [],
  },
  {
    id: 9_000_007,
    street: '8 Quay Rd',
    city: 'Miami',
    state: 'FL',
    zip: '33101',
    owner: 'Quentin Zabriskie',
    mailing: '8 Quay Rd, Miami, FL 33101',
    phones: ['+1 305-555-0107'],
    emails: [],
  },
];

const QUENTIN = {
  person_id: 'owner-9000001',
  name: 'Quentin Zabriskie',
  first_name: 'Quentin',
  middle_name: null,
  last_name: 'Zabriskie',
  address: MAILING,
  street: '77 Fixture Ln',
  city: 'Denver',
  state: 'CO',
  zip: '80210',
  phones: ['+1 303-555-0101', '+1 512-555-0102'],
  emails: ['quentin.z@example.net', 'QZ.Rentals@example.net'],
  addresses: [MAILING, '900 Rental Ave, Austin, TX 78702'],
  owned_properties: [MAILING, '900 Rental Ave, Austin, TX 78702'],
  relatives: ['Ramona Zabriskie'],
  employer: null,
  job_title: null,
  source: 'property_records',
};

const charged = (runId: string) => chargedMicros(t.app.core.sql, runId);
const ids = (rows: { person_id: string }[]) => rows.map((r) => r.person_id);

/** An account whose users acknowledged the permissible use of the tools about individuals. */
async function account(input?: Parameters<TestApp['account']>[0]) {
  const created = await t.account(input);
  const acknowledged = await t.request('POST', '/api/v1/permissible-use', { key: created.apiKey });
  expect(acknowledged.status, acknowledged.text).toBe(200);
  return created;
}

beforeAll(async () => {
  ({ t, key } = await appWithAccount());
  expect((await t.request('POST', '/api/v1/permissible-use', { key })).status).toBe(200);
  const sql = t.app.core.sql;
  for (const p of PROPERTIES) {
    await sql`
      insert into property (id, address_key, street, city, state, zip, owner_name, owner_mailing_address, owner_phones, owner_emails)
      values (${p.id}, ${addressKey([p.street, p.city, p.state, p.zip])}, ${p.street}, ${p.city}, ${p.state}, ${p.zip}, ${p.owner}, ${p.mailing}, ${p.phones}::text[], ${p.emails}::text[])`;
  }
  await sql`
    insert into person (id, company_id, first_name, last_name, title, email, mobile, city, state, country)
    values
      (9000001, null, 'Quentin', 'Zabriskie', 'Consultant', 'quentin.z@example.net', null, 'Denver', 'CO', 'United States'),
      (9000002, 1, 'Quentin', 'Zabriskie', 'CFO', 'qzabriskie@widgets.test', '+1 720-555-0199', 'Denver', 'CO', 'United States')`;
  employer = (await sql`select name from company where id = 1`)[0]!.name;
});
afterAll(() => t?.stop());

describe('people finder: happy path', () => {
  it('finds owners and lead database people by name and state, with phones, emails, addresses and relatives, billing each', async () => {
    const { start, status, rows } = await t.runTool(key, PATH, { name: 'quentin zabriskie', state: 'colorado' });
    expect(start).toEqual({
      runId: expect.any(String),
      status: 'RUNNING',
      message: expect.stringContaining('name "Quentin Zabriskie", in CO'),
      estimatedCost: 0.199,
      search: { name: 'Quentin Zabriskie', state: 'CO' },
    });
    expect(status).toMatchObject({
      status: 'SUCCEEDED',
      handled: 2,
      requested: 10,
      statusMessage: 'Finished: 2 persons',
    });
    // The first lead database Quentin shares an email with the owner: the same person, not repeated.
    expect(rows).toEqual([
      QUENTIN,
      {
        person_id: 'lead-9000002',
        name: 'Quentin Zabriskie',
        first_name: 'Quentin',
        middle_name: null,
        last_name: 'Zabriskie',
        address: 'Denver, CO',
        street: null,
        city: 'Denver',
        state: 'CO',
        zip: null,
        phones: ['+1 720-555-0199'],
        emails: ['qzabriskie@widgets.test'],
        addresses: ['Denver, CO'],
        owned_properties: [],
        relatives: [],
        employer,
        job_title: 'CFO',
        source: 'lead_database',
      },
    ]);
    expect(Object.keys(rows[0])).toEqual(peopleFinderTool.columns.map((c) => c.key));
    expect(await charged(start.runId)).toBe(2n * PRICE);
  });

  it('downloads CSV with lists joined by "; "', async () => {
    const { start } = await t.runTool(key, PATH, { name: 'Quentin Zabriskie', state: 'CO', maxResults: 1 });
    const records: string[][] = parse((await t.request('GET', `/api/downloads/${start.runId}`, { key })).text);
    expect(records[0]).toEqual(peopleFinderTool.columns.map((c) => c.header));
    expect(records).toHaveLength(2);
    const row = Object.fromEntries(records[0]!.map((h, i) => [h, records[1]![i]]));
    expect(row).toMatchObject({
      person_id: 'owner-9000001',
      phones: '+1 303-555-0101; +1 512-555-0102',
      relatives: 'Ramona Zabriskie',
    });
  });

  it('starts through GraphQL', async () => {
    const Start = graphql(`
      mutation PeopleFinderStart($input: StartPeopleFinderInput!) {
        startPeopleFinder(input: $input) { run { id status } message estimatedCost search { name phone email } }
      }
    `);
    const res = await t.graphql(key, Start, { input: { phone: '(303) 555-0101' } });
    expect(res.body.errors).toBeUndefined();
    const payload = res.body.data!.startPeopleFinder;
    expect(payload.run!.status).toBe('RUNNING');
    expect(payload).toMatchObject({ estimatedCost: '0.199', search: { name: null, phone: '3035550101', email: null } });
    expect((await t.waitForRun(key, payload.run!.id)).status).toBe('SUCCEEDED');
    const rows = (await t.request('GET', `/api/downloads/${payload.run!.id}?format=json`, { key })).body;
    expect(rows).toEqual([QUENTIN]);
  });
});

describe('people finder: matching', () => {
  it('matches the state of an owned property as well as of the mailing address', async () => {
    const { rows } = await t.runTool(key, PATH, { name: 'Quentin Zabriskie', state: 'TX' });
    expect(ids(rows)).toEqual(['owner-9000001']);
  });

  it('searches property owners only when a ZIP code or street is given', async () => {
    const [miami, denver] = await Promise.all([
      t.runTool(key, PATH, { name: 'Quentin Zabriskie', zip: '33101-1234' }),
      t.runTool(key, PATH, { name: 'Quentin Zabriskie', address: '77 Fixture Ln, Denver, CO 80210' }),
    ]);
    expect(miami.rows).toHaveLength(1);
    expect(miami.rows[0]).toMatchObject({
      person_id: 'owner-9000007',
      address: '8 Quay Rd, Miami, FL 33101',
      phones: ['+1 305-555-0107'],
      relatives: [],
    });
    expect(ids(denver.rows)).toEqual(['owner-9000001']);
  });

  it('finds who owns or lives at an address, with street types in full, leaving out companies', async () => {
    const { start, rows } = await t.runTool(key, PATH, { address: '77 Fixture Lane, Denver, Colorado' });
    expect(start.search).toEqual({ street: '77 fixture lane', city: 'Denver', state: 'CO' });
    expect(ids(rows)).toEqual(['owner-9000001', 'owner-9000003']);
    expect(rows[1]).toMatchObject({
      name: 'Ramona Zabriskie',
      address: MAILING,
      owned_properties: ['12 Other Rd, Denver, CO 80211'],
      relatives: ['Quentin Zabriskie'],
    });
    const north = await t.runTool(key, PATH, { address: '31 North Elm Street', zip: '80301' });
    expect(ids(north.rows)).toEqual(['owner-9000005']);
  });

  it('narrows by a middle name or initial and reads "Last, First"', async () => {
    const [kane, lee, comma] = await Promise.all([
      t.runTool(key, PATH, { name: 'Ulysses Kane Vandermeer', state: 'CO' }),
      t.runTool(key, PATH, { name: 'Ulysses Lee Vandermeer', state: 'CO' }),
      t.runTool(key, PATH, { name: 'Vandermeer, Ulysses', city: 'boulder', state: 'co' }),
    ]);
    expect(ids(kane.rows)).toEqual(['owner-9000005', 'owner-9000006']);
    expect(kane.rows[0]).toMatchObject({ first_name: 'Ulysses', middle_name: 'K', last_name: 'Vandermeer' });
    expect(ids(lee.rows)).toEqual(['owner-9000006']);
    expect(ids(comma.rows)).toEqual(['owner-9000005', 'owner-9000006']);
  });

  it('finds by phone in any format and by email ignoring case, across both sources', async () => {
    const [ownerPhone, leadMobile, ownerEmail] = await Promise.all([
      t.runTool(key, PATH, { phone: '+1 (512) 555-0102' }),
      t.runTool(key, PATH, { phone: '17205550199' }),
      t.runTool(key, PATH, { email: ' qz.rentals@EXAMPLE.net ' }),
    ]);
    expect(ownerPhone.rows).toEqual([QUENTIN]);
    expect(ids(leadMobile.rows)).toEqual(['lead-9000002']);
    expect(ownerEmail.rows).toEqual([QUENTIN]);
  });

  it('returns for a seeded owner name and state exactly the persons the tables hold', async () => {
    const sql = t.app.core.sql;
    const [pick] = await sql`
      select owner_name, state from property
      where id < 9000000 and owner_name !~* 'llc' and owner_name ~ '^[A-Za-z]+ [A-Za-z]+$'
      group by owner_name, state order by count(*) desc, owner_name, state limit 1`;
    const [first, last] = (pick!.owner_name as string).split(' ') as [string, string];
    const owners = await sql`
      with matched as (
        select distinct owner_name, coalesce(owner_mailing_address, '') as mailing from property
        where owner_name = ${pick!.owner_name} and (state = ${pick!.state} or owner_mailing_address ~ ${`, ${pick!.state} \\d{5}$`}))
      select 'owner-' || min(p.id) as id from property p join matched m on m.owner_name = p.owner_name and m.mailing = coalesce(p.owner_mailing_address, '')
      group by p.owner_name, m.mailing order by min(p.id)`;
    const leads = await sql`
      select 'lead-' || id as id from person where first_name = ${first} and last_name = ${last} and state = ${pick!.state} and country = 'United States' order by id`;
    const want = [...owners, ...leads].map((r) => r.id).slice(0, 100);
    const { rows, start } = await t.runTool(key, PATH, { name: pick!.owner_name, state: pick!.state, maxResults: 100 });
    expect(want.length).toBeGreaterThanOrEqual(1);
    expect(ids(rows)).toEqual(want);
    expect(await charged(start.runId)).toBe(BigInt(want.length) * PRICE);
  });

  it('finds a seeded lead database person by email with employer and title', async () => {
    const [p] = await t.app.core.sql`
      select p.id, p.email, p.title, p.mobile, c.name as employer from person p join company c on c.id = p.company_id
      where p.email is not null and p.mobile is not null order by p.id limit 1`;
    const { rows } = await t.runTool(key, PATH, { email: p!.email.toUpperCase() });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      person_id: `lead-${p!.id}`,
      emails: [p!.email],
      phones: [p!.mobile],
      employer: p!.employer,
      job_title: p!.title,
      source: 'lead_database',
    });
  });
});

describe('people finder: billing', () => {
  it('bills a search with no match as one result', async () => {
    const { accountId, apiKey } = await account();
    const before = await t.walletMicros(accountId);
    const { start, status, rows } = await t.runTool(apiKey, PATH, { name: 'Nobody Nowhereman', state: 'CO' });
    expect(status.status).toBe('SUCCEEDED');
    expect(rows).toEqual([]);
    expect(await charged(start.runId)).toBe(PRICE);
    expect(before - (await t.walletMicros(accountId))).toBe(PRICE);
  });

  it('stops at maxResults and bills only what it returns', async () => {
    const { accountId, apiKey } = await account();
    const before = await t.walletMicros(accountId);
    const { start, status, rows } = await t.runTool(apiKey, PATH, {
      name: 'Quentin Zabriskie',
      state: 'CO',
      maxResults: 1,
    });
    expect(start.estimatedCost).toBe(0.0199);
    expect(status).toMatchObject({ handled: 1, requested: 1 });
    expect(ids(rows)).toEqual(['owner-9000001']);
    expect(before - (await t.walletMicros(accountId))).toBe(PRICE);
  });

  it('refuses to start when the wallet cannot pay for one result', async () => {
    const { apiKey } = await account({ creditsMicros: 19_899n });
    const res = await t.request('POST', PATH, { key: apiKey, body: { phone: '303-555-0101' } });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('insufficient_funds');
  });
});

describe('people finder: refusals', () => {
  it.each([
    [{}, ''],
    [{ name: 'John Smith' }, 'state'],
    [{ name: 'John Smith', city: 'Denver' }, 'city'],
    [{ name: 'Cher', state: 'CO' }, 'name'],
    [{ address: 'Main Street, Denver, CO' }, 'address'],
    [{ address: '12 Main St' }, 'address'],
    [{ name: 'John Smith', state: 'Narnia' }, 'state'],
    [{ name: 'John Smith', zip: '8020' }, 'zip'],
    [{ phone: '555-0101' }, 'phone'],
    [{ phone: 'call me' }, 'phone'],
    [{ email: 'not-an-email' }, 'email'],
    [{ phone: '303-555-0101', maxResults: 0 }, 'maxResults'],
    [{ phone: '303-555-0101', maxResults: 101 }, 'maxResults'],
  ])('refuses %j naming "%s"', async (body, path) => {
    const res = await t.request<ErrorBody>('POST', PATH, { key, body });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('validation_failed');
    expect(res.body.error.details?.map((d) => d.path)).toEqual([path]);
  });
});
